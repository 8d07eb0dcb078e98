package dev.eddy.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class CapturedEventTest {
    private final Serde<CapturedEvent> serde = EventSerdes.capturedEvent();

    @Test
    void writesSnakeCaseJsonAndReadsItBack() throws Exception {
        final ObjectNode props = Json.mapper().createObjectNode().put("$current_url", "https://example.com");
        final CapturedEvent event = new CapturedEvent(1, "0190d5b4-0000-7000-8000-000000000001", 7, "phc_abc", "user-1",
                "$pageview", props, Instant.parse("2026-11-22T10:00:00.123Z"), Instant.parse("2026-11-22T10:00:01Z"),
                null, "127.0.0.1", null, null);

        final byte[] bytes = serde.serializer().serialize("events.ingest", event);
        final JsonNode json = Json.mapper().readTree(bytes);

        assertThat(json.get("distinct_id").asText()).isEqualTo("user-1");
        assertThat(json.get("project_id").asLong()).isEqualTo(7);
        assertThat(json.get("timestamp").asText()).isEqualTo("2026-11-22T10:00:00.123Z");
        assertThat(json.has("sent_at")).as("absent fields are left out").isFalse();
        assertThat(serde.deserializer().deserialize("events.ingest", bytes)).isEqualTo(event);
        assertThat(event.partitionKey()).isEqualTo("phc_abc:user-1");
    }

    @Test
    void unreadableOrIncompleteRecordsAreSerializationErrors() {
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", "{not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SerializationException.class);
        assertThatThrownBy(() -> serde.deserializer().deserialize("t",
                "{\"v\":1,\"uuid\":\"u\",\"project_id\":1,\"distinct_id\":\"d\"}".getBytes(StandardCharsets.UTF_8)))
                .as("no event name, no timestamp").isInstanceOf(SerializationException.class);
        assertThatThrownBy(() -> serde.deserializer().deserialize("t",
                "{\"v\":9,\"uuid\":\"u\",\"project_id\":1,\"distinct_id\":\"d\",\"event\":\"e\",\"timestamp\":\"2026-01-01T00:00:00Z\"}"
                        .getBytes(StandardCharsets.UTF_8)))
                .as("a newer version than this build understands").isInstanceOf(SerializationException.class);
    }
}
