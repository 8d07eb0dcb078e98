package dev.eddy.gateway.flags;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import dev.eddy.config.RateLimitsConfig;
import dev.eddy.gateway.http.ApiError;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.TimeMeter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;

/**
 * PostHog's per-token limit of the flag routes ({@code /decide}, {@code /flags}): one token bucket per project API key
 * as sent, checked before the key is looked up. A request that finds its bucket empty is answered 429 with
 * {@code Retry-After} (the time until the bucket holds a request again) and PostHog's body
 * {@code {"type":"validation_error","code":"rate_limit_exceeded",...}}; other tokens are unaffected. Per process, as
 * PostHog's is: N gateways allow N times the rate.
 */
public final class FlagsRateLimiter {
    /** Bounds the limiter's memory whatever the number of tokens sent (made-up ones included). */
    private static final long MAX_TOKENS = 100_000;
    static final String DETAIL = "Rate limit exceeded. Please reduce your request frequency and try again later.";

    private final boolean enabled;
    private final LoadingCache<String, Bucket> buckets;
    private final Counter limited;

    public FlagsRateLimiter(final RateLimitsConfig.Flags config, final MeterRegistry registry) {
        this(config, registry, TimeMeter.SYSTEM_NANOTIME);
    }

    /** @param clock the buckets' time (tests move it by hand) */
    public FlagsRateLimiter(final RateLimitsConfig.Flags config, final MeterRegistry registry, final TimeMeter clock) {
        this.enabled = config.enabled();
        // An evicted bucket is recreated full: only a token idle long enough to be refilled anyway is evicted first.
        this.buckets = Caffeine.newBuilder()
                .maximumSize(MAX_TOKENS)
                .expireAfterAccess(Duration.ofSeconds(Math.max(1, config.burst() / config.requestsPerSecond() + 1)))
                .build(token -> Bucket.builder()
                        .withCustomTimePrecision(clock)
                        .addLimit(Bandwidth.builder().capacity(config.burst())
                                .refillGreedy(config.requestsPerSecond(), Duration.ofSeconds(1)).build())
                        .build());
        this.limited = Counter.builder("eddy.flags.rate_limited")
                .description("/decide and /flags requests answered 429 because their project API key was past its rate")
                .register(registry);
    }

    /** The 429 to answer when {@code token} is past its rate; empty when the request may go on (and was counted). */
    public Optional<ApiError> check(final String token) {
        if (!enabled) {
            return Optional.empty();
        }
        final ConsumptionProbe probe = buckets.get(token).tryConsumeAndReturnRemaining(1);
        if (probe.isConsumed()) {
            return Optional.empty();
        }
        limited.increment();
        final long seconds = Math.max(1, (probe.getNanosToWaitForRefill() + 999_999_999L) / 1_000_000_000L);
        return Optional.of(ApiError.rateLimited(DETAIL, (int) Math.min(Integer.MAX_VALUE, seconds)));
    }
}
