package dev.eddy.config;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * Request rate limits of the HTTP routes.
 *
 * @param flags        per project API key on {@code /decide} and {@code /flags}
 * @param authFailures per source address, on failed authentications (management keys, unknown project tokens)
 */
public record RateLimitsConfig(Flags flags, AuthFailures authFailures) {

    /**
     * A token bucket per project API key; a request that finds it empty is answered 429 with {@code Retry-After}.
     * PostHog's own service defaults to 10 requests a second with a burst of 500, disabled; Eddy's defaults are far above
     * what one site's browsers ask, so only a runaway client meets them.
     *
     * @param enabled           whether the flag routes are limited at all
     * @param requestsPerSecond sustained rate of one token
     * @param burst             bucket capacity: requests one token may make at once
     */
    public record Flags(boolean enabled, int requestsPerSecond, int burst) {
        public Flags {
            Validation.require(requestsPerSecond >= 1, "rate-limits.flags.requests-per-second must be positive");
            Validation.require(burst >= 1, "rate-limits.flags.burst must be positive");
        }
    }

    /**
     * A token bucket per source address that only failed authentications drain: past {@code burst} failures, one more
     * attempt every {@code refillEvery}.
     *
     * @param burst       failures an address may have at once
     * @param refillEvery how often one more attempt is allowed once they are spent
     */
    public record AuthFailures(int burst, Duration refillEvery) {
        public AuthFailures {
            Validation.require(burst >= 1, "rate-limits.auth-failures.burst must be positive");
            Validation.require(refillEvery.toMillis() >= 1, "rate-limits.auth-failures.refill-every must be positive");
        }
    }

    static RateLimitsConfig from(final Config root) {
        final Config c = root.getConfig("rate-limits");
        return new RateLimitsConfig(
                new Flags(c.getBoolean("flags.enabled"), c.getInt("flags.requests-per-second"), c.getInt("flags.burst")),
                new AuthFailures(c.getInt("auth-failures.burst"), c.getDuration("auth-failures.refill-every")));
    }
}
