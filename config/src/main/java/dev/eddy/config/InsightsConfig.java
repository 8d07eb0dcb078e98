package dev.eddy.config;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How trend and funnel calculations are bounded, and how saved insights' results are cached and refreshed.
 *
 * @param queryTimeout how long one calculation (every instance's share and the merge) may take before it is
 *                     abandoned with a 504
 * @param cache        the saved insights' result cache
 * @param async        background calculations ({@code refresh=async} and its kin)
 * @param blockCache   bytes of heap this instance's sealed event blocks may take kept decoded between queries; 0 keeps
 *                     none
 * @param answerCache  bytes of heap answers may take kept between queries of the same shape (sealed blocks' parts of
 *                     trends, funnels' per-person progress: dashboard tiles asked again); 0 keeps none
 *
 * <p>Both caches are given in bytes ({@code 256MiB}) or as a share of the JVM's maximum heap ({@code 25%}), so an
 * instance given more heap keeps more.
 */
public record InsightsConfig(Duration queryTimeout, Cache cache, Async async, long blockCache, long answerCache) {

    /** The interval names the staleness thresholds are given for (PostHog's, {@code minute} included). */
    public static final List<String> INTERVALS = List.of("minute", "hour", "day", "week", "month");

    public InsightsConfig {
        Validation.require(!queryTimeout.isNegative() && !queryTimeout.isZero(), "insights.query-timeout must be positive");
        Validation.require(blockCache >= 0, "insights.block-cache must not be negative");
        Validation.require(answerCache >= 0, "insights.answer-cache must not be negative");
    }

    /**
     * The result cache of saved insights, and PostHog's freshness rules with Eddy's thresholds.
     *
     * @param staleAfter         per interval: the age past which {@code blocking} and {@code async} recalculate
     *                           a cached result (PostHog's default threshold mode)
     * @param lazyStaleAfter     per interval: the same for {@code lazy_async} (PostHog's lazy mode)
     * @param clientRefreshShort {@code next_allowed_client_refresh} after a calculation of an hourly insight or one
     *                           spanning at most 7 days
     * @param clientRefresh      {@code next_allowed_client_refresh} after any other calculation
     * @param maxEntries         results kept, least recently used dropped first
     * @param expireAfter        a result is dropped this long after it was calculated, stale or not
     */
    public record Cache(Map<String, Duration> staleAfter, Map<String, Duration> lazyStaleAfter, Duration clientRefreshShort,
                        Duration clientRefresh, long maxEntries, Duration expireAfter) {
        public Cache {
            for (final String interval : INTERVALS) {
                Validation.require(staleAfter.containsKey(interval) && positive(staleAfter.get(interval)),
                        "insights.cache.stale-after." + interval + " must be a positive duration");
                Validation.require(lazyStaleAfter.containsKey(interval) && positive(lazyStaleAfter.get(interval)),
                        "insights.cache.lazy-stale-after." + interval + " must be a positive duration");
            }
            Validation.require(positive(clientRefreshShort) && positive(clientRefresh),
                    "insights.cache.client-refresh and client-refresh-short must be positive");
            Validation.require(maxEntries >= 1, "insights.cache.max-entries must be at least 1");
            Validation.require(positive(expireAfter), "insights.cache.expire-after must be positive");
            staleAfter = Map.copyOf(staleAfter);
            lazyStaleAfter = Map.copyOf(lazyStaleAfter);
        }
    }

    /**
     * @param maxRunning      background calculations running at once on this instance; one more answers PostHog's
     *                        {@code concurrency_limit_exceeded} query status
     * @param statusRetention how long a finished background calculation's status (its error, say) stays visible
     */
    public record Async(int maxRunning, Duration statusRetention) {
        public Async {
            Validation.require(maxRunning >= 1, "insights.async.max-running must be at least 1");
            Validation.require(positive(statusRetention), "insights.async.status-retention must be positive");
        }
    }

    private static boolean positive(final Duration d) {
        return d != null && !d.isNegative() && !d.isZero();
    }

    static InsightsConfig from(final Config root) {
        return from(root, Runtime.getRuntime().maxMemory());
    }

    /** @param maxHeap the heap a share ({@code 25%}) is of */
    static InsightsConfig from(final Config root, final long maxHeap) {
        final Config c = root.getConfig("insights");
        final Config cache = c.getConfig("cache");
        final Config async = c.getConfig("async");
        return new InsightsConfig(c.getDuration("query-timeout"),
                new Cache(perInterval(cache.getConfig("stale-after")), perInterval(cache.getConfig("lazy-stale-after")),
                        cache.getDuration("client-refresh-short"), cache.getDuration("client-refresh"), cache.getLong("max-entries"),
                        cache.getDuration("expire-after")),
                new Async(async.getInt("max-running"), async.getDuration("status-retention")), heapBytes(c, "block-cache", maxHeap),
                heapBytes(c, "answer-cache", maxHeap));
    }

    private static final java.util.regex.Pattern SHARE = java.util.regex.Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*%\\s*");

    /** A size in bytes, or a share of {@code maxHeap} (at most 90%: the rest of Eddy needs some too). */
    private static long heapBytes(final Config c, final String path, final long maxHeap) {
        final Object raw = c.getValue(path).unwrapped();
        if (raw instanceof String text && text.contains("%")) {
            final java.util.regex.Matcher share = SHARE.matcher(text);
            Validation.require(share.matches(), "insights." + path + " must be a size (256MiB) or a share of the heap (25%), not '" + text + "'");
            final double percent = Double.parseDouble(share.group(1));
            Validation.require(percent <= 90, "insights." + path + " may take at most 90% of the heap, not " + text.strip());
            return (long) (maxHeap * percent / 100);
        }
        return c.getBytes(path);
    }

    private static Map<String, Duration> perInterval(final Config c) {
        final Map<String, Duration> byInterval = new LinkedHashMap<>();
        for (final String interval : INTERVALS) {
            if (c.hasPath(interval)) {
                byInterval.put(interval, c.getDuration(interval));
            }
        }
        return byInterval;
    }
}
