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
 * overloading one. Buckets of keys not seen for a minute are forgotten (they would be full again anyway).
 */
public final class OverflowLimiter {
    private static final long MAX_KEYS = 1_000_000;

    private final boolean enabled;
    private final LoadingCache<String, Bucket> buckets;

    public OverflowLimiter(final CaptureConfig.Overflow config) {
        this.enabled = config.enabled();
        final long idleAfter = Math.max(60, 2L * config.burst() / config.eventsPerSecond());
        this.buckets = Caffeine.newBuilder()
                .maximumSize(MAX_KEYS)
                .expireAfterAccess(Duration.ofSeconds(idleAfter))
                .build(key -> Bucket.builder()
                        .addLimit(Bandwidth.builder()
                                .capacity(config.burst())
                                .refillGreedy(config.eventsPerSecond(), Duration.ofSeconds(1))
                                .build())
                        .build());
    }

    /** Whether this event of {@code key} exceeds its rate and belongs on the overflow topic. */
    public boolean overflows(final String key) {
        return enabled && !buckets.get(key).tryConsume(1);
    }
}
