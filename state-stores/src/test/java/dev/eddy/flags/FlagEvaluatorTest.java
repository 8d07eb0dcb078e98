package dev.eddy.flags;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FlagEvaluatorTest {
    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");

    @Test
    void conditionsAreTriedInOrderAndTheFirstMatchDecides() {
        final FlagDefinition flag = flag("{\"key\":\"beta\",\"filters\":{\"groups\":["
                + "{\"properties\":[{\"key\":\"email\",\"value\":\"@staff.com\",\"operator\":\"icontains\",\"type\":\"person\"}],\"rollout_percentage\":100},"
                + "{\"properties\":[],\"rollout_percentage\":0}]}}");

        final FlagEvaluator.Result staff = FlagEvaluator.evaluate(flag, person("u1", "{\"email\":\"ada@STAFF.com\"}"));
        final FlagEvaluator.Result other = FlagEvaluator.evaluate(flag, person("u2", "{\"email\":\"bob@gmail.com\"}"));

        assertThat(staff.enabled()).isTrue();
        assertThat(staff.reason()).isEqualTo("condition_match");
        assertThat(staff.conditionIndex()).contains(0);
        assertThat(staff.description()).isEqualTo("Matched condition set 1");
        assertThat(other.enabled()).isFalse();
        assertThat(other.reason()).as("the catch-all matched its properties but rolls out to 0%").isEqualTo("out_of_rollout_bound");
    }

    @Test
    void noMatchingConditionAndDisabledFlagsAreFalse() {
        final FlagDefinition flag = flag("{\"key\":\"f\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\"}]}]}}");
        final FlagDefinition inactive = flag("{\"key\":\"off\",\"active\":false,\"filters\":{\"groups\":[{\"properties\":[]}]}}");

        assertThat(FlagEvaluator.evaluate(flag, person("u", "{}")).reason()).isEqualTo("no_condition_match");
        assertThat(FlagEvaluator.evaluate(flag, person("u", "{\"plan\":\"PRO\"}")).enabled()).isTrue();
        assertThat(FlagEvaluator.evaluate(inactive, person("u", "{}")).reason()).isEqualTo("flag_disabled");
    }

    @Test
    void aConditionsVariantOverrideWinsOnlyWhenTheVariantExists() {
        final String variants = "\"multivariate\":{\"variants\":[{\"key\":\"control\",\"rollout_percentage\":50},"
                + "{\"key\":\"test\",\"rollout_percentage\":50}]}";
        final FlagDefinition forced = flag("{\"key\":\"exp\",\"filters\":{\"groups\":[{\"properties\":[],\"variant\":\"test\"}]," + variants + "}}");
        final FlagDefinition bogus = flag("{\"key\":\"exp\",\"filters\":{\"groups\":[{\"properties\":[],\"variant\":\"nope\"}]," + variants + "}}");

        for (int i = 0; i < 50; i++) {
            assertThat(FlagEvaluator.evaluate(forced, person("u" + i, "{}")).variant()).contains("test");
            assertThat(FlagEvaluator.evaluate(bogus, person("u" + i, "{}")).variant()).get().isIn("control", "test");
        }
    }

    @Test
    void payloadsFollowTheMatchedValue() {
        final FlagDefinition bool = flag("{\"key\":\"p\",\"filters\":{\"groups\":[{\"properties\":[]}],\"payloads\":{\"true\":\"{\\\"a\\\":1}\"}}}");
        final FlagDefinition multi = flag("{\"key\":\"m\",\"filters\":{\"groups\":[{\"properties\":[],\"variant\":\"b\"}],"
                + "\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":50},{\"key\":\"b\",\"rollout_percentage\":50}]},"
                + "\"payloads\":{\"a\":\"pa\",\"b\":\"pb\"}}}");

        assertThat(FlagEvaluator.evaluate(bool, person("u", "{}")).payload()).get().extracting(p -> p.asText()).isEqualTo("{\"a\":1}");
        assertThat(FlagEvaluator.evaluate(multi, person("u", "{}")).payload()).get().extracting(p -> p.asText()).isEqualTo("pb");
        assertThat(FlagEvaluator.evaluate(multi, person("u", "{}")).value()).isEqualTo("b");
    }

    @Test
    void groupFlagsHashTheGroupKeyAndReadGroupProperties() {
        final FlagDefinition flag = flag("{\"key\":\"company-beta\",\"filters\":{\"aggregation_group_type_index\":0,\"groups\":["
                + "{\"properties\":[{\"key\":\"seats\",\"value\":10,\"operator\":\"gte\",\"type\":\"group\",\"group_type_index\":0}],"
                + "\"rollout_percentage\":100}]}}");
        final Map<String, ObjectNode> groupProps = new HashMap<>();
        groupProps.put("company", json("{\"seats\":12}"));
        final FlagEvaluator.Subject withGroup = new FlagEvaluator.Subject("u", json("{}"), Map.of("company", "acme"), groupProps,
                Map.of(0, "company"), NOW);
        final FlagEvaluator.Subject without = new FlagEvaluator.Subject("u", json("{}"), Map.of(), Map.of(), Map.of(0, "company"), NOW);

        assertThat(FlagEvaluator.evaluate(flag, withGroup).enabled()).isTrue();
        assertThat(FlagEvaluator.evaluate(flag, without).reason()).isEqualTo("no_group_type");

        final FlagDefinition half = flag("{\"key\":\"g\",\"filters\":{\"aggregation_group_type_index\":0,\"groups\":[{\"properties\":[],"
                + "\"rollout_percentage\":50}]}}");
        for (int i = 0; i < 20; i++) {
            final FlagEvaluator.Subject member = new FlagEvaluator.Subject("user-" + i, json("{}"), Map.of("company", "acme"),
                    groupProps, Map.of(0, "company"), NOW);
            assertThat(FlagEvaluator.evaluate(half, member).enabled()).as("every member of a group gets the group's value")
                    .isEqualTo(FlagHash.of("g", "acme", "") <= 0.5);
        }
    }

    @Test
    void multivariateSplitHoldsWithinOnePercentOverAHundredThousandIds() {
        final FlagDefinition flag = flag("{\"key\":\"split\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}],"
                + "\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":50},{\"key\":\"b\",\"rollout_percentage\":30},"
                + "{\"key\":\"c\",\"rollout_percentage\":20}]}}}");
        final Map<String, Integer> counts = new HashMap<>();
        final int n = 100_000;
        for (int i = 0; i < n; i++) {
            counts.merge(FlagEvaluator.evaluate(flag, person("id-" + i, "{}")).variant().orElse("none"), 1, Integer::sum);
        }

        assertThat(counts.get("a") / (double) n).isCloseTo(0.50, org.assertj.core.data.Offset.offset(0.01));
        assertThat(counts.get("b") / (double) n).isCloseTo(0.30, org.assertj.core.data.Offset.offset(0.01));
        assertThat(counts.get("c") / (double) n).isCloseTo(0.20, org.assertj.core.data.Offset.offset(0.01));
        assertThat(counts).doesNotContainKey("none");
    }

    @Test
    void theConsistencyFlagsEvaluateLikeTheirHashes() {
        final FlagDefinition simple = flag("{\"key\":\"simple-flag\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":45}]}}");
        for (int i = 0; i < 100; i++) {
            assertThat(FlagEvaluator.evaluate(simple, person("distinct_id_" + i, "{}")).enabled())
                    .isEqualTo(FlagHash.of("simple-flag", "distinct_id_" + i, "") <= 0.45);
        }
    }

    private static FlagEvaluator.Subject person(final String id, final String properties) {
        return new FlagEvaluator.Subject(id, json(properties), Map.of(), Map.of(), Map.of(), NOW);
    }

    private static FlagDefinition flag(final String json) {
        return FlagDefinition.of(json(json));
    }

    private static ObjectNode json(final String json) {
        try {
            return (ObjectNode) Json.mapper().readTree(json);
        } catch (final Exception e) {
            throw new IllegalArgumentException(e);
        }
    }
}
