package dev.eddy.gateway.testing;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.config.HttpConfig;
import dev.eddy.gateway.Eddy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Starts an Eddy on the shared infrastructure, isolated by topic prefix and database, and talks HTTP to it. */
public final class TestEddy extends ApiClient implements AutoCloseable {
    private final Eddy eddy;
    private final String topicPrefix;

    private TestEddy(final Eddy eddy, final String topicPrefix) throws Exception {
        super(client(eddy.config()));
        this.eddy = eddy;
        this.topicPrefix = topicPrefix;
    }

    /** An HTTP client for {@code config}'s Eddy: one serving HTTPS is trusted by its certificate alone. */
    private static HttpClient client(final EddyConfig config) throws Exception {
        final HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        final Optional<HttpConfig.Tls> tls = config.http().tls();
        if (tls.isPresent()) {
            client.sslContext(new TestCertificates(Path.of(tls.get().certFile()), Path.of(tls.get().keyFile())).trustingIt());
        }
        return client.build();
    }

    /** Starts an Eddy and waits until it is ready ({@code /_health}). */
    public static TestEddy start(final Infrastructure infra, final Path stateDir, final Map<String, String> extra) throws Exception {
        return start(infra, stateDir, extra, "/_health");
    }

    /** Starts an Eddy and waits only until it serves HTTP ({@code /_health/live}): for tests of an Eddy that is not ready. */
    public static TestEddy startLive(final Infrastructure infra, final Path stateDir, final Map<String, String> extra) throws Exception {
        return start(infra, stateDir, extra, "/_health/live");
    }

    private static TestEddy start(final Infrastructure infra, final Path stateDir, final Map<String, String> extra, final String health)
            throws Exception {
        final String prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + ".";
        final Map<String, String> env = new HashMap<>(Map.of(
                "EDDY_KAFKA_BOOTSTRAP", infra.kafkaBootstrap(),
                "EDDY_KAFKA_TOPIC_PREFIX", prefix,
                "EDDY_PARTITIONS", "4",
                "EDDY_PG_URL", infra.newDatabase("eddy"),
                "EDDY_PG_USER", infra.pgUser(),
                "EDDY_PG_PASSWORD", infra.pgPassword(),
                "EDDY_HTTP_HOST", "127.0.0.1",
                "EDDY_HTTP_PORT", "0",
                "EDDY_STATE_DIR", stateDir.toString()));
        env.putAll(extra);
        final EddyConfig config = ConfigLoader.load(env, clientConfigFile(stateDir));
        final Eddy eddy = Eddy.start(config);
        final TestEddy test;
        try {
            test = new TestEddy(eddy, prefix);
        } catch (final Exception e) {
            eddy.close();
            throw e;
        }
        test.waitUntil(() -> test.get(health, Map.of()).statusCode() == 200, Duration.ofSeconds(60), "Eddy answering " + health);
        return test;
    }

    /** A config file with the test cluster's client security settings ({@code kafka.client}, file only), if it has any. */
    private static Optional<Path> clientConfigFile(final Path stateDir) throws java.io.IOException {
        final Map<String, String> client = Infrastructure.kafkaClientProperties();
        if (client.isEmpty()) {
            return Optional.empty();
        }
        final StringBuilder conf = new StringBuilder("kafka.client {\n");
        client.forEach((name, value) -> conf.append("  ").append(com.typesafe.config.ConfigUtil.quoteString(name)).append(" = ")
                .append(com.typesafe.config.ConfigUtil.quoteString(value)).append('\n'));
        final Path file = java.nio.file.Files.createTempFile("eddy-test-client", ".conf");
        java.nio.file.Files.writeString(file, conf.append("}\n"));
        file.toFile().deleteOnExit();
        return Optional.of(file);
    }

    public Eddy eddy() {
        return eddy;
    }

    /** The prefix of this instance's topics and Streams application id. */
    public String topicPrefix() {
        return topicPrefix;
    }

    public String topic(final String name) {
        return topicPrefix + name;
    }

    @Override
    public EddyConfig config() {
        return eddy.config();
    }

    @Override
    public String projectToken() {
        return eddy.bootstrap().orElseThrow().projectToken();
    }

    @Override
    public String personalKey() {
        return eddy.bootstrap().orElseThrow().personalApiKey().orElseThrow();
    }

    /**
     * Where {@code path} is served: {@code /metrics} and {@code /_internal} on the admin port when there is one, every
     * other route on the public port (HTTPS when the Eddy has a certificate).
     */
    @Override
    public URI uri(final String path) {
        if (eddy.adminPort().isPresent() && (path.startsWith("/metrics") || path.startsWith("/_internal"))) {
            return URI.create("http://127.0.0.1:" + eddy.adminPort().getAsInt() + path);
        }
        return URI.create((eddy.config().http().tls().isPresent() ? "https" : "http") + "://127.0.0.1:" + eddy.port() + path);
    }

    /** The {@code host:port} of the instance owning {@code distinctId}'s partition, as this instance's streams metadata says. */
    public String ownerOf(final String distinctId) {
        final org.apache.kafka.streams.KeyQueryMetadata owner = eddy.streams().orElseThrow().routing().ownerOf(dev.eddy.stores.StoreNames.DISTINCT_IDS,
                projectToken() + ":" + distinctId, new org.apache.kafka.common.serialization.StringSerializer());
        return owner.activeHost().host() + ":" + owner.activeHost().port();
    }

    /** Closes each that started, last started first. */
    public static void closeAll(final TestEddy... started) {
        for (int i = started.length - 1; i >= 0; i--) {
            if (started[i] != null) {
                started[i].close();
            }
        }
    }

    @Override
    public void close() {
        eddy.close();
    }
}
