package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** Feature flag definitions over HTTP on a real PostgreSQL, and what is written to flags.definitions for them. */
class FeatureFlagsApiTest extends RouteTest {
    private static final String VARIANTS = "\"multivariate\":{\"variants\":[{\"key\":\"control\",\"rollout_percentage\":50},"
            + "{\"key\":\"test\",\"rollout_percentage\":50}]}";

    @Test
    void aFlagIsCreatedVersionedSoftDeletedAndPublished() throws Exception {
        final String key = "checkout-" + UUID.randomUUID().toString().substring(0, 8);
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"" + key + "\",\"name\":\"New checkout\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":30}],"
                        + VARIANTS + ",\"payloads\":{\"test\":\"{\\\"color\\\":\\\"red\\\"}\"}}}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode flag = TestEddy.json(created);
        final long id = flag.get("id").asLong();
        assertThat(flag.get("key").asText()).isEqualTo(key);
        assertThat(flag.get("active").asBoolean()).isTrue();
        assertThat(flag.get("version").asInt()).isEqualTo(1);
        assertThat(flag.get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(flag.get("filters").get("multivariate").get("variants")).hasSize(2);
        assertThat(flag.get("is_simple_flag").asBoolean()).isFalse();

        final JsonNode patched = TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/feature_flags/" + id + "/",
                "{\"active\":false}"));
        assertThat(patched.get("version").asInt()).isEqualTo(2);
        assertThat(patched.get("active").asBoolean()).isFalse();
        final JsonNode published = awaitLatest("1:" + key, v -> v != null && v.get("version").asInt() == 2);
        assertThat(published.get("active").asBoolean()).isFalse();
        assertThat(published.get("filters").get("payloads").get("test").asText()).contains("red");

        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/projects/1/feature_flags/" + id + "/", null).statusCode())
                .isEqualTo(204);
        assertThat(eddy.getAuthorized("/api/projects/1/feature_flags/" + id + "/").statusCode()).isEqualTo(404);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/feature_flags/?limit=1000")).get("results"))
                .extracting(r -> r.get("id").asLong()).doesNotContain(id);
        assertThat(awaitLatest("1:" + key, v -> v == null)).as("a tombstone").isNull();
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", "{\"key\":\"" + key + "\"}").statusCode())
                .as("a deleted flag's key is free again").isEqualTo(201);
    }

    @Test
    void badDefinitionsAre400() {
        final String key = "dup-" + UUID.randomUUID().toString().substring(0, 8);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", "{\"key\":\"" + key + "\"}").statusCode())
                .isEqualTo(201);

        for (final String[] bad : new String[][] {
                {"{\"key\":\"" + key + "\"}", "key"},
                {"{\"key\":\"has space\"}", "key"},
                {"{\"name\":\"no key\"}", "key"},
                {"{\"key\":\"v-" + key + "\",\"filters\":{\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":60},"
                        + "{\"key\":\"b\",\"rollout_percentage\":30}]}}}", "filters"},
                {"{\"key\":\"r-" + key + "\",\"filters\":{\"groups\":[{\"rollout_percentage\":101}]}}", "filters"},
                {"{\"key\":\"g-" + key + "\",\"filters\":{\"aggregation_group_type_index\":7}}", "filters"},
                {"{\"key\":\"c-" + key + "\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"id\",\"value\":4,\"type\":\"cohort\"}]}]}}",
                        "filters"},
                {"{\"key\":\"t-" + key + "\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":1,\"type\":\"planet\"}]}]}}",
                        "filters"},
                {"{\"key\":\"i-" + key + "\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"size\",\"value\":1,\"type\":\"group\"}]}]}}",
                        "filters"}}) {
            final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", bad[0]);
            assertThat(response.statusCode()).as(bad[0] + " " + response.body()).isEqualTo(400);
            assertThat(TestEddy.json(response).get("attr").asText()).as(bad[0]).isEqualTo(bad[1]);
        }
    }

    /** The latest value of {@code key} written to flags.definitions once {@code done} holds for it (null for a tombstone). */
    private static JsonNode awaitLatest(final String key, final java.util.function.Predicate<JsonNode> done) throws Exception {
        final JsonNode[] latest = new JsonNode[1];
        eddy.waitUntil(() -> {
            final List<ProducerRecord<String, byte[]>> written = eddy.written("flags.definitions").stream()
                    .filter(r -> r.key().equals(key)).toList();
            if (written.isEmpty()) {
                return false;
            }
            final byte[] value = written.get(written.size() - 1).value();
            try {
                latest[0] = value == null ? null : Json.mapper().readTree(value);
            } catch (final java.io.IOException e) {
                throw new AssertionError(e);
            }
            return done.test(latest[0]);
        }, Duration.ofSeconds(10), () -> "flags.definitions reaching the expected state for " + key + ": " + latest[0]);
        return latest[0];
    }
}
