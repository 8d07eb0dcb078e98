package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.config.HttpConfig;
import dev.eddy.gateway.Eddy;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/** Starts an Eddy on the shared infrastructure, isolated by topic prefix and database, and talks HTTP to it. */
public final class TestEddy implements AutoCloseable {
    private final Eddy eddy;
    private final HttpClient http;
    private final String topicPrefix;

    private TestEddy(final Eddy eddy, final String topicPrefix) throws Exception {
        this.eddy = eddy;
        this.topicPrefix = topicPrefix;
        final HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        // An Eddy serving HTTPS is trusted by its certificate alone.
        final Optional<HttpConfig.Tls> tls = eddy.config().http().tls();
        if (tls.isPresent()) {
            client.sslContext(new TestCertificates(Path.of(tls.get().certFile()), Path.of(tls.get().keyFile())).trustingIt());
        }
        this.http = client.build();
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

    public String projectToken() {
        return eddy.bootstrap().orElseThrow().projectToken();
    }

    public String personalKey() {
        return eddy.bootstrap().orElseThrow().personalApiKey().orElseThrow();
    }

    /**
     * Where {@code path} is served: {@code /metrics} and {@code /_internal} on the admin port when there is one, every
     * other route on the public port (HTTPS when the Eddy has a certificate).
     */
    public URI uri(final String path) {
        if (eddy.adminPort().isPresent() && (path.startsWith("/metrics") || path.startsWith("/_internal"))) {
            return URI.create("http://127.0.0.1:" + eddy.adminPort().getAsInt() + path);
        }
        return URI.create((eddy.config().http().tls().isPresent() ? "https" : "http") + "://127.0.0.1:" + eddy.port() + path);
    }

    public HttpResponse<String> post(final String path, final String body) {
        return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build());
    }

    public HttpResponse<String> get(final String path, final Map<String, String> headers) {
        final HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        headers.forEach(b::header);
        return send(b.build());
    }

    /** GET with the bootstrap personal API key. */
    public HttpResponse<String> getAuthorized(final String path) {
        return get(path, Map.of("Authorization", "Bearer " + personalKey()));
    }

    /** A JSON request with {@code key} as the bearer; a null body sends none. */
    public HttpResponse<String> request(final String key, final String method, final String path, final String body) {
        return send(HttpRequest.newBuilder(uri(path))
                .header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    /** Every event name counted in project 1 ({@code /event_counts/}), with its count; empty while not answerable. */
    public Map<String, Long> eventCounts() {
        final HttpResponse<String> response = getAuthorized("/api/projects/1/event_counts/");
        final Map<String, Long> counts = new HashMap<>();
        if (response.statusCode() == 200) {
            json(response).get("results").forEach(r -> counts.merge(r.get("event").asText(), r.get("count").asLong(), Long::sum));
        }
        return counts;
    }

    public HttpClient http() {
        return http;
    }

    public HttpResponse<String> send(final HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (final IOException e) {
            throw new IllegalStateException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static JsonNode json(final HttpResponse<String> response) {
        try {
            return Json.mapper().readTree(response.body());
        } catch (final IOException e) {
            throw new AssertionError("not JSON: " + response.body(), e);
        }
    }

    /** Polls {@code condition} every 100 ms until it holds, or fails naming {@code what}. */
    public void waitUntil(final BooleanSupplier condition, final Duration timeout, final String what) throws InterruptedException {
        waitUntil(condition, timeout, () -> what);
    }

    /** As {@link #waitUntil(BooleanSupplier, Duration, String)}, describing the state at the time it gave up. */
    public void waitUntil(final BooleanSupplier condition, final Duration timeout, final java.util.function.Supplier<String> what)
            throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what.get());
            }
            Thread.sleep(100);
        }
    }

    /** The {@code host:port} of the instance owning {@code distinctId}'s partition, as this instance's streams metadata says. */
    public String ownerOf(final String distinctId) {
        final org.apache.kafka.streams.KeyQueryMetadata owner = eddy.streams().orElseThrow().ownerOf(dev.eddy.stores.StoreNames.DISTINCT_IDS,
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
