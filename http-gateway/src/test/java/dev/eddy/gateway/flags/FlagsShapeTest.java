package dev.eddy.gateway.flags;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.flags.FlagEvaluator;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The /flags?v=2 answer, written from cached per-outcome entries, is the shape SDKs parse, for every outcome. */
class FlagsShapeTest {

    @Test
    void everyOutcomeIsWrittenInFull() throws Exception {
        final FlagsService.Evaluation evaluation = evaluate("alice", List.of(
                flag(1, "plain", 3, "{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}],\"payloads\":{\"true\":\"{\\\"a\\\":1}\"}}"),
                flag(2, "nobody", 1, "{\"groups\":[{\"properties\":[],\"rollout_percentage\":0}]}"),
                flag(3, "pro-only", 1, "{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}]}"),
                flag(4, "multi", 2, "{\"groups\":[{\"properties\":[],\"rollout_percentage\":100,\"variant\":\"test\"}],"
                        + "\"multivariate\":{\"variants\":[{\"key\":\"control\",\"rollout_percentage\":50},{\"key\":\"test\",\"rollout_percentage\":50}]},"
                        + "\"payloads\":{\"test\":\"[1,2]\"}}")), true);

        for (int round = 0; round < 2; round++) {
            // The second round from the cached entries, with the configuration keys (config=true).
            final boolean config = round == 1;
            final JsonNode answer = Json.mapper().readTree(DecideRoutes.flagsShape(evaluation, config).getBytes());
            assertThat(answer.has("supportedCompression")).isEqualTo(config);
            if (config) {
                assertThat(answer.get("supportedCompression").toString()).isEqualTo("[\"gzip\",\"gzip-js\"]");
                assertThat(answer.get("sessionRecording").asBoolean(true)).isFalse();
                assertThat(answer.get("config").get("enable_collect_everything").asBoolean()).isTrue();
            }
            assertThat(answer.get("errorsWhileComputingFlags").asBoolean()).isTrue();
            assertThat(answer.get("requestId").asText()).hasSize(36);
            final JsonNode flags = answer.get("flags");
            assertThat(flags.size()).isEqualTo(4);

            final JsonNode plain = flags.get("plain");
            assertThat(plain.get("key").asText()).isEqualTo("plain");
            assertThat(plain.get("enabled").asBoolean()).isTrue();
            assertThat(plain.get("variant").isNull()).isTrue();
            assertThat(plain.get("reason").get("code").asText()).isEqualTo("condition_match");
            assertThat(plain.get("reason").get("condition_index").asInt()).isZero();
            assertThat(plain.get("reason").get("description").asText()).isEqualTo("Matched condition set 1");
            assertThat(plain.get("metadata").get("id").asLong()).isEqualTo(1);
            assertThat(plain.get("metadata").get("version").asLong()).isEqualTo(3);
            assertThat(plain.get("metadata").get("description").isNull()).isTrue();
            assertThat(plain.get("metadata").get("payload").asText()).isEqualTo("{\"a\":1}");

            final JsonNode nobody = flags.get("nobody");
            assertThat(nobody.get("enabled").asBoolean()).isFalse();
            assertThat(nobody.get("reason").get("code").asText()).isEqualTo("out_of_rollout_bound");
            assertThat(nobody.get("metadata").get("payload").isNull()).isTrue();

            final JsonNode proOnly = flags.get("pro-only");
            assertThat(proOnly.get("enabled").asBoolean()).isFalse();
            assertThat(proOnly.get("reason").get("code").asText()).isEqualTo("no_condition_match");
            assertThat(proOnly.get("reason").get("condition_index").isNull()).isTrue();

            final JsonNode multi = flags.get("multi");
            assertThat(multi.get("variant").asText()).isEqualTo("test");
            assertThat(multi.get("metadata").get("version").asLong()).isEqualTo(2);
            assertThat(multi.get("metadata").get("payload").asText()).isEqualTo("[1,2]");
        }
    }

    @Test
    void aNewVersionOfAFlagIsWrittenAfresh() throws Exception {
        final String filters = "{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}],\"payloads\":{\"true\":\"old\"}}";
        final JsonNode before = Json.mapper().readTree(DecideRoutes.flagsShape(
                evaluate("bob", List.of(flag(9, "versioned", 1, filters)), false), false).getBytes());
        final JsonNode after = Json.mapper().readTree(DecideRoutes.flagsShape(evaluate("bob",
                List.of(flag(9, "versioned", 2, filters.replace("old", "new"))), false), false).getBytes());
        assertThat(before.get("flags").get("versioned").get("metadata").get("payload").asText()).isEqualTo("old");
        assertThat(after.get("flags").get("versioned").get("metadata").get("payload").asText()).isEqualTo("new");
        assertThat(after.get("flags").get("versioned").get("metadata").get("version").asLong()).isEqualTo(2);
        assertThat(after.get("errorsWhileComputingFlags").asBoolean()).isFalse();
    }

    private static FlagDefinition flag(final long id, final String key, final long version, final String filters) throws Exception {
        return FlagDefinition.of(Json.mapper().readTree("{\"id\":" + id + ",\"key\":\"" + key + "\",\"version\":" + version
                + ",\"filters\":" + filters + "}"));
    }

    private static FlagsService.Evaluation evaluate(final String distinctId, final List<FlagDefinition> flags, final boolean errors) {
        final FlagEvaluator.Subject subject = new FlagEvaluator.Subject(distinctId, Json.mapper().createObjectNode(), Map.of(),
                Map.of(), Map.of(), Instant.now());
        final List<FlagEvaluator.Result> results = new ArrayList<>();
        final Map<String, FlagDefinition> byKey = new LinkedHashMap<>();
        for (final FlagDefinition flag : flags) {
            results.add(FlagEvaluator.evaluate(flag, subject));
            byKey.put(flag.key(), flag);
        }
        return new FlagsService.Evaluation(results, byKey, errors);
    }
}
