package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.GatewayIT;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/** Feature flag definitions over HTTP on a real PostgreSQL, and their publication to flags.definitions. */
class FeatureFlagsApiIT extends GatewayIT {
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

    /** The latest value of {@code key} on flags.definitions once {@code done} holds for it (null for a tombstone). */
    private static JsonNode awaitLatest(final String key, final java.util.function.Predicate<JsonNode> done) throws Exception {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, eddy.eddy().config().kafka().bootstrap());
        p.putAll(dev.eddy.gateway.testing.Infrastructure.kafkaClientProperties());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "flags-it-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(eddy.topic("flags.definitions")));
            final Map<String, JsonNode> latest = new HashMap<>();
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(300))) {
                    latest.put(r.key(), r.value() == null ? null : Json.mapper().readTree(r.value()));
                }
                if (latest.containsKey(key) && done.test(latest.get(key))) {
                    return latest.get(key);
                }
            }
            throw new AssertionError("flags.definitions never reached the expected state for " + key + ": " + latest.get(key));
        }
    }
}
