package dev.eddy.gateway.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.config.RateLimitsConfig;
import dev.eddy.gateway.http.ApiError;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.vertx.ext.web.RoutingContext;

/**
 * Slows down key guessing, and keeps a flood of made-up keys away from PostgreSQL: each source address may fail
 * authentication {@code burst} times, then once every {@code refillEvery}; past that its requests with a key that
 * is not known to be valid get 429 without the key being looked up. Successful requests cost nothing. One instance
 * serves the management routes (personal API keys) and the public ones (project API keys).
 */
public final class AuthFailureLimiter {
    /** Addresses tracked at once; an idle address's bucket would be full again anyway. */
    private static final long MAX_ADDRESSES = 100_000;

    private final RateLimitsConfig.AuthFailures config;
    private final TimeMeter clock;
    private final Cache<String, Bucket> buckets;

    public AuthFailureLimiter(final RateLimitsConfig.AuthFailures config) {
        this(config, TimeMeter.SYSTEM_NANOTIME);
    }

    /** @param clock the buckets' time (tests move it by hand) */
    public AuthFailureLimiter(final RateLimitsConfig.AuthFailures config, final TimeMeter clock) {
        this.config = config;
        this.clock = clock;
        this.buckets = Caffeine.newBuilder()
                .maximumSize(MAX_ADDRESSES)
                .expireAfterAccess(config.refillEvery().multipliedBy(config.burst()))
                .build();
    }

    /** Whether {@code address} has failed too often to be heard now. */
    public boolean blocked(final String address) {
        final Bucket bucket = buckets.getIfPresent(address);
        return bucket != null && bucket.getAvailableTokens() <= 0;
    }

    public void failed(final String address) {
        buckets.get(address, a -> Bucket.builder()
                .withCustomTimePrecision(clock)
                .addLimit(Bandwidth.builder().capacity(config.burst()).refillGreedy(1, config.refillEvery()).build())
                .build()).tryConsume(1);
    }

    /** The 429 a blocked address gets. */
    public ApiError throttled() {
        return ApiError.tooManyRequests("Too many failed authentications from this address; retry later.",
                (int) Math.max(1, (config.refillEvery().toMillis() + 999) / 1000));
    }

    /**
     * The connection's address, not {@code X-Forwarded-For}: a guesser would rotate a header at will. (Behind a proxy
     * every client shares the proxy's address, so only keys that are not known to be valid are ever held back.)
     */
    public static String address(final RoutingContext ctx) {
        return ctx.request().remoteAddress() == null ? "" : ctx.request().remoteAddress().hostAddress();
    }
}
