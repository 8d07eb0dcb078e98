package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.streams.KeyReads;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two streams instances of one application share the partitions: the gateway's instance answers /decide and the
 * persons API for every user, reading the distinct ids and persons the other instance owns over its internal route.
 */
@ExtendWith(SharedInfrastructure.class)
class CrossInstanceReadsIT {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String SECRET = "cross-instance-test-secret";
    private static final int USERS = 24;

    @TempDir
    static Path firstState;
    @TempDir
    static Path secondState;
    private static TestEddy gateway;
    private static TestEddy other;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        gateway = TestEddy.start(infra, firstState, Map.of("EDDY_HTTP_INTERNAL_SECRET", SECRET));
        other = TestEddy.start(infra, secondState, Map.of("EDDY_ROLE", "streams", "EDDY_HTTP_INTERNAL_SECRET", SECRET,
                "EDDY_KAFKA_TOPIC_PREFIX", gateway.topicPrefix()));
        gateway.waitUntil(() -> owners().size() == 2, WAIT, "both instances own partitions");
        final HttpResponse<String> created = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"pro\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}],"
                        + "\"rollout_percentage\":100}]}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    }

    @AfterAll
    static void stop() {
        if (other != null) {
            other.close();
        }
        if (gateway != null) {
            gateway.close();
        }
    }

    @Test
    void everyUserIsAnsweredWhicheverInstanceOwnsThem() throws InterruptedException {
        final List<String> users = new ArrayList<>();
        for (int i = 0; i < USERS; i++) {
            final String user = "cross-" + i + "-" + UUID.randomUUID();
            users.add(user);
            assertThat(gateway.post("/capture/", "{\"api_key\":\"" + gateway.projectToken() + "\",\"event\":\"$identify\","
                    + "\"distinct_id\":\"" + user + "\",\"properties\":{\"$set\":{\"plan\":\"pro\"}}}").statusCode()).isEqualTo(200);
        }
        final Set<String> remote = users.stream().filter(u -> !owner(u).equals(gateway.eddy().advertised())).collect(Collectors.toSet());
        assertThat(remote).as("some users' distinct ids live on the other instance").isNotEmpty();

        for (final String user : users) {
            gateway.waitUntil(() -> decide(user).path("flags").path("pro").path("enabled").asBoolean(false), WAIT,
                    "/decide reads " + user + "'s plan");
            final JsonNode answer = decide(user);
            assertThat(answer.path("errorsWhileComputingFlags").asBoolean()).isFalse();
            final JsonNode persons = TestEddy.json(gateway.request(gateway.personalKey(), "GET",
                    "/api/projects/1/persons/?distinct_id=" + user, null));
            assertThat(persons.path("results").size()).as(user).isEqualTo(1);
            assertThat(persons.path("results").get(0).path("properties").path("plan").asText()).isEqualTo("pro");
        }
        assertThat(gateway.get("/metrics", Map.of()).body()).containsPattern("eddy_iq_forward_seconds_count\\S* [1-9]");
    }

    @Test
    void theInternalRouteNeedsTheSharedSecret() {
        final String path = "/_internal/stores/" + StoreNames.PERSONS + "/get?routing_key=1:x&key=1:x";
        assertThat(other.get(path, Map.of()).statusCode()).isEqualTo(401);
        assertThat(other.get(path, Map.of(KeyReads.SECRET_HEADER, "not-the-secret-at-all")).statusCode()).isEqualTo(401);
        assertThat(other.get("/_internal/stores/feature_flags/get?routing_key=a&key=a", Map.of(KeyReads.SECRET_HEADER, SECRET))
                .statusCode()).as("only the persons' stores are readable").isEqualTo(404);
    }

    private static JsonNode decide(final String user) {
        final HttpResponse<String> response = gateway.post("/flags/?v=2",
                "{\"token\":\"" + gateway.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    /** The instance that owns a user's distinct id, as the gateway's streams metadata says. */
    private static String owner(final String user) {
        final StreamsApp app = gateway.eddy().streams().orElseThrow();
        final KeyQueryMetadata owner = app.ownerOf(StoreNames.DISTINCT_IDS, gateway.projectToken() + ":" + user, new StringSerializer());
        return owner.activeHost().host() + ":" + owner.activeHost().port();
    }

    private static Set<String> owners() {
        final StreamsApp app = gateway.eddy().streams().orElseThrow();
        if (!app.isRunning()) {
            return Set.of();
        }
        return app.instancesWith(StoreNames.DISTINCT_IDS).stream()
                .map(m -> m.hostInfo().host() + ":" + m.hostInfo().port()).collect(Collectors.toSet());
    }
}
