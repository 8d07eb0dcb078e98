package dev.eddy.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.streams.InternalSecret;
import org.junit.jupiter.api.Test;

class SecretsTest {
    private static final String SECRET = "s3cret-value-of-the-deployment";

    @Test
    void onlyTheSameValueIsEqual() {
        assertThat(Secrets.equal(SECRET, SECRET)).isTrue();
        assertThat(Secrets.equal(SECRET, new String(SECRET.toCharArray()))).isTrue();
        assertThat(Secrets.equal(SECRET, SECRET + "x")).as("longer").isFalse();
        assertThat(Secrets.equal(SECRET, SECRET.substring(0, SECRET.length() - 1))).as("a prefix").isFalse();
        assertThat(Secrets.equal(SECRET, "S3cret-value-of-the-deployment")).as("case").isFalse();
        assertThat(Secrets.equal(SECRET, "")).isFalse();
        assertThat(Secrets.equal(SECRET, null)).isFalse();
        assertThat(Secrets.equal("\u00e9", "e\u0301")).as("compared byte for byte, not as text that looks the same").isFalse();
    }

    @Test
    void theInternalSecretAcceptsOnlyItself() {
        final InternalSecret secret = new InternalSecret(SECRET,
                new AuthFailureLimiter(new dev.eddy.config.RateLimitsConfig.AuthFailures(30, java.time.Duration.ofSeconds(2))));

        assertThat(secret.accepts(SECRET)).isTrue();
        assertThat(secret.accepts(SECRET.substring(1))).isFalse();
        assertThat(secret.accepts(null)).isFalse();
        assertThat(secret.accepts(" " + SECRET)).isFalse();
        assertThat(secret.toString()).doesNotContain(SECRET);
    }
}
