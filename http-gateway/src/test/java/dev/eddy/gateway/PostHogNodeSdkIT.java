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
 * The real posthog-node SDK (npm, pinned in src/test/js) against Eddy: it identifies a user and captures, then asks
 * for flags remotely ({@code /flags}) and evaluates them locally from {@code /flags/definitions}; both must agree with
 * {@code /decide}.
 */
@ExtendWith(SharedInfrastructure.class)
class PostHogNodeSdkIT {
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
