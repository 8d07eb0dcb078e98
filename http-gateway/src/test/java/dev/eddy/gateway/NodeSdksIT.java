package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.NodeScripts;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostHog's JavaScript SDKs that run in node (npm, pinned in src/test/js), unmodified, against Eddy: posthog-node
 * identifies a user and captures, then asks for flags remotely ({@code /flags}) and evaluates them locally from
 * {@code /flags/definitions}, both agreeing with {@code /decide}; posthog-js-lite (on {@code @posthog/core}, the core
 * posthog-react-native runs on) captures as an anonymous visitor, identifies, joins a group and gets its flags.
 */
@ExtendWith(SharedInfrastructure.class)
class NodeSdksIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, stateDir, Map.of());
        for (final String body : List.of(
                "{\"key\":\"pro-users\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}],"
                        + "\"payloads\":{\"true\":\"{\\\"tier\\\":2}\"}}}",
                "{\"key\":\"half\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":50}]}}",
                "{\"key\":\"abc\",\"filters\":{\"groups\":[{\"properties\":[]}],\"multivariate\":{\"variants\":["
                        + "{\"key\":\"a\",\"rollout_percentage\":34},{\"key\":\"b\",\"rollout_percentage\":33},{\"key\":\"c\",\"rollout_percentage\":33}]}}}")) {
            assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", body).statusCode()).isEqualTo(201);
        }
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void posthogNodeIdentifiesAndItsRemoteAndLocalFlagsAgreeWithDecide() throws Exception {
        final String user = "node-" + UUID.randomUUID();
        final String host = "http://127.0.0.1:" + eddy.eddy().port();
        assertThat(sdk("identify", host, user).get("sent").asInt()).isEqualTo(2);
        eddy.waitUntil(() -> decide(user).path("pro-users").asBoolean(false), WAIT, "the SDK's $identify set plan=pro on the person");

        final JsonNode seen = sdk("flags", host, user);
        final JsonNode decided = decide(user);

        for (final String key : List.of("pro-users", "half", "abc")) {
            assertThat(seen.get("remoteFlags").get(key)).as("remote " + key).isEqualTo(decided.get(key));
            assertThat(seen.get("localFlags").get(key)).as("local " + key).isEqualTo(decided.get(key));
        }
        assertThat(seen.get("remoteFlags").get("pro-users").asBoolean()).isTrue();
        assertThat(seen.get("remotePayload").get("tier").asInt()).isEqualTo(2);
    }

    @Test
    void posthogJsLiteMergesItsAnonymousVisitorAndGetsItsFlags() throws Exception {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final String user = "lite-" + run;
        final NodeScripts.Run lite = NodeScripts.run("posthog-js-lite-check.mjs",
                List.of("http://127.0.0.1:" + eddy.eddy().port(), eddy.projectToken(), user, "half", run), Map.of(),
                Duration.ofSeconds(60));
        assertThat(lite.exitCode()).as("posthog-js-lite-check.mjs; its output:%n%s", lite.output()).isZero();
        final JsonNode seen = lite.summary();
        assertThat(seen.get("flag")).as("the flag as the SDK got it").isEqualTo(decide(user).get("half"));
        assertThat(seen.get("flags").get("abc")).isEqualTo(decide(user).get("abc"));

        // The SDK sends each event as soon as it is captured, so they may arrive in any order, and they take paths of
        // different lengths (a count is one hop past identity, a group two): "lite after" can be counted before the
        // $identify that sets plan or the $groupidentify is applied. Wait for all three.
        final String groupPath = "/api/projects/1/groups/find?group_type_index=0&group_key=lite-" + run;
        eddy.waitUntil(() -> eddy.eventCounts().getOrDefault("lite after " + run, 0L) == 1
                && eddy.eventCounts().getOrDefault("lite before " + run, 0L) == 1
                && personOf(user).path("properties").has("plan")
                && TestEddy.json(eddy.getAuthorized(groupPath)).has("group_properties"), WAIT,
                () -> "counts " + eddy.eventCounts() + ", person " + personOf(user));
        final JsonNode person = personOf(user);
        final List<String> ids = new java.util.ArrayList<>();
        person.get("distinct_ids").forEach(id -> ids.add(id.asText()));
        assertThat(ids).containsExactlyInAnyOrder(user, seen.get("anonymousId").asText());
        assertThat(person.get("properties").get("plan").asText()).isEqualTo("pro");
        final JsonNode group = TestEddy.json(eddy.getAuthorized(groupPath));
        assertThat(group.get("group_properties").get("name").asText()).isEqualTo("Lite Ltd");
    }

    /** The person of {@code distinctId} as the persons API lists it; a missing node while it has none. */
    private static JsonNode personOf(final String distinctId) {
        return TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?distinct_id=" + distinctId)).path("results").path(0);
    }

    private static JsonNode decide(final String user) {
        final HttpResponse<String> response = eddy.post("/decide/?v=3",
                "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        return response.statusCode() == 200 ? TestEddy.json(response).get("featureFlags") : Json.mapper().createObjectNode();
    }

    private static JsonNode sdk(final String mode, final String host, final String user) throws Exception {
        final NodeScripts.Run run = NodeScripts.run("posthog-node-check.mjs",
                List.of(mode, host, eddy.projectToken(), eddy.personalKey(), user), Map.of(), Duration.ofSeconds(60));
        assertThat(run.exitCode()).as("posthog-node-check.mjs %s; its output:%n%s", mode, run.output()).isZero();
        return run.summary();
    }
}
