package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The configuration keys of {@code /decide} and {@code /flags} answers, each with its value, as PostHog's flags service
 * answers a project that has switched on nothing but analytics and flags ({@code config_response_builder.rs}, from the
 * remote config Python builds: {@code RemoteConfig.build_config}), and the same as Eddy's remote config says. A project
 * without flags here: the flags themselves are DecideIT's and the SDK tests'.
 */
class FlagsConfigKeysTest extends RouteTest {
    /** Every configuration key and its value; {@code quotaLimited} only appears for a project over a quota. */
    private static final String CONFIG = """
            {"config":{"enable_collect_everything":true},"toolbarParams":{},"isAuthenticated":false,
             "supportedCompression":["gzip","gzip-js"],"captureDeadClicks":false,"capturePerformance":false,
             "autocapture_opt_out":false,"autocaptureExceptions":false,"analytics":{"endpoint":"/i/v0/e/"},
             "elementsChainAsString":true,"errorTracking":{"autocaptureExceptions":false,"suppressionRules":[]},
             "logs":{"captureConsoleLogs":false},"sessionRecording":false,"heatmaps":false,"conversations":false,
             "surveys":false,"productTours":false,"defaultIdentifiedOnly":true,"siteApps":[]}""";

    @Test
    void decideV3AnswersEveryFlagWithPayloadsAndTheConfiguration() {
        assertThat(answer("/decide/?v=3")).isEqualTo(withConfig("{\"errorsWhileComputingFlags\":false,\"featureFlags\":{},"
                + "\"featureFlagPayloads\":{}}"));
    }

    @Test
    void decideV4AnswersTheFlagsV2ShapeWithTheConfiguration() {
        assertThat(answer("/decide/?v=4")).isEqualTo(withConfig("{\"errorsWhileComputingFlags\":false,\"flags\":{}}"));
    }

    @Test
    void flagsWithConfigOrWithNeitherVersionNorConfigCarryTheConfiguration() {
        final ObjectNode expected = withConfig("{\"errorsWhileComputingFlags\":false,\"flags\":{}}");
        assertThat(answer("/flags/?v=2&config=true")).isEqualTo(expected);
        assertThat(answer("/flags?v=2&config")).as("a bare config is true").isEqualTo(expected);
        assertThat(answer("/flags/")).as("PostHog reads neither as v=2&config=true").isEqualTo(expected);
    }

    @Test
    void flagsWithoutConfigCarryNoConfigurationKey() {
        final ObjectNode bare = json("{\"errorsWhileComputingFlags\":false,\"flags\":{}}");
        assertThat(answer("/flags/?v=2")).isEqualTo(bare);
        assertThat(answer("/flags/?v=2&config=false")).isEqualTo(bare);
        assertThat(answer("/flags/?v=1")).isEqualTo(json("{\"errorsWhileComputingFlags\":false,\"featureFlags\":{},"
                + "\"featureFlagPayloads\":{}}"));
    }

    @Test
    void theConfigurationIsRemoteConfigsButForWhatOnlyFlagsAnswersCarry() {
        final ObjectNode remote = (ObjectNode) RouteTier.json(eddy.get("/array/" + eddy.projectToken() + "/config", Map.of()));
        final ObjectNode config = json(CONFIG);

        assertThat(minus(fields(config), fields(remote))).as("only in flags answers, as PostHog's")
                .containsExactly("config", "isAuthenticated", "toolbarParams");
        assertThat(minus(fields(remote), fields(config))).as("only in remote config").containsExactly("hasFeatureFlags", "token");
        for (final String key : fields(config)) {
            if (remote.has(key)) {
                assertThat(remote.get(key)).as(key).isEqualTo(config.get(key));
            }
        }
    }

    /** The answer to a POST of a known token and a distinct id, checked for and then without its requestId and evaluatedAt. */
    private static ObjectNode answer(final String path) {
        final long before = System.currentTimeMillis();
        final HttpResponse<String> response = eddy.post(path, "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"config-keys\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final ObjectNode body = (ObjectNode) RouteTier.json(response);
        assertThat(UUID.fromString(body.remove("requestId").asText()).version()).isEqualTo(4);
        assertThat(body.remove("evaluatedAt").asLong()).as("epoch milliseconds").isBetween(before, System.currentTimeMillis());
        return body;
    }

    private static ObjectNode withConfig(final String flags) {
        final ObjectNode answer = json(flags);
        answer.setAll(json(CONFIG));
        return answer;
    }

    private static Set<String> fields(final JsonNode node) {
        final Set<String> names = new TreeSet<>();
        for (final Iterator<String> it = node.fieldNames(); it.hasNext();) {
            names.add(it.next());
        }
        return names;
    }

    private static Set<String> minus(final Set<String> a, final Set<String> b) {
        final Set<String> rest = new TreeSet<>(a);
        rest.removeAll(b);
        return rest;
    }

    private static ObjectNode json(final String json) {
        try {
            return (ObjectNode) Json.mapper().readTree(json);
        } catch (final IOException e) {
            throw new AssertionError(e);
        }
    }
}
