package dev.eddy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    @TempDir
    Path dir;

    @Test
    void shippedDefaultsDescribeTheLocalEmbeddedSetup() {
        final EddyConfig c = ConfigLoader.load(Map.of(), Optional.empty());

        assertThat(c.role()).isEqualTo(Role.ALL);
        assertThat(c.http().port()).isEqualTo(8000);
        assertThat(c.kafka().bootstrap()).isEqualTo("127.0.0.1:9092");
        assertThat(c.kafka().partitions()).isEqualTo(12);
        assertThat(c.kafka().replicationFactor()).isEqualTo((short) 1);
        assertThat(c.pg().jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/eddy");
        assertThat(c.streams().stateDir()).isEqualTo(Path.of(".eddy/state"));
        assertThat(c.capture().maxBatchBodyBytes()).isEqualTo(20 * 1024 * 1024);
        assertThat(c.bootstrap().projectToken()).isEmpty();
        assertThat(c.streams().threads()).as("sized to the cores").isZero();
    }

    @Test
    void streamThreadsAreSizedToTheCoresUnlessSet() {
        final StreamsConfig auto = ConfigLoader.load(Map.of(), Optional.empty()).streams();
        assertThat(auto.threadsFor(Role.STREAMS, 8)).isEqualTo(8);
        assertThat(auto.threadsFor(Role.ALL, 8)).as("a core for HTTP and query scans").isEqualTo(7);
        assertThat(auto.threadsFor(Role.ALL, 2)).isEqualTo(1);
        assertThat(auto.threadsFor(Role.ALL, 1)).isEqualTo(1);
        assertThat(auto.threadsFor(Role.STREAMS, 128)).isEqualTo(64);
        final StreamsConfig set = ConfigLoader.load(Map.of("EDDY_STREAMS_THREADS", "3"), Optional.empty()).streams();
        assertThat(set.threadsFor(Role.STREAMS, 8)).isEqualTo(3);
        assertThat(set.threadsFor(Role.ALL, 1)).isEqualTo(3);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_STREAMS_THREADS", "-1"),
                Optional.empty())).hasMessageContaining("streams.threads");
    }

    @Test
    void fileOverridesDefaultsAndEnvironmentOverridesFile() throws IOException {
        final Path file = write("""
                http.port = 9100
                partitions = 3
                kafka { bootstrap = "file-broker:9092", topic-prefix = "staging." }
                """);

        final EddyConfig c = ConfigLoader.load(Map.of("EDDY_HTTP_PORT", "9200"), Optional.of(file));

        assertThat(c.http().port()).as("environment beats file").isEqualTo(9200);
        assertThat(c.kafka().partitions()).as("file beats default").isEqualTo(3);
        assertThat(c.kafka().bootstrap()).isEqualTo("file-broker:9092");
        assertThat(c.kafka().topic("events.ingest")).isEqualTo("staging.events.ingest");
        assertThat(c.applicationId()).isEqualTo("staging.eddy");
        assertThat(c.pg().user()).as("untouched keys keep their default").isEqualTo("eddy");
    }

    @Test
    void configFileCanBeNamedByEnvironment() throws IOException {
        final Path file = write("role = streams");

        final EddyConfig c = ConfigLoader.load(Map.of("EDDY_CONFIG", file.toString()), Optional.empty());

        assertThat(c.role()).isEqualTo(Role.STREAMS);
    }

    @Test
    void insightCacheThresholdsHaveDefaultsAndEnvironmentOverrides() {
        final InsightsConfig defaults = ConfigLoader.load(Map.of(), Optional.empty()).insights();
        assertThat(defaults.cache().staleAfter()).containsEntry("minute", Duration.ofMinutes(1)).containsEntry("day", Duration.ofHours(1))
                .containsEntry("month", Duration.ofHours(8));
        assertThat(defaults.cache().lazyStaleAfter()).containsEntry("day", Duration.ofHours(2));
        assertThat(defaults.async().maxRunning()).isEqualTo(16);

        final InsightsConfig c = ConfigLoader.load(Map.of("EDDY_INSIGHTS_CACHE_STALE_AFTER_DAY", "2s",
                "EDDY_INSIGHTS_ASYNC_STATUS_RETENTION", "1m", "EDDY_INSIGHTS_BLOCK_CACHE", "0", "EDDY_INSIGHTS_ANSWER_CACHE", "1MiB"), Optional.empty()).insights();
        assertThat(c.blockCache()).isZero();
        assertThat(c.answerCache()).isEqualTo(1L << 20);
        assertThat(c.cache().staleAfter()).containsEntry("day", Duration.ofSeconds(2)).containsEntry("hour", Duration.ofMinutes(10));
        assertThat(c.async().statusRetention()).isEqualTo(Duration.ofMinutes(1));
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_INSIGHTS_CACHE_STALE_AFTER_WEEK", "0s"), Optional.empty()))
                .hasMessageContaining("insights.cache.stale-after.week");
    }

    @Test
    void liveDashboardsPollEverySecondByDefault() {
        final DashboardsConfig defaults = ConfigLoader.load(Map.of(), Optional.empty()).dashboards();
        assertThat(defaults.liveDebounce()).isEqualTo(Duration.ofSeconds(1));
        assertThat(defaults.liveMaxSubscribers()).isEqualTo(1000);
        assertThat(defaults.keepFreshFor()).isEqualTo(Duration.ofMinutes(10));
        assertThat(defaults.keepFreshMax()).isEqualTo(100);

        final DashboardsConfig c = ConfigLoader.load(Map.of("EDDY_DASHBOARDS_LIVE_DEBOUNCE", "250ms",
                "EDDY_DASHBOARDS_LIVE_MAX_SUBSCRIBERS", "3", "EDDY_DASHBOARDS_KEEP_FRESH_FOR", "0s",
                "EDDY_DASHBOARDS_KEEP_FRESH_MAX", "7"), Optional.empty()).dashboards();
        assertThat(c.liveDebounce()).isEqualTo(Duration.ofMillis(250));
        assertThat(c.liveMaxSubscribers()).isEqualTo(3);
        assertThat(c.keepFreshFor()).isZero();
        assertThat(c.keepFreshMax()).isEqualTo(7);
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_DASHBOARDS_LIVE_DEBOUNCE", "0s"), Optional.empty()))
                .hasMessageContaining("dashboards.live-debounce");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_DASHBOARDS_KEEP_FRESH_MAX", "0"), Optional.empty()))
                .hasMessageContaining("dashboards.keep-fresh-max");
    }

    @Test
    void environmentNamesFollowTheKeys() {
        assertThat(ConfigLoader.environmentName("http.port")).isEqualTo("EDDY_HTTP_PORT");
        assertThat(ConfigLoader.environmentName("state-dir")).isEqualTo("EDDY_STATE_DIR");
        assertThat(ConfigLoader.environmentName("partitions")).isEqualTo("EDDY_PARTITIONS");
        assertThat(ConfigLoader.environmentName("bootstrap.personal-api-key")).isEqualTo("EDDY_BOOTSTRAP_PERSONAL_API_KEY");
    }

    @Test
    void everyDocumentedEnvironmentVariableApplies() {
        final EddyConfig c = ConfigLoader.load(Map.of(
                "EDDY_KAFKA_BOOTSTRAP", "broker:29092",
                "EDDY_PG_URL", "jdbc:postgresql://db:6543/analytics",
                "EDDY_PG_USER", "u",
                "EDDY_PG_PASSWORD", "secret",
                "EDDY_STATE_DIR", "/var/lib/eddy",
                "EDDY_PARTITIONS", "24",
                "EDDY_ROLE", "gateway",
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", "phc_fixedprojecttoken"), Optional.empty());

        assertThat(c.kafka().bootstrap()).isEqualTo("broker:29092");
        assertThat(c.pg().uri()).isEqualTo("postgresql://db:6543/analytics");
        assertThat(c.pg().user()).isEqualTo("u");
        assertThat(c.pg().password()).isEqualTo("secret");
        assertThat(c.pg().toString()).doesNotContain("secret");
        assertThat(c.streams().stateDir()).isEqualTo(Path.of("/var/lib/eddy"));
        assertThat(c.kafka().partitions()).isEqualTo(24);
        assertThat(c.role()).isEqualTo(Role.GATEWAY);
        assertThat(c.bootstrap().projectToken()).contains("phc_fixedprojecttoken");
    }

    @Test
    void cachesAreSizesOrSharesOfTheHeap() {
        final long heap = Runtime.getRuntime().maxMemory();
        final EddyConfig defaults = ConfigLoader.load(Map.of(), Optional.empty());
        assertThat(defaults.insights().blockCache()).isEqualTo((long) (heap * 25.0 / 100));
        assertThat(defaults.insights().answerCache()).isEqualTo((long) (heap * 20.0 / 100));

        final EddyConfig set = ConfigLoader.load(Map.of("EDDY_INSIGHTS_BLOCK_CACHE", "64MiB", "EDDY_INSIGHTS_ANSWER_CACHE", "12.5 %"),
                Optional.empty());
        assertThat(set.insights().blockCache()).isEqualTo(64L << 20);
        assertThat(set.insights().answerCache()).isEqualTo((long) (heap * 12.5 / 100));
        assertThat(ConfigLoader.load(Map.of("EDDY_INSIGHTS_ANSWER_CACHE", "0"), Optional.empty()).insights().answerCache()).isZero();

        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_INSIGHTS_ANSWER_CACHE", "95%"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("insights.answer-cache").hasMessageContaining("90%");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_INSIGHTS_BLOCK_CACHE", "half%"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("insights.block-cache").hasMessageContaining("'half%'");
    }

    @Test
    void httpsAdminPortAndDrainingAreOffUnlessSet() {
        final HttpConfig defaults = ConfigLoader.load(Map.of(), Optional.empty()).http();
        assertThat(defaults.tls()).isEmpty();
        assertThat(defaults.hasAdminPort()).isFalse();
        assertThat(defaults.drainDelay()).isZero();
        assertThat(defaults.drainTimeout()).isEqualTo(java.time.Duration.ofSeconds(10));

        final HttpConfig set = ConfigLoader.load(Map.of("EDDY_HTTP_TLS_CERT_FILE", "/tls/tls.crt", "EDDY_HTTP_TLS_KEY_FILE", "/tls/tls.key",
                "EDDY_HTTP_ADMIN_PORT", "8001", "EDDY_HTTP_DRAIN_DELAY_MS", "5000", "EDDY_HTTP_DRAIN_TIMEOUT_MS", "20000"), Optional.empty()).http();
        assertThat(set.tls()).contains(new HttpConfig.Tls("/tls/tls.crt", "/tls/tls.key"));
        assertThat(set.adminPort()).isEqualTo(8001);
        assertThat(set.drainDelay()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(set.drainTimeout()).isEqualTo(java.time.Duration.ofSeconds(20));

        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_TLS_CERT_FILE", "/tls/tls.crt"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("http.tls.cert-file and http.tls.key-file go together");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_ADMIN_PORT", "8000"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("http.admin-port must differ from http.port (8000)");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_ADMIN_PORT", "-2"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("http.admin-port must be -1 (none) or 0..65535, got -2");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_DRAIN_TIMEOUT_MS", "300001"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("http.drain-timeout-ms must be 0..300000");
    }

    @Test
    void postgresTlsSettingsAreReadFromTheUrlAsLibpqReadsThem() {
        final PostgresConfig pg = new PostgresConfig("postgresql://db:5432/eddy?sslmode=verify-full&sslrootcert=%2Fetc%2Fpg%2Froot.crt&application_name=eddy",
                "eddy", "pw", 4);
        assertThat(pg.sslRootCert()).contains("/etc/pg/root.crt");
        // The JDBC driver (migrations) reads sslrootcert itself; vertx-pg-client would send it to the server as a setting.
        assertThat(pg.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/eddy?sslmode=verify-full&sslrootcert=%2Fetc%2Fpg%2Froot.crt&application_name=eddy");
        assertThat(pg.uri()).isEqualTo("postgresql://db:5432/eddy?sslmode=verify-full&application_name=eddy");
        assertThat(new PostgresConfig("postgresql://db/eddy?sslrootcert=/r.pem", "eddy", "pw", 4).uri()).isEqualTo("postgresql://db/eddy");
        assertThat(new PostgresConfig("postgresql://db/eddy", "eddy", "pw", 4).sslRootCert()).isEmpty();

        assertThatThrownBy(() -> new PostgresConfig("postgresql://db/eddy?sslmode=verify_full", "eddy", "pw", 4))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full, got 'verify_full'");
        assertThatThrownBy(() -> new PostgresConfig("postgresql://db/eddy?sslmode=verify-full&sslcert=/c.pem&sslkey=/k.pk8", "eddy", "pw", 4))
                .isInstanceOf(ConfigException.class).hasMessageContaining("client certificates (sslcert, sslkey) are not supported");
    }

    @Test
    void clientPropertiesPassThroughWithDottedNames() throws IOException {
        final Path file = write("""
                kafka.client { "security.protocol" = SASL_SSL, sasl.mechanism = PLAIN }
                """);

        final EddyConfig c = ConfigLoader.load(Map.of(), Optional.of(file));

        assertThat(c.kafka().clientProperties())
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "PLAIN");
    }

    @Test
    void unknownKeysAndVariablesAreRefusedWithTheNearestKnownName() throws IOException {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of(), Optional.of(write("http { prot = 8000 }"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("unknown key 'http.prot' (did you mean 'http.port'?)");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_PROT", "8000"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("unknown environment variable EDDY_HTTP_PROT (did you mean EDDY_HTTP_PORT?)");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_SOMETHING_ELSE_ENTIRELY", "1"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("unknown environment variable EDDY_SOMETHING_ELSE_ENTIRELY;");
        // The scripts' own variables, the log level, and what Kubernetes sets for Services named eddy... are not configuration.
        final EddyConfig c = ConfigLoader.load(Map.of("EDDY_DATA", "/tmp/x", "EDDY_JAVA_OPTS", "-Xmx1g", "EDDY_LOG_LEVEL", "DEBUG",
                "EDDY_SERVICE_HOST", "10.0.0.1", "EDDY_GATEWAY_PORT_8000_TCP_ADDR", "10.0.0.2", "EDDY_STREAMS_SERVICE_PORT_HTTP", "8000",
                "EDDY_PORT", "tcp://10.0.0.1:8000", "OTHER", "x"), Optional.empty());
        assertThat(c.http().port()).isEqualTo(8000);
        // A file's secret substituted from the environment (as Kubernetes hands it over) is not an unknown key.
        assertThat(ConfigLoader.load(Map.of(), Optional.of(write("pg.password = ${?NO_SUCH_VARIABLE_HERE}\nkafka.client { "
                + "\"sasl.jaas.config\" = ${?NO_SUCH_VARIABLE_EITHER} }"))).pg().password()).isEqualTo("eddy");
        // kafka.client's keys are the user's own.
        assertThat(ConfigLoader.load(Map.of(), Optional.of(write("kafka.client { \"ssl.truststore.location\" = /x }"))).kafka().clientProperties())
                .containsKey("ssl.truststore.location");
    }

    @Test
    void wrongTypesAndValuesAreRefusedWithTheKeyNamed() {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_HTTP_PORT", "eighty"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("EDDY_HTTP_PORT").hasMessageContaining("NUMBER");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_PARTITIONS", "0"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("partitions");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_ROLE", "everything"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("role");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_PG_URL", "mysql://db/x"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("pg.url");
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_BOOTSTRAP_PERSONAL_API_KEY", "short"), Optional.empty()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("personal-api-key");
    }

    @Test
    void missingConfigFileIsAnError() {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of(), Optional.of(dir.resolve("absent.conf"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("absent.conf");
    }

    private Path write(final String text) throws IOException {
        final Path file = dir.resolve("eddy.conf");
        Files.writeString(file, text);
        return file;
    }
}
