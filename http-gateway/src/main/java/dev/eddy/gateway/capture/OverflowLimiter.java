package dev.eddy.gateway.capture;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.eddy.config.CaptureConfig;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import java.time.Duration;

/**
 * Spike detection: one token bucket per {@code token:distinct_id}. A live event that finds its bucket empty
 * is routed to the overflow topic without a key, so one hot user spreads over every partition instead of
 * overloading one.
 *
 * <p>Buckets are kept by size alone (Caffeine's frequency-based eviction keeps the hot keys): a bucket that is
 * evicted would have refilled anyway, so recreating it full changes nothing for an idle key, and no time-based
 * expiry has to be tracked on every event.
 */
public final class OverflowLimiter {
    /** Bounds the limiter's memory (about 200 bytes a key) whatever the number of distinct ids. */
    private static final long MAX_KEYS = 1_000_000;

    private final boolean enabled;
    private final LoadingCache<String, Bucket> buckets;

    public OverflowLimiter(final CaptureConfig.Overflow config) {
        this.enabled = config.enabled();
        this.buckets = Caffeine.newBuilder()
                .maximumSize(MAX_KEYS)
                .build(key -> Bucket.builder()
                        .addLimit(Bandwidth.builder()
                                .capacity(config.burst())
                                .refillGreedy(config.eventsPerSecond(), Duration.ofSeconds(1))
                                .build())
                        .build());
    }

    /**
     * How many of {@code events} new events of {@code key} are within its rate; the rest belong on the overflow
     * topic. One bucket operation per key and request, however many events the request has for it.
     */
    public long admit(final String key, final long events) {
        return enabled ? buckets.get(key).tryConsumeAsMuchAsPossible(events) : events;
    }
}
