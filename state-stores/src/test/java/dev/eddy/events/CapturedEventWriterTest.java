package dev.eddy.events;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class CapturedEventWriterTest {
    private static final ObjectNode PROPS = (ObjectNode) read("{\"$lib\":\"web\",\"n\":1.5,\"list\":[1,\"ü\",null],"
            + "\"nested\":{\"a\":{\"b\":true}},\"quote\":\"\\\"x\\\"\\n\"}");

    @Test
    void writesExactlyWhatDataBindingWritesWithEveryField() throws Exception {
        final CapturedEvent full = new CapturedEvent(1, "0190d5b4-0000-7000-8000-000000000001", 7, "phc_abc", "user-1",
                "$pageview", PROPS, Instant.parse("2026-11-22T10:00:00.123Z"), Instant.parse("2026-11-22T10:00:01Z"),
                Instant.parse("2026-11-22T10:00:00.500Z"), "127.0.0.1", "http://eddy:8000", "web");

        assertThat(new String(CapturedEventWriter.write(full), StandardCharsets.UTF_8))
                .isEqualTo(Json.mapper().writeValueAsString(full));
    }

    @Test
    void leavesOutAbsentFieldsAsDataBindingDoes() throws Exception {
        final CapturedEvent sparse = new CapturedEvent(1, "0190d5b4-0000-7000-8000-000000000002", 7, null, "user-2",
                "e", Json.mapper().createObjectNode(), Instant.parse("2026-11-22T10:00:00Z"), null, null, null, null, null);

        assertThat(new String(CapturedEventWriter.write(sparse), StandardCharsets.UTF_8))
                .isEqualTo(Json.mapper().writeValueAsString(sparse));
    }

    @Test
    void rawPropertiesAreWrittenVerbatimAndReadBackAsTheSameTree() {
        final String sent = "{ \"$lib\" : \"web\", \"n\":1.5,\"list\":[1,\"ü\",null],\"nested\":{\"a\":{\"b\":true}},"
                + "\"quote\":\"\\\"x\\\"\\n\" }";
        final CapturedEvent event = new CapturedEvent(1, "0190d5b4-0000-7000-8000-000000000003", 7, "phc_abc", "user-3",
                "e", PROPS, Instant.parse("2026-11-22T10:00:00Z"), Instant.parse("2026-11-22T10:00:00Z"), null,
                "10.0.0.1", null, "web");

        final byte[] written = CapturedEventWriter.write(event, sent.getBytes(StandardCharsets.UTF_8));

        assertThat(new String(written, StandardCharsets.UTF_8)).contains("\"properties\":" + sent + ",\"timestamp\"");
        assertThat(EventSerdes.capturedEvent().deserializer().deserialize("t", written)).isEqualTo(event);
    }

    private static com.fasterxml.jackson.databind.JsonNode read(final String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (final Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
