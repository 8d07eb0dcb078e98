package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventBuilderTest {
    private static final Instant NOW = Instant.parse("2026-11-22T12:00:00Z");

    @Test
    void buildsTheEnvelopeFromAFullEvent() {
        final CapturedEvent e = build("{\"event\":\"$pageview\",\"distinct_id\":\"u1\",\"uuid\":\"0190d5b4-0000-7000-8000-000000000001\","
                + "\"timestamp\":\"2026-11-22T11:00:00.5+01:00\",\"properties\":{\"$current_url\":\"https://x\"}}").orElseThrow();

        assertThat(e.event()).isEqualTo("$pageview");
        assertThat(e.distinctId()).isEqualTo("u1");
        assertThat(e.uuid()).isEqualTo("0190d5b4-0000-7000-8000-000000000001");
        assertThat(e.timestamp()).isEqualTo(Instant.parse("2026-11-22T10:00:00.5Z"));
        assertThat(e.properties().get("$current_url").asText()).isEqualTo("https://x");
        assertThat(e.projectId()).isEqualTo(7);
        assertThat(e.now()).isEqualTo(NOW);
        assertThat(e.partitionKey()).isEqualTo("phc_t:u1");
    }

    @Test
    void distinctIdFromPropertiesIsStringifiedAndCut() {
        assertThat(build("{\"event\":\"e\",\"properties\":{\"distinct_id\":12345}}").orElseThrow().distinctId()).isEqualTo("12345");
        assertThat(build("{\"event\":\"e\",\"$distinct_id\":\"dollar\"}").orElseThrow().distinctId()).isEqualTo("dollar");
        assertThat(build("{\"event\":\"e\",\"distinct_id\":\"" + "x".repeat(300) + "\"}").orElseThrow().distinctId()).hasSize(200);
    }

    @Test
    void eventsWithoutNameOrDistinctIdAreNotIngested() {
        assertThat(build("{\"distinct_id\":\"u\"}")).isEmpty();
        assertThat(build("{\"event\":\"  \",\"distinct_id\":\"u\"}")).isEmpty();
        assertThat(build("{\"event\":42,\"distinct_id\":\"u\"}")).isEmpty();
        assertThat(build("{\"event\":\"e\"}")).isEmpty();
        assertThat(build("{\"event\":\"e\",\"distinct_id\":\"\"}")).isEmpty();
        assertThat(build("{\"event\":\"e\",\"distinct_id\":{\"a\":1}}")).isEmpty();
    }

    @Test
    void missingOrInvalidUuidGetsAServerAssignedUuidV7() {
        final CapturedEvent e = build("{\"event\":\"e\",\"distinct_id\":\"u\",\"uuid\":\"not-a-uuid\"}").orElseThrow();

        assertThat(UUID.fromString(e.uuid()).version()).isEqualTo(7);
    }

    @Test
    void timestampWithoutZoneIsUtcAndUnparseableTimestampIsNow() {
        assertThat(build("{\"event\":\"e\",\"distinct_id\":\"u\",\"timestamp\":\"2026-11-20T08:30:00\"}").orElseThrow().timestamp())
                .isEqualTo(Instant.parse("2026-11-20T08:30:00Z"));
        assertThat(build("{\"event\":\"e\",\"distinct_id\":\"u\",\"timestamp\":\"yesterday\"}").orElseThrow().timestamp()).isEqualTo(NOW);
        assertThat(build("{\"event\":\"e\",\"distinct_id\":\"u\"}").orElseThrow().timestamp()).isEqualTo(NOW);
    }

    @Test
    void topLevelSetIsFoldedIntoProperties() {
        final CapturedEvent e = build("{\"event\":\"$identify\",\"distinct_id\":\"u\",\"$set\":{\"email\":\"a@b.c\"},"
                + "\"$set_once\":{\"first\":true}}").orElseThrow();

        assertThat(e.properties().get("$set").get("email").asText()).isEqualTo("a@b.c");
        assertThat(e.properties().get("$set_once").get("first").asBoolean()).isTrue();
    }

    @Test
    void propertiesAsSentPassThroughUnlessTheBuilderChangedThem() {
        final EventBuilder.RequestContext context = new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                "127.0.0.1", "http://localhost", Optional.empty());
        final CaptureRequest.RawEvent[] events = CaptureRequest.parse(("{\"api_key\":\"phc_t\",\"batch\":["
                + "{\"event\":\"e\",\"distinct_id\":\"u\",\"properties\":{\"a\": 1}},"
                + "{\"event\":\"e\",\"distinct_id\":\"u\",\"properties\":{\"a\": 1},\"$set\":{\"b\":2}}]}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).events().toArray(CaptureRequest.RawEvent[]::new);

        final EventBuilder.Accepted unchanged = (EventBuilder.Accepted) EventBuilder.build(events[0], context);
        final EventBuilder.Accepted folded = (EventBuilder.Accepted) EventBuilder.build(events[1], context);

        assertThat(new String(unchanged.rawProperties(), java.nio.charset.StandardCharsets.UTF_8)).as("as sent, PostHog's $ip appended")
                .isEqualTo("{\"a\": 1,\"$ip\":\"127.0.0.1\"}");
        assertThat(folded.rawProperties()).as("top-level $set was folded in: the tree is written").isNull();
        assertThat(folded.event().properties().get("$set").get("b").asInt()).isEqualTo(2);
    }

    @Test
    void theCaptureAddressIsTheEventsIpUnlessItSentOneOrIsReplayed() {
        final EventBuilder.RequestContext live = new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                "203.0.113.9", "http://localhost", Optional.empty());
        assertThat(properties("{\"a\":1}", live).get("$ip").asText()).isEqualTo("203.0.113.9");
        assertThat(properties("{\"$ip\":\"198.51.100.7\"}", live).get("$ip").asText()).as("its own").isEqualTo("198.51.100.7");
        for (final String empty : new String[] {"{\"$ip\":null}", "{\"$ip\":\"\"}"}) {
            final EventBuilder.Accepted built = (EventBuilder.Accepted) EventBuilder.build(rawEvent(empty), live);
            assertThat(built.event().properties().get("$ip").asText()).as(empty).isEqualTo("203.0.113.9");
            assertThat(built.rawProperties()).as(empty + ": a key replaced, so written from the tree").isNull();
        }
        final EventBuilder.RequestContext replayed = new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                "203.0.113.9", "http://localhost", Optional.empty(), GeoIpTransformation.Lookups.NONE, true);
        assertThat(properties("{\"a\":1}", replayed).has("$ip")).as("a historical migration's events as first captured").isFalse();
        final EventBuilder.RequestContext noAddress = new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                null, "http://localhost", Optional.empty());
        assertThat(properties("{\"a\":1}", noAddress).has("$ip")).isFalse();
    }

    private static JsonNode properties(final String properties, final EventBuilder.RequestContext context) {
        final EventBuilder.Accepted built = (EventBuilder.Accepted) EventBuilder.build(rawEvent(properties), context);
        return built.event().properties();
    }

    private static CaptureRequest.RawEvent rawEvent(final String properties) {
        final com.fasterxml.jackson.databind.node.ObjectNode event = (com.fasterxml.jackson.databind.node.ObjectNode) json(
                "{\"event\":\"e\",\"distinct_id\":\"u\"}");
        event.set("properties", json(properties));
        return new CaptureRequest.RawEvent(event, properties.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void dropsCarryTheReasonForTheMetric() {
        assertThat(built("{\"distinct_id\":\"u\"}")).isEqualTo(new EventBuilder.Dropped("missing_event_name"));
        assertThat(built("{\"event\":\"e\"}")).isEqualTo(new EventBuilder.Dropped("missing_distinct_id"));
        assertThat(built("{\"event\":\"e\",\"distinct_id\":\" \"}")).isEqualTo(new EventBuilder.Dropped("empty_distinct_id"));
    }

    @Test
    void engageEventsWithoutANameBecomeIdentify() {
        final EventBuilder.RequestContext engage = new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                "127.0.0.1", "http://localhost", Optional.of("$identify"));
        final EventBuilder.Built built = EventBuilder.build(json("{\"$distinct_id\":\"u\",\"$set\":{\"plan\":\"pro\"}}"), engage);

        final CapturedEvent e = ((EventBuilder.Accepted) built).event();
        assertThat(e.event()).isEqualTo("$identify");
        assertThat(e.properties().get("$set").get("plan").asText()).isEqualTo("pro");
    }

    @Test
    void sentAtCorrectsClockSkewAndIsKept() {
        final EventBuilder.RequestContext skewed = new EventBuilder.RequestContext(7, "phc_t", NOW,
                Optional.of(NOW.plusSeconds(5)), "127.0.0.1", "http://localhost", Optional.empty());
        final CapturedEvent e = ((EventBuilder.Accepted) EventBuilder.build(
                json("{\"event\":\"e\",\"distinct_id\":\"u\",\"timestamp\":\"2026-11-22T11:59:55Z\",\"properties\":{\"$lib\":\"web\"}}"),
                skewed)).event();

        assertThat(e.timestamp()).isEqualTo(Instant.parse("2026-11-22T11:59:50Z"));
        assertThat(e.sentAt()).isEqualTo(NOW.plusSeconds(5));
        assertThat(e.lib()).isEqualTo("web");
        assertThat(e.siteUrl()).isEqualTo("http://localhost");
    }

    private static EventBuilder.Built built(final String json) {
        return EventBuilder.build(json(json), new EventBuilder.RequestContext(7, "phc_t", NOW, Optional.empty(),
                "127.0.0.1", "http://localhost", Optional.empty()));
    }

    private static Optional<CapturedEvent> build(final String json) {
        return built(json) instanceof EventBuilder.Accepted a ? Optional.of(a.event()) : Optional.empty();
    }

    private static JsonNode json(final String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
    }
}
