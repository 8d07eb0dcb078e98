package dev.eddy.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.RateLimitsConfig;
import dev.eddy.gateway.capture.ProjectTokens;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.testing.ManualClock;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AuthFailureLimiterTest {
    private final ManualClock clock = new ManualClock();
    private final AuthFailureLimiter failures = new AuthFailureLimiter(new RateLimitsConfig.AuthFailures(3, Duration.ofSeconds(2)), clock);

    @Test
    void anAddressIsBlockedAfterItsBurstOfFailuresUntilOneRefills() {
        assertThat(failures.blocked("10.0.0.1")).isFalse();
        failures.failed("10.0.0.1");
        failures.failed("10.0.0.1");
        assertThat(failures.blocked("10.0.0.1")).isFalse();
        failures.failed("10.0.0.1");

        assertThat(failures.blocked("10.0.0.1")).isTrue();
        assertThat(failures.blocked("10.0.0.2")).as("another address").isFalse();
        assertThat(failures.throttled().status()).isEqualTo(429);
        assertThat(failures.throttled().retryAfterSeconds()).isEqualTo(2);
        clock.advance(Duration.ofMillis(1999));
        assertThat(failures.blocked("10.0.0.1")).isTrue();
        clock.advance(Duration.ofMillis(1));
        assertThat(failures.blocked("10.0.0.1")).as("one attempt back after 2 s").isFalse();
        failures.failed("10.0.0.1");
        assertThat(failures.blocked("10.0.0.1")).isTrue();
    }

    @Test
    void publicRoutesHoldBackOnlyTokensNotKnownToBeValid() {
        final List<String> looked = new ArrayList<>();
        final ProjectTokens tokens = new ProjectTokens(token -> {
            looked.add(token);
            return Future.succeededFuture("phc_valid".equals(token) ? Optional.of(1L) : Optional.empty());
        });
        assertThat(tokens.authenticate("phc_valid", "10.0.0.1", failures, null).result()).contains(1L);
        for (int i = 0; i < 3; i++) {
            assertThat(tokens.authenticate("phc_guess" + i, "10.0.0.1", failures, null).result()).isEmpty();
        }
        looked.clear();

        final Future<Optional<Long>> guess = tokens.authenticate("phc_guess9", "10.0.0.1", failures, null);
        assertThat(guess.failed()).isTrue();
        assertThat(((ApiError) guess.cause()).status()).isEqualTo(429);
        assertThat(tokens.authenticate("phc_valid", "10.0.0.1", failures, null).result())
                .as("a valid token from a blocked address (a proxy's, say) still counts").contains(1L);
        assertThat(tokens.authenticate("phc_guess9", "10.0.0.2", failures, null).result()).as("another address").isEmpty();
        assertThat(looked).as("the blocked address's guess never reached the database").containsExactly("phc_guess9");
    }
}
