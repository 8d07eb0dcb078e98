package dev.eddy.gateway.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import java.time.Duration;

/**
 * Slows down key guessing: each source address may fail authentication {@link #BURST} times, then once every
 * {@link #REFILL_EVERY}; past that its requests get 429 without their key being looked up. Successful requests
 * cost nothing.
 */
public final class AuthFailureLimiter {
    static final int BURST = 30;
    static final Duration REFILL_EVERY = Duration.ofSeconds(2);
    /** Addresses tracked at once; an idle address's bucket would be full again anyway. */
    private static final long MAX_ADDRESSES = 100_000;

    private final Cache<String, Bucket> buckets = Caffeine.newBuilder()
            .maximumSize(MAX_ADDRESSES)
            .expireAfterAccess(REFILL_EVERY.multipliedBy(BURST))
            .build();

    /** Whether {@code address} has failed too often to be heard now. */
    public boolean blocked(final String address) {
        final Bucket bucket = buckets.getIfPresent(address);
        return bucket != null && bucket.getAvailableTokens() <= 0;
    }

    public void failed(final String address) {
        buckets.get(address, a -> Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(BURST).refillGreedy(1, REFILL_EVERY).build())
                .build()).tryConsume(1);
    }
}
