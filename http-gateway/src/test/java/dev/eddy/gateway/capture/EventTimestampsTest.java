package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** PostHog's event-time rules (plugin-server parseEventTimestamp). */
class EventTimestampsTest {
    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");

    @Test
    void sentAtRemovesTheClientsClockSkew() {
        // Client clock 5 s ahead: sent_at 12:00:05, timestamp 11:59:55 → 10 s before the server's now.
        assertThat(resolve("{\"timestamp\":\"2026-11-22T11:59:55Z\"}", Optional.of(Instant.parse("2026-11-22T12:00:05Z"))))
                .isEqualTo(Instant.parse("2026-11-22T11:59:50Z"));
    }

    @Test
    void aTimeOutsideYearsZeroTo9999IsTheEpoch() {
        // Before, the first two threw DateTimeException and the whole request answered 500, its valid events lost.
        assertThat(resolve("{\"timestamp\":\"2026-11-22T11:59:55Z\",\"sent_at\":\"-999999999-01-01T00:00:00Z\"}", Optional.empty()))
                .isEqualTo(Instant.EPOCH);
        assertThat(resolve("{\"timestamp\":\"-999999999-01-01T00:00:00Z\"}", Optional.of(Instant.parse("+999999999-12-31T23:59:59Z"))))
                .isEqualTo(Instant.EPOCH);
        assertThat(resolve("{\"offset\":9223372036854775807}", Optional.empty())).isEqualTo(Instant.EPOCH);
        assertThat(resolve("{\"offset\":-9223372036854775808}", Optional.empty())).as("the future").isEqualTo(NOW);
        assertThat(resolve("{\"timestamp\":\"-0001-12-31T23:59:59Z\"}", Optional.empty())).isEqualTo(Instant.EPOCH);
        assertThat(resolve("{\"timestamp\":\"0000-01-01T00:00:00Z\"}", Optional.empty())).isEqualTo(Instant.parse("0000-01-01T00:00:00Z"));
        assertThat(resolve("{\"offset\":1000}", Optional.empty())).isEqualTo(NOW.minusSeconds(1));
    }

    @Test
    void eventLevelSentAtWinsOverTheRequests() {
        assertThat(resolve("{\"timestamp\":\"2026-11-22T11:59:55Z\",\"sent_at\":\"2026-11-22T11:59:56Z\"}",
                Optional.of(Instant.parse("2026-11-22T12:00:05Z"))))
                .isEqualTo(Instant.parse("2026-11-22T11:59:59Z"));
    }

    @Test
    void ignoreSentAtKeepsTheTimestamp() {
        assertThat(resolve("{\"timestamp\":\"2026-11-22T11:59:55Z\",\"properties\":{\"$ignore_sent_at\":true}}",
                Optional.of(Instant.parse("2026-11-22T12:00:05Z"))))
                .isEqualTo(Instant.parse("2026-11-22T11:59:55Z"));
    }

    @Test
    void timestampWithoutSentAtIsTakenAsIs() {
        assertThat(resolve("{\"timestamp\":\"2020-01-01T00:00:00+02:00\"}", Optional.empty()))
                .isEqualTo(Instant.parse("2019-12-31T22:00:00Z"));
    }

    @Test
    void offsetCountsBackFromNow() {
        assertThat(resolve("{\"offset\":1500}", Optional.empty())).isEqualTo(Instant.parse("2026-11-22T11:59:58.500Z"));
    }

    @Test
    void nothingMeansNow() {
        assertThat(resolve("{}", Optional.empty())).isEqualTo(NOW);
    }

    @Test
    void farFutureAndUnparseableTimesBecomeNow() {
        assertThat(resolve("{\"timestamp\":\"2026-11-23T11:00:01Z\"}", Optional.empty())).isEqualTo(NOW);
        assertThat(resolve("{\"timestamp\":\"2026-11-23T10:59:00Z\"}", Optional.empty()))
                .as("22 h 59 min ahead is still accepted").isEqualTo(Instant.parse("2026-11-23T10:59:00Z"));
        assertThat(resolve("{\"timestamp\":\"not a date\"}", Optional.empty())).isEqualTo(NOW);
        assertThat(resolve("{\"timestamp\":12345}", Optional.empty())).isEqualTo(NOW);
    }

    @Test
    void acceptsTheDateFormsSdksSend() {
        assertThat(EventTimestamps.parse(json("\"2026-11-22 10:00:00\""))).contains(Instant.parse("2026-11-22T10:00:00Z"));
        assertThat(EventTimestamps.parse(json("\"2026-11-22T10:00:00.123456\""))).contains(Instant.parse("2026-11-22T10:00:00.123456Z"));
        assertThat(EventTimestamps.parse(json("\"2026-11-22\""))).contains(Instant.parse("2026-11-22T00:00:00Z"));
        assertThat(EventTimestamps.parse(json("\"Sun, 22 Nov 2026 10:00:00 GMT\""))).contains(Instant.parse("2026-11-22T10:00:00Z"));
    }

    private static Instant resolve(final String event, final Optional<Instant> sentAt) {
        return EventTimestamps.resolve(json(event), sentAt, NOW);
    }

    private static JsonNode json(final String text) {
        try {
            return Json.mapper().readTree(text);
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
    }
}
