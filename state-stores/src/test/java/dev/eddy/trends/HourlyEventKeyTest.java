package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class HourlyEventKeyTest {
    private final Serde<HourlyEventKey> serde = HourlyEventKey.serde();

    @Test
    void roundTripsThroughBytes() {
        final HourlyEventKey key = HourlyEventKey.of(42, Instant.parse("2026-11-22T10:59:59Z"), "$pageview ünïcode");

        final HourlyEventKey back = serde.deserializer().deserialize("t", serde.serializer().serialize("t", key));

        assertThat(back).isEqualTo(key);
        assertThat(back.hourStart()).isEqualTo(Instant.parse("2026-11-22T10:00:00Z"));
    }

    @Test
    void bytesSortByProjectThenNameThenHour() {
        // Names sort by length, then bytes: each name's hours are contiguous, in time order (before 1970 first).
        final List<HourlyEventKey> expected = List.of(
                new HourlyEventKey(1, 500_000, "zeta"),
                new HourlyEventKey(2, -5, "a"),
                new HourlyEventKey(2, 400_001, "a"),
                new HourlyEventKey(2, 400_000, "b"),
                new HourlyEventKey(2, 400_000, "ab"),
                new HourlyEventKey(300, 1, "a"));

        final Bytes[] encoded = expected.stream()
                .map(k -> Bytes.wrap(serde.serializer().serialize("t", k)))
                .toArray(Bytes[]::new);
        final Bytes[] sorted = encoded.clone();
        Arrays.sort(sorted);

        assertThat(sorted).containsExactly(encoded);
    }

    @Test
    void truncatedBytesAreASerializationError() {
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {1, 2, 3}))
                .isInstanceOf(SerializationException.class);
    }

    @Test
    void mergeAddsPartialsOfTheSameHourAndEvent() {
        final Instant h10 = Instant.parse("2026-11-22T10:00:00Z");
        final Instant h11 = Instant.parse("2026-11-22T11:00:00Z");

        final List<HourlyCount> merged = HourlyCountQuery.merge(List.of(
                List.of(new HourlyCount("signup", h10, 2), new HourlyCount("$pageview", h11, 5)),
                List.of(new HourlyCount("signup", h10, 3)),
                List.of()));

        assertThat(merged).containsExactly(
                new HourlyCount("signup", h10, 5),
                new HourlyCount("$pageview", h11, 5));
    }
}
