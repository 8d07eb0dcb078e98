package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestCertificates;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.stores.StoreNames;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS on the public port ({@code http.tls.*}) without an admin port: clients talk TLS, and the two instances of one
 * deployment read each other's stores over HTTPS too, trusting the deployment's certificate alone (the advertised host
 * is not checked against its names: the certificate is pinned).
 */
@ExtendWith(SharedInfrastructure.class)
class HttpsIT {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String SECRET = "https-test-internal-secret";
    private static final int USERS = 16;

    @TempDir
    static Path certificates;
    @TempDir
    static Path firstState;
    @TempDir
    static Path secondState;
    private static TestCertificates tls;
    private static TestEddy gateway;
    private static TestEddy other;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        tls = TestCertificates.create(certificates);
        final Map<String, String> https = Map.of("EDDY_HTTP_TLS_CERT_FILE", tls.cert().toString(),
                "EDDY_HTTP_TLS_KEY_FILE", tls.key().toString(), "EDDY_HTTP_INTERNAL_SECRET", SECRET);
        gateway = TestEddy.start(infra, firstState, https);
        final Map<String, String> streams = new java.util.HashMap<>(https);
        streams.putAll(Map.of("EDDY_ROLE", "streams", "EDDY_KAFKA_TOPIC_PREFIX", gateway.topicPrefix()));
        other = TestEddy.start(infra, secondState, streams);
        gateway.waitUntil(() -> gateway.eddy().streams().orElseThrow().isRunning()
                && gateway.eddy().streams().orElseThrow().routing().instancesWith(StoreNames.DISTINCT_IDS).size() == 2, WAIT,
                "both instances own partitions");
    }

    @AfterAll
    static void stop() {
        TestEddy.closeAll(gateway, other);
    }

    @Test
    void thePublicPortSpeaksTlsOnly() {
        assertThat(gateway.uri("/capture/").getScheme()).isEqualTo("https");
        final HttpResponse<String> live = gateway.get("/_health/live", Map.of());
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(live.sslSession()).isPresent();
        final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        assertThatThrownBy(() -> plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.eddy().port() + "/_health/live"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()))
                .as("plain HTTP on the HTTPS port").isInstanceOf(IOException.class);
        assertThatThrownBy(() -> plain.send(HttpRequest.newBuilder(gateway.uri("/_health/live")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()))
                .as("a client that does not trust the certificate").isInstanceOf(SSLHandshakeException.class);
    }

    @Test
    void instancesReadEachOthersStoresOverHttps() throws InterruptedException {
        final HttpResponse<String> flag = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"tls-pro\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}],"
                        + "\"rollout_percentage\":100}]}}");
        assertThat(flag.statusCode()).as(flag.body()).isEqualTo(201);
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final List<String> users = new ArrayList<>();
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < USERS; i++) {
            final String user = "tls-" + run + "-" + i;
            users.add(user);
            events.add("{\"event\":\"" + run + "_view\",\"distinct_id\":\"" + user + "\",\"uuid\":\"" + UUID.randomUUID()
                    + "\",\"properties\":{\"$set\":{\"plan\":\"pro\"}}}");
        }
        final HttpResponse<String> sent = gateway.post("/batch/", "{\"api_key\":\"" + gateway.projectToken() + "\",\"batch\":["
                + String.join(",", events) + "]}");
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        final String self = gateway.eddy().advertised();
        final List<String> remote = users.stream().filter(u -> !gateway.ownerOf(u).equals(self)).toList();
        assertThat(remote).as("some users live on the other instance").isNotEmpty();
        for (final String user : users) {
            gateway.waitUntil(() -> flags(user).path("flags").path("tls-pro").path("enabled").asBoolean(false), WAIT,
                    () -> user + "'s flag, read from " + gateway.ownerOf(user) + ": " + flags(user));
        }
        final String query = "{\"events\":[{\"id\":\"" + run + "_view\",\"math\":\"dau\"}],\"date_from\":\"-1d\",\"display\":\"BoldNumber\"}";
        gateway.waitUntil(() -> trend(query).path(0).path("aggregated_value").asInt() == USERS, WAIT,
                () -> "a trend gathered from both instances: " + trend(query));
        assertThat(gateway.get("/metrics", Map.of()).body()).containsPattern("eddy_iq_forward_seconds_count\\S* [1-9]");
    }

    private static JsonNode flags(final String user) {
        final HttpResponse<String> response = gateway.post("/flags/?v=2",
                "{\"token\":\"" + gateway.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static JsonNode trend(final String query) {
        final HttpResponse<String> response = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/insights/trend", query);
        return response.statusCode() == 200 ? TestEddy.json(response).path("result") : TestEddy.json(response);
    }

}
