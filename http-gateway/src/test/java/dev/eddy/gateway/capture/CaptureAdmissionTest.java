package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which events of a request are kept and the topic and key each is written with. */
class CaptureAdmissionTest {
    private static final EventBuilder.RequestContext CONTEXT = new EventBuilder.RequestContext(1, "phc_t", Instant.parse("2026-11-28T10:00:00Z"),
            Optional.empty(), "203.0.113.7", "http://127.0.0.1:8000", Optional.empty());

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void aKeyPastItsBurstOverflowsUnkeyedAndInvalidEventsAreDroppedAndCounted() {
        final CaptureAdmission admission = admission(Map.of("EDDY_CAPTURE_OVERFLOW_BURST", "2", "EDDY_CAPTURE_OVERFLOW_EVENTS_PER_SECOND", "1"));

        final List<EventProducer.Outgoing> records = admission.admit(request("{\"api_key\":\"phc_t\",\"batch\":["
                + "{\"event\":\"a\",\"distinct_id\":\"hot\"},{\"event\":\"b\",\"distinct_id\":\"hot\"},{\"event\":\"c\",\"distinct_id\":\"hot\"},"
                + "{\"event\":\"d\",\"distinct_id\":\"cold\"},{\"distinct_id\":\"hot\"}]}"), CONTEXT);

        assertThat(records).extracting(EventProducer.Outgoing::topic)
                .containsExactly("events.ingest", "events.ingest", "events.overflow", "events.ingest");
        assertThat(records).extracting(EventProducer.Outgoing::key).containsExactly("phc_t:hot", "phc_t:hot", null, "phc_t:cold");
        assertThat(registry.get("eddy.capture.events").tag("topic", "events.ingest").counter().count()).isEqualTo(3);
        assertThat(registry.get("eddy.capture.events").tag("topic", "events.overflow").counter().count()).isEqualTo(1);
        assertThat(registry.get("eddy.capture.events.dropped").tag("reason", "missing_event_name").counter().count()).isEqualTo(1);
    }

    @Test
    void aHistoricalBatchStaysKeyedAndInOrderWhateverItsRate() {
        final CaptureAdmission admission = admission(Map.of("EDDY_CAPTURE_OVERFLOW_BURST", "1", "EDDY_CAPTURE_OVERFLOW_EVENTS_PER_SECOND", "1"));

        final List<EventProducer.Outgoing> records = admission.admit(request("{\"api_key\":\"phc_t\",\"historical_migration\":true,"
                + "\"batch\":[{\"event\":\"a\",\"distinct_id\":\"u\"},{\"event\":\"b\",\"distinct_id\":\"u\"},{\"event\":\"c\",\"distinct_id\":\"u\"}]}"),
                CONTEXT);

        assertThat(records).extracting(EventProducer.Outgoing::topic).containsOnly("events.historical").hasSize(3);
        assertThat(records).extracting(EventProducer.Outgoing::key).containsOnly("phc_t:u");
    }

    private CaptureAdmission admission(final Map<String, String> env) {
        final EddyConfig config = ConfigLoader.load(env, Optional.empty());
        return new CaptureAdmission(EddyTopics.of(config.kafka()), config.capture().overflow(), registry);
    }

    private static CaptureRequest request(final String json) {
        return CaptureRequest.parse(json.getBytes(StandardCharsets.UTF_8));
    }
}
