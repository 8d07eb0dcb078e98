package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.flags.FlagHash;
import dev.eddy.gateway.testing.GeoIpTestDatabase;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flags end to end on a real broker and PostgreSQL: definitions created over the API, a person's properties set by
 * captured events, then /decide and /flags answer what PostHog would.
 */
@ExtendWith(SharedInfrastructure.class)
class DecideIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static Optional<Path> geoIp;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        final Map<String, String> env = new HashMap<>();
        geoIp = GeoIpTestDatabase.directory();
        geoIp.ifPresent(dir -> env.put("EDDY_GEOIP_DATABASE", dir.toString()));
        eddy = TestEddy.start(infra, stateDir, env);
        flag("{\"key\":\"simple-45\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":45}]}}");
        flag("{\"key\":\"pro-users\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":[\"pro\",\"team\"],"
                + "\"operator\":\"exact\",\"type\":\"person\"}],\"rollout_percentage\":100}],\"payloads\":{\"true\":\"{\\\"tier\\\":2}\"}}}");
        flag("{\"key\":\"multi\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}],\"multivariate\":{\"variants\":["
                + "{\"key\":\"control\",\"rollout_percentage\":50},{\"key\":\"test\",\"rollout_percentage\":50}]},"
                + "\"payloads\":{\"control\":\"c\",\"test\":\"t\"}}}");
        flag("{\"key\":\"continuity\",\"ensure_experience_continuity\":true,\"filters\":{\"groups\":[{\"properties\":[],"
                + "\"rollout_percentage\":50}]}}");
        flag("{\"key\":\"from-us\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"$geoip_country_code\",\"value\":\"US\","
                + "\"type\":\"person\"}],\"rollout_percentage\":100}]}}");
        flag("{\"key\":\"inactive\",\"active\":false,\"filters\":{\"groups\":[{\"properties\":[]}]}}");
        eddy.waitUntil(() -> decide("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"probe\"}")
                .path("flags").has("multi"), WAIT, "the definitions reached the streams instance");
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void aPersonsCapturedPropertiesDecideTheirFlags() throws InterruptedException {
        final String user = "decide-" + UUID.randomUUID();
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$identify\",\"distinct_id\":\""
                + user + "\",\"properties\":{\"$set\":{\"plan\":\"Pro\"}}}").statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> decide("/decide/?v=3", body(user)).path("featureFlags").path("pro-users").asBoolean(false), WAIT,
                "the person's plan reached the persons store");

        final JsonNode v3 = decide("/decide/?v=3", body(user));
        final JsonNode flags = v3.get("featureFlags");
        assertThat(flags.get("pro-users").asBoolean()).isTrue();
        assertThat(flags.get("simple-45").asBoolean()).isEqualTo(FlagHash.of("simple-45", user, "") <= 0.45);
        assertThat(flags.get("multi").asText()).isEqualTo(FlagHash.of("multi", user, "variant") < 0.5 ? "control" : "test");
        assertThat(flags.has("inactive")).as("inactive flags are absent").isFalse();
        assertThat(v3.get("featureFlagPayloads").get("pro-users").asText()).isEqualTo("{\"tier\":2}");
        assertThat(v3.get("errorsWhileComputingFlags").asBoolean()).isFalse();
        assertThat(v3.get("config").get("enable_collect_everything").asBoolean()).isTrue();
        assertThat(v3.get("supportedCompression")).isNotEmpty();

        final JsonNode v2 = decide("/flags/?v=2", body(user)).get("flags");
        assertThat(v2.get("pro-users").get("enabled").asBoolean()).isTrue();
        assertThat(v2.get("pro-users").get("reason").get("code").asText()).isEqualTo("condition_match");
        assertThat(v2.get("pro-users").get("reason").get("condition_index").asInt()).isZero();
        assertThat(v2.get("pro-users").get("metadata").get("version").asInt()).isEqualTo(1);
        assertThat(v2.get("multi").get("variant").asText()).isIn("control", "test");
        assertThat(v2.get("multi").get("metadata").get("payload").asText()).isEqualTo(v2.get("multi").get("variant").asText().substring(0, 1));
    }

    @Test
    void requestPropertiesOverrideTheStoredOnes() {
        final String stranger = "stranger-" + UUID.randomUUID();

        assertThat(decide("/decide/?v=3", body(stranger)).get("featureFlags").get("pro-users").asBoolean()).isFalse();
        assertThat(decide("/decide/?v=3", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + stranger
                + "\",\"person_properties\":{\"plan\":\"team\"}}").get("featureFlags").get("pro-users").asBoolean()).isTrue();
        final JsonNode v2 = decide("/decide/?v=2", body(stranger)).get("featureFlags");
        assertThat(v2.has("pro-users")).as("v2 lists enabled flags only").isFalse();
        assertThat(decide("/flags/?v=2", body(stranger)).get("flags").get("pro-users").get("reason").get("code").asText())
                .isEqualTo("no_condition_match");
    }

    @Test
    void gzipBodiesAndApiKeyWorkAndBadRequestsAreRefused() throws Exception {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(("{\"api_key\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"gz\"}").getBytes(StandardCharsets.UTF_8));
        }
        final HttpResponse<String> gzipped = eddy.send(HttpRequest.newBuilder(eddy.uri("/flags/?v=2"))
                .header("Content-Encoding", "gzip").POST(HttpRequest.BodyPublishers.ofByteArray(out.toByteArray())).build());
        assertThat(gzipped.statusCode()).as(gzipped.body()).isEqualTo(200);
        assertThat(TestEddy.json(gzipped).get("flags").has("multi")).isTrue();

        assertThat(eddy.post("/decide/?v=3", "{\"token\":\"phc_unknown\",\"distinct_id\":\"x\"}").statusCode()).isEqualTo(401);
        assertThat(eddy.post("/decide/?v=3", "{\"distinct_id\":\"x\"}").statusCode()).isEqualTo(401);
        assertThat(eddy.post("/decide/?v=3", "{\"token\":\"" + eddy.projectToken() + "\"}").statusCode()).isEqualTo(400);
        assertThat(eddy.post("/decide/?v=3", "not json").statusCode()).isEqualTo(400);
    }

    @Test
    void sdksWithAPersonalKeyDownloadTheDefinitionsWithAnEtag() {
        for (final String path : new String[] {"/api/feature_flag/local_evaluation/?token=", "/flags/definitions?token="}) {
            final HttpResponse<String> first = eddy.getAuthorized(path + eddy.projectToken());
            assertThat(first.statusCode()).as(path + first.body()).isEqualTo(200);
            final JsonNode body = TestEddy.json(first);
            assertThat(body.get("flags")).extracting(f -> f.get("key").asText())
                    .contains("simple-45", "pro-users", "multi", "inactive");
            assertThat(body.get("flags").get(0).has("filters")).isTrue();
            assertThat(body.has("group_type_mapping") && body.has("cohorts")).isTrue();
            final String etag = first.headers().firstValue("ETag").orElseThrow();

            final HttpResponse<String> again = eddy.get(path + eddy.projectToken(),
                    Map.of("Authorization", "Bearer " + eddy.personalKey(), "If-None-Match", etag));
            assertThat(again.statusCode()).isEqualTo(304);
            assertThat(again.body()).isEmpty();
            assertThat(eddy.get(path + eddy.projectToken(), Map.of()).statusCode()).isEqualTo(401);
            assertThat(eddy.getAuthorized(path + "phc_nope").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void experienceContinuityKeepsTheAnonymousValueAfterIdentifying() throws InterruptedException {
        final String[] ids = oppositeSides();
        final String anon = ids[0];
        final String user = ids[1];
        final boolean anonValue = FlagHash.of("continuity", anon, "") <= 0.5;
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$pageview\",\"distinct_id\":\""
                + anon + "\"}").statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> personExists(anon), WAIT, "the anonymous person exists");
        assertThat(decide("/decide/?v=3", body(anon)).path("featureFlags").path("continuity").asBoolean()).isEqualTo(anonValue);

        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$identify\",\"distinct_id\":\""
                + user + "\",\"properties\":{\"$anon_distinct_id\":\"" + anon + "\"}}").statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> personExists(user), WAIT, "the identified user joined the anonymous person");
        final String withAnon = "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user
                + "\",\"$anon_distinct_id\":\"" + anon + "\"}";
        final JsonNode first = decide("/flags/?v=2", withAnon);
        assertThat(first.path("errorsWhileComputingFlags").asBoolean()).isFalse();
        assertThat(first.path("flags").path("continuity").path("enabled").asBoolean()).isEqualTo(anonValue);
        // Later requests carry no $anon_distinct_id: the stored hash key still decides.
        assertThat(decide("/decide/?v=3", body(user)).path("featureFlags").path("continuity").asBoolean()).isEqualTo(anonValue);
        // A flag without continuity follows the distinct id as usual.
        assertThat(decide("/decide/?v=3", body(user)).path("featureFlags").path("simple-45").asBoolean())
                .isEqualTo(FlagHash.of("simple-45", user, "") <= 0.45);
    }

    @Test
    void experienceContinuityKeysFollowTheirPersonIntoAMerge() throws InterruptedException {
        final String[] ids = oppositeSides();
        final String anon = ids[0];
        final String user = ids[1];
        final boolean anonValue = FlagHash.of("continuity", anon, "") <= 0.5;
        for (final String id : List.of(anon, user)) {
            assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$pageview\","
                    + "\"distinct_id\":\"" + id + "\"}").statusCode()).isEqualTo(200);
            eddy.waitUntil(() -> personExists(id), WAIT, id + "'s person exists");
        }
        // The anonymous person's key, written while the two are separate persons.
        final String anonAsking = "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + anon
                + "\",\"$anon_distinct_id\":\"" + anon + "\"}";
        assertThat(decide("/decide/?v=3", anonAsking).path("featureFlags").path("continuity").asBoolean()).isEqualTo(anonValue);

        // Both persons exist: the anonymous one is merged into the user's, which had no key of its own.
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$identify\",\"distinct_id\":\""
                + user + "\",\"properties\":{\"$anon_distinct_id\":\"" + anon + "\"}}").statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> person(user).path("distinct_ids").size() == 2, WAIT, "the persons merged");
        assertThat(person(user).path("uuid").asText()).isEqualTo(dev.eddy.persons.PersonIds.personUuid(1, user));
        assertThat(person(anon).path("uuid").asText()).isEqualTo(dev.eddy.persons.PersonIds.personUuid(1, user));

        assertThat(decide("/decide/?v=3", body(user)).path("featureFlags").path("continuity").asBoolean())
                .as("the merged-away person's key decides for the survivor").isEqualTo(anonValue);
        assertThat(decide("/decide/?v=3", body(anon)).path("featureFlags").path("continuity").asBoolean()).isEqualTo(anonValue);
    }

    @Test
    void geoipPropertiesComeFromTheClientAddressUnlessDisabledOrOverridden() {
        assertThat(geoIp).as("the GeoIP database, installed with npm (node and npm are needed to build Eddy too)").isPresent();
        final String user = "geo-" + UUID.randomUUID();
        assertThat(decideFrom("8.8.8.8", body(user)).path("featureFlags").path("from-us").asBoolean())
                .as("8.8.8.8 is in the US").isTrue();
        assertThat(decideFrom("8.8.8.8, 10.0.0.1", body(user)).path("featureFlags").path("from-us").asBoolean())
                .as("the first X-Forwarded-For address is the client").isTrue();
        assertThat(decideFrom(null, body(user)).path("featureFlags").path("from-us").asBoolean())
                .as("loopback has no location").isFalse();
        assertThat(decideFrom("8.8.8.8", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user
                + "\",\"geoip_disable\":true}").path("featureFlags").path("from-us").asBoolean()).isFalse();
        assertThat(decideFrom("8.8.8.8", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user
                + "\",\"person_properties\":{\"$geoip_country_code\":\"FR\"}}").path("featureFlags").path("from-us").asBoolean())
                .as("the request's person_properties override the derived ones").isFalse();
    }

    private static JsonNode decideFrom(final String forwardedFor, final String body) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(eddy.uri("/decide/?v=3"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (forwardedFor != null) {
            request.header("X-Forwarded-For", forwardedFor);
        }
        final HttpResponse<String> response = eddy.send(request.build());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    /** An anonymous id and a user id that the continuity flag's 50% rollout puts on opposite sides. */
    private static String[] oppositeSides() {
        while (true) {
            final String anon = "anon-" + UUID.randomUUID();
            final String user = "user-" + UUID.randomUUID();
            if (FlagHash.of("continuity", anon, "") <= 0.5 != FlagHash.of("continuity", user, "") <= 0.5) {
                return new String[] {anon, user};
            }
        }
    }

    /** The person of a distinct id as the persons API gives it (missing when it has none). */
    private static JsonNode person(final String distinctId) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET",
                "/api/projects/1/persons/?distinct_id=" + distinctId, null);
        return response.statusCode() == 200 ? TestEddy.json(response).path("results").path(0)
                : com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }

    private static boolean personExists(final String distinctId) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET",
                "/api/projects/1/persons/?distinct_id=" + distinctId, null);
        return response.statusCode() == 200 && TestEddy.json(response).path("results").size() == 1;
    }

    private static String body(final String distinctId) {
        return "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + distinctId + "\"}";
    }

    private static JsonNode decide(final String path, final String body) {
        final HttpResponse<String> response = eddy.post(path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static void flag(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    }
}
