package dev.eddy.gateway.flags;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.RateLimitsConfig;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.testing.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FlagsRateLimiterTest {
    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void aTokenGetsItsBurstThenA429WithRetryAfterUntilTheBucketRefills() {
        // 2 requests a second, 5 at once.
        final FlagsRateLimiter limiter = new FlagsRateLimiter(new RateLimitsConfig.Flags(true, 2, 5), registry, clock);

        for (int i = 0; i < 5; i++) {
            assertThat(limiter.check("phc_a")).as("request %d", i + 1).isEmpty();
        }
        final Optional<ApiError> sixth = limiter.check("phc_a");

        assertThat(sixth).isPresent();
        assertThat(sixth.get().status()).isEqualTo(429);
        assertThat(sixth.get().type()).isEqualTo("validation_error");
        assertThat(sixth.get().code()).isEqualTo("rate_limit_exceeded");
        assertThat(sixth.get().getMessage()).isEqualTo("Rate limit exceeded. Please reduce your request frequency and try again later.");
        // One request comes back every 500 ms: Retry-After rounds up to a whole second.
        assertThat(sixth.get().retryAfterSeconds()).isEqualTo(1);
        assertThat(limiter.check("phc_b")).as("another token is unaffected").isEmpty();
        assertThat(registry.counter("eddy.flags.rate_limited").count()).isEqualTo(1.0);

        clock.advance(Duration.ofMillis(499));
        assertThat(limiter.check("phc_a")).as("not refilled yet").isPresent();
        clock.advance(Duration.ofMillis(1));
        assertThat(limiter.check("phc_a")).as("one request refilled after 500 ms").isEmpty();
        assertThat(limiter.check("phc_a")).isPresent();
        clock.advance(Duration.ofSeconds(10));
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.check("phc_a")).as("full again: request %d", i + 1).isEmpty();
        }
        assertThat(limiter.check("phc_a")).as("never more than the burst").isPresent();
        assertThat(registry.counter("eddy.flags.rate_limited").count()).isEqualTo(4.0);
    }

    @Test
    void retryAfterIsTheWaitForOneRequest() {
        final FlagsRateLimiter limiter = new FlagsRateLimiter(new RateLimitsConfig.Flags(true, 1, 1), registry, clock);
        assertThat(limiter.check("phc_a")).isEmpty();
        clock.advance(Duration.ofMillis(100));

        assertThat(limiter.check("phc_a").orElseThrow().retryAfterSeconds()).isEqualTo(1);
    }

    @Test
    void disabledLimitsNothing() {
        final FlagsRateLimiter limiter = new FlagsRateLimiter(new RateLimitsConfig.Flags(false, 1, 1), registry, clock);
        for (int i = 0; i < 100; i++) {
            assertThat(limiter.check("phc_a")).isEmpty();
        }
        assertThat(registry.counter("eddy.flags.rate_limited").count()).isZero();
    }
}
