package dev.eddy.gateway.insights;

import dev.eddy.config.InsightsConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * PostHog's freshness rules for cached insight results ({@code posthog/caching/utils.py} {@code is_stale},
 * {@code cache_target_age}, and the runners' {@code _refresh_frequency}), with Eddy's thresholds
 * ({@code insights.cache.*}, where the choice of values is explained).
 *
 * <ul>
 *   <li>A result whose query ends before it was calculated (less a 10-second margin) never goes stale: nothing can
 *       change it any more.</li>
 *   <li>Otherwise it is stale once older than its interval's threshold, the default one for {@code blocking} and
 *       {@code async}, the longer lazy one for {@code lazy_async}.</li>
 *   <li>{@code cache_target_age} is the calculation time plus the default threshold.</li>
 *   <li>{@code next_allowed_client_refresh} is the calculation time plus the short client refresh interval for an
 *       hourly insight or one spanning at most 7 days, the longer one otherwise.</li>
 * </ul>
 */
public final class Freshness {
    /** PostHog's allowance for a result stored slightly after its query ran. */
    private static final Duration DATE_TO_MARGIN = Duration.ofSeconds(10);
    private static final Duration SHORT_TERM = Duration.ofDays(7);

    private final Map<String, Duration> staleAfter;
    private final Map<String, Duration> lazyStaleAfter;
    private final Duration clientRefreshShort;
    private final Duration clientRefresh;

    public Freshness(final InsightsConfig.Cache config) {
        this.staleAfter = config.staleAfter();
        this.lazyStaleAfter = config.lazyStaleAfter();
        this.clientRefreshShort = config.clientRefreshShort();
        this.clientRefresh = config.clientRefresh();
    }

    /**
     * @param interval    the query's interval name ({@code minute}, {@code hour}, ...); absent or unknown is {@code day}
     * @param dateTo      the end of the query's date range, when it could be resolved
     * @param lastRefresh when the cached result was calculated
     * @param lazy        whether the lazy thresholds apply ({@code lazy_async})
     */
    public boolean isStale(final String interval, final Optional<Instant> dateTo, final Instant lastRefresh, final Instant now,
                           final boolean lazy) {
        if (dateTo.isPresent() && dateTo.get().isBefore(lastRefresh.minus(DATE_TO_MARGIN))) {
            return false;
        }
        return now.isAfter(lastRefresh.plus(threshold(interval, lazy)));
    }

    /** PostHog's {@code cache_target_age}: when a result calculated at {@code lastRefresh} stops being fresh. */
    public Instant cacheTargetAge(final String interval, final Instant lastRefresh) {
        return lastRefresh.plus(threshold(interval, false));
    }

    /**
     * PostHog's {@code next_allowed_client_refresh}.
     *
     * @param span the length of the query's date range, when it could be resolved
     */
    public Instant nextAllowedClientRefresh(final String interval, final Optional<Duration> span, final Instant lastRefresh) {
        final boolean shortTerm = "hour".equals(normalized(interval)) || span.map(s -> s.compareTo(SHORT_TERM) <= 0).orElse(false);
        return lastRefresh.plus(shortTerm ? clientRefreshShort : clientRefresh);
    }

    private Duration threshold(final String interval, final boolean lazy) {
        return (lazy ? lazyStaleAfter : staleAfter).get(normalized(interval));
    }

    private static String normalized(final String interval) {
        final String name = interval == null ? "day" : interval.trim().toLowerCase(Locale.ROOT);
        return InsightsConfig.INTERVALS.contains(name) ? name : "day";
    }
}
