package dev.eddy.gateway.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.InsightsConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** PostHog's staleness rules ({@code is_stale}, {@code cache_target_age}), here with PostHog's own thresholds. */
class FreshnessTest {
    static final InsightsConfig.Cache POSTHOG = new InsightsConfig.Cache(
            Map.of("minute", Duration.ofMinutes(5), "hour", Duration.ofHours(1), "day", Duration.ofHours(6), "week", Duration.ofDays(1),
                    "month", Duration.ofDays(2)),
            Map.of("minute", Duration.ofMinutes(15), "hour", Duration.ofHours(2), "day", Duration.ofHours(12), "week", Duration.ofDays(1),
                    "month", Duration.ofDays(2)),
            Duration.ofMinutes(3), Duration.ofMinutes(15), 100, Duration.ofDays(1));
    private static final Instant REFRESHED = Instant.parse("2024-03-10T12:00:00Z");
    private final Freshness freshness = new Freshness(POSTHOG);

    @Test
    void aResultIsStaleOnceOlderThanItsIntervalsThreshold() {
        final Optional<Instant> now = Optional.of(REFRESHED.plus(Duration.ofDays(1)));
        assertThat(freshness.isStale("day", now, REFRESHED, REFRESHED.plus(Duration.ofHours(6)), false)).as("exactly 6 h").isFalse();
        assertThat(freshness.isStale("day", now, REFRESHED, REFRESHED.plus(Duration.ofHours(6)).plusSeconds(1), false)).isTrue();
        assertThat(freshness.isStale("minute", Optional.empty(), REFRESHED, REFRESHED.plus(Duration.ofMinutes(6)), false)).isTrue();
        assertThat(freshness.isStale("hour", Optional.empty(), REFRESHED, REFRESHED.plus(Duration.ofMinutes(59)), false)).isFalse();
        assertThat(freshness.isStale("month", Optional.empty(), REFRESHED, REFRESHED.plus(Duration.ofDays(2)).plusSeconds(1), false)).isTrue();
    }

    @Test
    void theLazyThresholdsAreLonger() {
        final Instant sevenHours = REFRESHED.plus(Duration.ofHours(7));
        assertThat(freshness.isStale("day", Optional.empty(), REFRESHED, sevenHours, false)).isTrue();
        assertThat(freshness.isStale("day", Optional.empty(), REFRESHED, sevenHours, true)).isFalse();
        assertThat(freshness.isStale("day", Optional.empty(), REFRESHED, REFRESHED.plus(Duration.ofHours(13)), true)).isTrue();
    }

    @Test
    void aResultOfARangeThatEndedBeforeItWasCalculatedNeverGoesStale() {
        final Optional<Instant> ended = Optional.of(Instant.parse("2020-01-19T23:59:59Z"));
        assertThat(freshness.isStale("day", ended, REFRESHED, REFRESHED.plus(Duration.ofDays(400)), false)).isFalse();
        final Optional<Instant> withinMargin = Optional.of(REFRESHED.minusSeconds(5));
        assertThat(freshness.isStale("day", withinMargin, REFRESHED, REFRESHED.plus(Duration.ofHours(7)), false))
                .as("the 10 s margin for a result stored after its query ran").isTrue();
    }

    @Test
    void anUnknownIntervalIsADay() {
        assertThat(freshness.isStale("fortnight", Optional.empty(), REFRESHED, REFRESHED.plus(Duration.ofHours(7)), false)).isTrue();
        assertThat(freshness.cacheTargetAge(null, REFRESHED)).isEqualTo(REFRESHED.plus(Duration.ofHours(6)));
    }

    @Test
    void cacheTargetAgeAndNextAllowedClientRefresh() {
        assertThat(freshness.cacheTargetAge("hour", REFRESHED)).isEqualTo(Instant.parse("2024-03-10T13:00:00Z"));
        assertThat(freshness.nextAllowedClientRefresh("hour", Optional.of(Duration.ofDays(30)), REFRESHED))
                .as("hourly: short term").isEqualTo(REFRESHED.plus(Duration.ofMinutes(3)));
        assertThat(freshness.nextAllowedClientRefresh("day", Optional.of(Duration.ofDays(7)), REFRESHED))
                .as("7 days: short term").isEqualTo(REFRESHED.plus(Duration.ofMinutes(3)));
        assertThat(freshness.nextAllowedClientRefresh("day", Optional.of(Duration.ofDays(7).plusSeconds(1)), REFRESHED))
                .isEqualTo(REFRESHED.plus(Duration.ofMinutes(15)));
        assertThat(freshness.nextAllowedClientRefresh("week", Optional.empty(), REFRESHED)).isEqualTo(REFRESHED.plus(Duration.ofMinutes(15)));
    }
}
