package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.streams.InternalProtocol;
import dev.eddy.gateway.streams.InternalSecret;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two streams instances of one application share the partitions: the gateway's instance answers /decide and the
 * persons API for every user, reading the distinct ids and persons the other instance owns over its internal route.
 * Both serve their operator routes on an admin port of their own ({@code http.admin-port}), so every read between them
 * goes there.
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
        gateway = TestEddy.start(infra, firstState, Map.of("EDDY_HTTP_INTERNAL_SECRET", SECRET, "EDDY_HTTP_ADMIN_PORT", "0"));
        other = TestEddy.start(infra, secondState, Map.of("EDDY_ROLE", "streams", "EDDY_HTTP_INTERNAL_SECRET", SECRET,
                "EDDY_KAFKA_TOPIC_PREFIX", gateway.topicPrefix(), "EDDY_HTTP_ADMIN_PORT", "0"));
        gateway.waitUntil(() -> owners().size() == 2, WAIT, "both instances own partitions");
        final HttpResponse<String> created = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"pro\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}],"
                        + "\"rollout_percentage\":100}]}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    }

    @AfterAll
    static void stop() {
        TestEddy.closeAll(gateway, other);
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
        final Set<String> remote = users.stream().filter(u -> !gateway.ownerOf(u).equals(gateway.eddy().advertised())).collect(Collectors.toSet());
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
        // The persons list counts every instance's persons once, and pages over all of them.
        final JsonNode all = TestEddy.json(gateway.request(gateway.personalKey(), "GET", "/api/projects/1/persons/?limit=100", null));
        final long everyone = all.path("count").asLong();
        assertThat(everyone).isGreaterThanOrEqualTo(USERS);
        assertThat(all.path("results").size()).isEqualTo((int) Math.min(100, everyone));
        assertThat(all.findValuesAsText("uuid").stream().distinct().count()).isEqualTo(all.path("results").size());
        final JsonNode page = TestEddy.json(gateway.request(gateway.personalKey(), "GET", "/api/projects/1/persons/?limit=5&offset=3", null));
        assertThat(page.path("count").asLong()).isEqualTo(everyone);
        assertThat(page.findValuesAsText("uuid")).containsExactlyElementsOf(all.findValuesAsText("uuid").subList(3, 8));
        final String metrics = gateway.get("/metrics", Map.of()).body();
        assertThat(metrics).containsPattern("eddy_iq_forward_seconds_count\\S* [1-9]");
        // Each instance reports its own share: rebalances it went through, the persons in its partitions, its lag.
        assertThat(metrics).containsPattern("eddy_streams_rebalances_total [1-9]");
        assertThat(metrics).containsPattern("eddy_store_entries\\{store=\"persons\"} [1-9]");
        assertThat(metrics).containsPattern("eddy_streams_lag_records [0-9]");
        // The stores' one RocksDB budget and what of it is in use: some, never much more than it.
        final double budget = gateway.config().streams().rocksdbMemoryBytes();
        assertThat(metrics).contains("eddy_rocksdb_memory_budget_bytes " + budget);
        final java.util.regex.Matcher used = java.util.regex.Pattern.compile("(?m)^eddy_rocksdb_memory_used_bytes (\\S+)$").matcher(metrics);
        assertThat(used.find()).as("the budget's use reported").isTrue();
        assertThat(Double.parseDouble(used.group(1))).isPositive().isLessThanOrEqualTo(budget * 1.1);
        assertThat(other.get("/metrics", Map.of()).body()).containsPattern("eddy_store_entries\\{store=\"persons\"} [1-9]");
        assertThat(other.get("/_health/ready", Map.of()).statusCode()).isEqualTo(200);
        assertThat(other.get("/_health/live", Map.of()).statusCode()).isEqualTo(200);
    }

    /**
     * 24 persons, each on one of the two instances' partitions: a $pageview three days ago (half of them with
     * {@code plan: pro} set, browsers alternating), a signup two days ago and, for every third person, a purchase a
     * day ago. Every trend and funnel counts every instance's persons exactly once, person filters included.
     */
    @Test
    void trendsAndFunnelsAddUpEveryInstancesPartitions() throws InterruptedException {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final java.time.Instant day = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.DAYS);
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < USERS; i++) {
            final String user = "insight-" + run + "-" + i;
            events.add(event(run + "_view", user, day.minus(Duration.ofDays(3)).plusSeconds(60L * i),
                    "\"$browser\":\"" + (i % 2 == 0 ? "Chrome" : "Firefox") + "\"" + (i < USERS / 2 ? ",\"$set\":{\"plan\":\"pro\"}" : "")));
            events.add(event(run + "_signup", user, day.minus(Duration.ofDays(2)).plusSeconds(60L * i), "\"n\":1"));
            if (i % 3 == 0) {
                events.add(event(run + "_purchase", user, day.minus(Duration.ofDays(1)).plusSeconds(60L * i), "\"n\":1"));
            }
        }
        final HttpResponse<String> sent = gateway.post("/batch/", "{\"api_key\":\"" + gateway.projectToken()
                + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        final String steps = "{\"events\":[{\"id\":\"" + run + "_view\",\"order\":0},{\"id\":\"" + run + "_signup\",\"order\":1},"
                + "{\"id\":\"" + run + "_purchase\",\"order\":2}],\"date_from\":\"-7d\"}";
        gateway.waitUntil(() -> counts(insight("funnel", steps)).equals(List.of(24, 24, 8)), WAIT, "the funnel over both instances");

        final JsonNode total = insight("trend", "{\"events\":[{\"id\":\"" + run + "_view\",\"math\":\"dau\"}],\"date_from\":\"-7d\","
                + "\"display\":\"BoldNumber\"}");
        assertThat(total.path(0).path("aggregated_value").asInt()).isEqualTo(24);
        final JsonNode pro = insight("trend", "{\"events\":[{\"id\":\"" + run + "_view\"}],\"date_from\":\"-7d\","
                + "\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}");
        assertThat(pro.path(0).path("count").asInt()).as("person properties read where each person lives").isEqualTo(12);
        final JsonNode browsers = insight("trend", "{\"events\":[{\"id\":\"" + run + "_view\"}],\"date_from\":\"-7d\","
                + "\"breakdown\":\"$browser\"}");
        assertThat(browsers.size()).isEqualTo(2);
        assertThat(browsers).extracting(b -> b.path("breakdown_value").asText()).containsExactly("Chrome", "Firefox");
        assertThat(browsers.path(0).path("count").asInt() + browsers.path(1).path("count").asInt()).isEqualTo(24);
        final JsonNode all = insight("trend", "{\"events\":[{\"id\":\"" + run + "_signup\"}],\"date_from\":\"all\"}");
        assertThat(all.path(0).path("count").asInt()).as("date_from all starts at the earliest event of either instance").isEqualTo(24);
        assertThat(gateway.get("/metrics", Map.of()).body()).containsPattern("eddy_scatter_partial_seconds_count\\S* [1-9]");
    }

    @Test
    void operatorRoutesAreServedOnTheAdminPortOnly() throws Exception {
        final int adminPort = gateway.eddy().adminPort().orElseThrow();
        assertThat(gateway.eddy().advertised()).as("other instances are sent to the admin port").isEqualTo("127.0.0.1:" + adminPort);
        final java.net.http.HttpClient client = gateway.http();
        for (final String path : List.of("/metrics", "/_internal/stores/" + StoreNames.PERSONS + "/get?routing_key=1:x&key=1:x",
                "/_internal/scatter/trend")) {
            final HttpResponse<String> onPublic = client.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + gateway.eddy().port() + path)).header(InternalSecret.HEADER, SECRET).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(onPublic.statusCode()).as(path + " on the public port").isEqualTo(404);
        }
        assertThat(gateway.get("/metrics", Map.of()).body()).as("on the admin port").contains("eddy_streams_running");
        for (final int port : new int[] {gateway.eddy().port(), adminPort}) {
            for (final String probe : List.of("/_health/live", "/_health/ready", "/_health/gateway")) {
                final HttpResponse<String> answer = client.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + probe)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as(probe + " on " + port).isEqualTo(200);
            }
        }
        final HttpResponse<String> capture = client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
                + adminPort + "/capture/")).POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(capture.statusCode()).as("the public routes are not on the admin port").isEqualTo(404);
    }

    @Test
    void theInsightsRouteNeedsTheSharedSecret() {
        final java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(other.uri("/_internal/scatter/trend"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"scope\":{\"project_id\":1},\"partitions\":[0]}"))
                .header(InternalSecret.HEADER, "wrong").build();
        assertThat(other.send(request).statusCode()).isEqualTo(401);
    }

    private static String event(final String name, final String user, final java.time.Instant at, final String properties) {
        return "{\"event\":\"" + name + "\",\"distinct_id\":\"" + user + "\",\"uuid\":\"" + UUID.randomUUID()
                + "\",\"timestamp\":\"" + at + "\",\"properties\":{" + properties + "}}";
    }

    private static JsonNode insight(final String kind, final String query) {
        final HttpResponse<String> response = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/insights/" + kind, query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).path("result");
    }

    private static List<Integer> counts(final JsonNode funnel) {
        final List<Integer> counts = new ArrayList<>();
        funnel.forEach(step -> counts.add(step.path("count").asInt()));
        return counts;
    }

    @Test
    void theInternalRouteNeedsTheSharedSecret() throws InterruptedException {
        final String path = "/_internal/stores/" + StoreNames.PERSONS + "/get?routing_key=1:x&key=1:x";
        assertThat(other.get(path, Map.of()).statusCode()).isEqualTo(401);
        assertThat(other.get(path, Map.of(InternalSecret.HEADER, "not-the-secret-at-all")).statusCode()).isEqualTo(401);
        assertThat(other.get(path, Map.of(InternalSecret.HEADER, SECRET)).statusCode()).as("no protocol version")
                .isEqualTo(422);
        final Map<String, String> signed = Map.of(InternalSecret.HEADER, SECRET, InternalProtocol.HEADER,
                Integer.toString(InternalProtocol.VERSION));
        assertThat(other.get("/_internal/stores/feature_flags/get?routing_key=a&key=a", signed).statusCode())
                .as("only the persons' stores are readable").isEqualTo(404);
        // As a standby: the instance's own copy of a partition (with one standby replica, two instances hold every one).
        other.waitUntil(() -> other.get(path + "&stale_partition=0", signed).statusCode() == 404, WAIT,
                "the second instance's copy of partition 0 answers (a 503 until its standby copy is ready)");
        assertThat(other.get(path + "&stale_partition=zero", signed).statusCode()).isEqualTo(400);
        assertThat(other.get(path + "&stale_partition=0", Map.of()).statusCode()).isEqualTo(401);
    }

    private static JsonNode decide(final String user) {
        final HttpResponse<String> response = gateway.post("/flags/?v=2",
                "{\"token\":\"" + gateway.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }


    private static Set<String> owners() {
        final StreamsApp app = gateway.eddy().streams().orElseThrow();
        if (!app.isRunning()) {
            return Set.of();
        }
        return app.routing().instancesWith(StoreNames.DISTINCT_IDS).stream()
                .map(m -> m.hostInfo().host() + ":" + m.hostInfo().port()).collect(Collectors.toSet());
    }
}
