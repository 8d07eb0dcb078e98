package dev.eddy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the configuration prints of itself, and what its error messages echo, never includes a secret's value. */
class ConfigSecretsTest {
    private static final String PG_PASSWORD = "pg-Password-4711";
    private static final String URL_PASSWORD = "url-Password-0815";
    private static final String INTERNAL_SECRET = "internal-Secret-0123456789";
    private static final String PROJECT_TOKEN = "phc_bootstrapTokenValue42";
    private static final String PERSONAL_KEY = "phx_bootstrapPersonalKeyValue42";
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"kafka-Password-9\";";

    @TempDir
    Path dir;

    @Test
    void printedConfigurationShowsNoSecret() throws IOException {
        final Path file = dir.resolve("eddy.conf");
        Files.writeString(file, "kafka.client { \"sasl.jaas.config\" = \"" + JAAS.replace("\"", "\\\"")
                + "\", \"ssl.key.password\" = \"kafka-Password-9\", \"security.protocol\" = \"SASL_SSL\" }\n");
        final EddyConfig config = ConfigLoader.load(Map.of(
                "EDDY_PG_PASSWORD", PG_PASSWORD,
                "EDDY_PG_URL", "postgresql://eddy:" + URL_PASSWORD + "@db.internal:5432/eddy?sslmode=require&password=" + URL_PASSWORD,
                "EDDY_HTTP_INTERNAL_SECRET", INTERNAL_SECRET,
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", PROJECT_TOKEN,
                "EDDY_BOOTSTRAP_PERSONAL_API_KEY", PERSONAL_KEY), Optional.of(file));

        final String printed = config.toString();

        assertThat(printed).doesNotContain(PG_PASSWORD, URL_PASSWORD, INTERNAL_SECRET, PROJECT_TOKEN, PERSONAL_KEY, "kafka-Password-9");
        assertThat(printed).contains("db.internal:5432", "internalSecret=set", "sasl.jaas.config=***", "security.protocol=SASL_SSL");
        assertThat(config.kafka().clientProperties()).containsEntry("sasl.jaas.config", JAAS);
        assertThat(config.http().internalSecret()).isEqualTo(INTERNAL_SECRET);
    }

    @Test
    void refusedDatabaseUrlIsEchoedWithoutItsPassword() {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_PG_URL", "mysql://eddy:" + URL_PASSWORD + "@db/x"), Optional.empty()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mysql://eddy:***@db/x")
                .hasMessageNotContaining(URL_PASSWORD);
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_PG_URL", "postgresql:///x?password=" + URL_PASSWORD), Optional.empty()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("password=***")
                .hasMessageNotContaining(URL_PASSWORD);
    }

    @Test
    void aRefusedSecretIsNotEchoed() {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_INTERNAL_SECRET", "short-Secret"), Optional.empty()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("http.internal-secret")
                .hasMessageNotContaining("short-Secret");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_BOOTSTRAP_PERSONAL_API_KEY", "phx_bad key!"), Optional.empty()))
                .isInstanceOf(ConfigException.class)
                .hasMessageNotContaining("phx_bad key!");
    }

    @Test
    void redactKeepsEverythingButThePassword() {
        assertThat(PostgresConfig.redact("postgresql://eddy:s3cret@host:5432/db")).isEqualTo("postgresql://eddy:***@host:5432/db");
        assertThat(PostgresConfig.redact("jdbc:postgresql://host/db?user=eddy&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://host/db?user=eddy&password=***&ssl=true");
        assertThat(PostgresConfig.redact("postgresql://eddy@host/db")).isEqualTo("postgresql://eddy@host/db");
    }

    @Test
    void theDriversGetTheUrlWithoutCredentials() {
        final PostgresConfig pg = new PostgresConfig("postgresql://eddy:" + URL_PASSWORD + "@db:5432/eddy?sslmode=require&password="
                + URL_PASSWORD, "eddy", PG_PASSWORD, 4);

        // Drivers echo the URL in their errors (Flyway: "Unable to obtain connection from database (url)").
        assertThat(pg.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/eddy?sslmode=require");
        assertThat(pg.uri()).isEqualTo("postgresql://db:5432/eddy?sslmode=require");
        assertThat(PostgresConfig.withoutCredentials("postgresql://db/x?password=a&user=b&ssl=true")).isEqualTo("postgresql://db/x?ssl=true");
        assertThat(PostgresConfig.withoutCredentials("jdbc:postgresql://db/x")).isEqualTo("jdbc:postgresql://db/x");
    }

    @Test
    void kafkaCredentialPropertiesAreRecognised() {
        assertThat(KafkaConfig.sensitive("sasl.jaas.config")).isTrue();
        assertThat(KafkaConfig.sensitive("ssl.keystore.password")).isTrue();
        assertThat(KafkaConfig.sensitive("ssl.keystore.key")).isTrue();
        assertThat(KafkaConfig.sensitive("sasl.oauthbearer.token.endpoint.url")).isTrue();
        assertThat(KafkaConfig.sensitive("security.protocol")).isFalse();
        assertThat(KafkaConfig.sensitive("sasl.mechanism")).isFalse();
    }

    @Test
    void flagsAreNotLimitedByDefaultAndLimitsAreSetByEnvironment() {
        // A project API key is a whole website: off by default, as PostHog ships its limit, so no busy site is throttled.
        final RateLimitsConfig defaults = ConfigLoader.load(Map.of(), Optional.empty()).rateLimits();
        assertThat(defaults.flags()).isEqualTo(new RateLimitsConfig.Flags(false, 1000, 10_000));
        assertThat(defaults.authFailures()).isEqualTo(new RateLimitsConfig.AuthFailures(30, java.time.Duration.ofSeconds(2)));

        final RateLimitsConfig set = ConfigLoader.load(Map.of("EDDY_RATE_LIMITS_FLAGS_ENABLED", "true", "EDDY_RATE_LIMITS_FLAGS_BURST", "5",
                "EDDY_RATE_LIMITS_FLAGS_REQUESTS_PER_SECOND", "2", "EDDY_RATE_LIMITS_AUTH_FAILURES_BURST", "1000"), Optional.empty()).rateLimits();
        assertThat(set.flags()).isEqualTo(new RateLimitsConfig.Flags(true, 2, 5));
        assertThat(set.authFailures().burst()).isEqualTo(1000);
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_RATE_LIMITS_FLAGS_BURST", "0"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("rate-limits.flags.burst");
    }
}
