package dev.eddy.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IsoInstantsTest {

    @Test
    void readsWhatOffsetDateTimeReads() {
        for (final String text : new String[] {"2026-11-22T10:00:00Z", "2026-11-22T10:00:00.1Z", "2026-11-22T10:00:00.123456789Z",
                "2026-11-22T10:00:00.123+01:00", "2026-11-22T00:30:00-05:30", "1970-01-01T00:00:00Z", "2024-02-29T23:59:59.999Z",
                "2026-11-22T10:00Z", "2026-11-22T10:00:00.Z", "+12026-11-22T10:00:00Z"}) {
            assertThat(IsoInstants.parse(text)).as(text).isEqualTo(OffsetDateTime.parse(text).toInstant());
        }
    }

    @Test
    void refusesWhatOffsetDateTimeRefuses() {
        for (final String text : new String[] {"2026-02-30T10:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T10:00:00",
                "2026-11-22T10:00:00+0100", "2026-11-22T10:00:00.1234567891Z", "yesterday", "2026-1l-22T10:00:00Z"}) {
            assertThatThrownBy(() -> IsoInstants.parse(text)).as(text).isInstanceOf(DateTimeParseException.class);
        }
    }

    @Test
    void writesWhatInstantToStringWrites() {
        final SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 10_000; i++) {
            final Instant instant = Instant.ofEpochSecond(random.nextLong(-62_000_000_000L, 250_000_000_000L),
                    switch (i % 4) {
                        case 0 -> 0;
                        case 1 -> random.nextInt(1000) * 1_000_000;
                        case 2 -> random.nextInt(1_000_000) * 1000;
                        default -> random.nextInt(1_000_000_000);
                    });
            assertThat(IsoInstants.format(instant)).isEqualTo(instant.toString());
        }
    }
}
