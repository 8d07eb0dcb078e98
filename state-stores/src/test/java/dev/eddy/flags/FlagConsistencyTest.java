package dev.eddy.flags;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * PostHog's cross-library consistency vectors (posthog-python's test_simple_flag_consistency and
 * test_multivariate_flag_consistency, also in posthog-node): for distinct_id_0..999, whether a 45% flag is on,
 * and which variant a 55% multivariate flag picks. Every PostHog SDK and server gives exactly these answers.
 */
class FlagConsistencyTest {

    @Test
    void simpleRolloutMatchesPostHogForAThousandIds() throws IOException {
        final List<String> lines = vectors();
        assertThat(lines.get(0)).isEqualTo("SIMPLE key=simple-flag rollout=45");
        final String expected = lines.get(1);

        final StringBuilder actual = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            actual.append(FlagHash.of("simple-flag", "distinct_id_" + i, "") <= 0.45 ? '1' : '0');
        }

        assertThat(actual.toString()).isEqualTo(expected);
    }

    @Test
    void multivariateVariantsMatchPostHogForAThousandIds() throws IOException {
        final List<String> lines = vectors();
        assertThat(lines.get(2)).startsWith("MULTI key=multivariate-flag rollout=55");
        final String[] expected = lines.get(3).split(",");
        final FlagDefinition flag = FlagDefinition.of(Json.mapper().readTree("{\"key\":\"multivariate-flag\",\"filters\":{"
                + "\"groups\":[{\"properties\":[],\"rollout_percentage\":55}],\"multivariate\":{\"variants\":["
                + "{\"key\":\"first-variant\",\"rollout_percentage\":50},{\"key\":\"second-variant\",\"rollout_percentage\":20},"
                + "{\"key\":\"third-variant\",\"rollout_percentage\":20},{\"key\":\"fourth-variant\",\"rollout_percentage\":5},"
                + "{\"key\":\"fifth-variant\",\"rollout_percentage\":5}]}}}"));

        for (int i = 0; i < 1000; i++) {
            final String id = "distinct_id_" + i;
            final Object value = FlagEvaluator.evaluate(flag, new FlagEvaluator.Subject(id, Json.mapper().createObjectNode(),
                    Map.of(), Map.of(), Map.of(), Instant.EPOCH)).value();
            assertThat(String.valueOf(value)).as(id).isEqualTo(expected[i]);
        }
    }

    private static List<String> vectors() throws IOException {
        try (InputStream in = FlagConsistencyTest.class.getResourceAsStream("/flags/posthog-consistency.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }
}
