package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Persons who start anonymous and {@code $identify} on their third event, and the envelopes of the raw baseline. */
class InsightsEventsTest {
    private static final LocalDate LAST_DAY = LocalDate.of(2024, 3, 10);

    @Test
    void aShareOfThePersonsSendsTwoEventsAnonymouslyThenIdentifies() throws Exception {
        final InsightsEvents plain = new InsightsEvents(20_000, 500, 30, LAST_DAY, 7);
        final InsightsEvents events = new InsightsEvents(20_000, 500, 30, LAST_DAY, 7, 20, 0);
        // No random draw depends on identifying: the same persons, times and properties.
        assertThat(events.person).isEqualTo(plain.person);
        assertThat(events.millis).isEqualTo(plain.millis);
        assertThat(events.browser).isEqualTo(plain.browser);
        assertThat(events.url).isEqualTo(plain.url);
        assertThat(plain.anonymous).doesNotContain(true);

        final JsonNode batch = Json.mapper().readTree(events.batch("phc_x", 0, events.count, false)).get("batch");
        final Map<Integer, List<Integer>> byPerson = new HashMap<>();
        for (int i = 0; i < events.count; i++) {
            byPerson.computeIfAbsent(events.person[i], p -> new ArrayList<>()).add(i);
        }
        int identifies = 0;
        int identifyingPersons = 0;
        for (final Map.Entry<Integer, List<Integer>> e : byPerson.entrySet()) {
            final int p = e.getKey();
            final List<Integer> own = e.getValue();
            final boolean identifying = p % 100 < 20;
            for (int n = 0; n < own.size(); n++) {
                final int i = own.get(n);
                final JsonNode sent = batch.get(i);
                if (identifying && n < 2) {
                    assertThat(sent.get("distinct_id").asText()).isEqualTo("anon-" + p);
                    assertThat(sent.get("event").asText()).isEqualTo(InsightsEvents.NAMES[plain.name[i]]);
                } else if (identifying && n == 2) {
                    assertThat(sent.get("event").asText()).isEqualTo("$identify");
                    assertThat(sent.get("distinct_id").asText()).isEqualTo("person-" + p);
                    assertThat(sent.get("properties").get("$anon_distinct_id").asText()).isEqualTo("anon-" + p);
                    assertThat(sent.get("properties").has("amount")).isFalse();
                    identifies++;
                } else {
                    assertThat(sent.get("distinct_id").asText()).isEqualTo("person-" + p);
                    assertThat(sent.get("event").asText()).isEqualTo(InsightsEvents.NAMES[plain.name[i]]);
                    assertThat(sent.get("properties").has("$anon_distinct_id")).isFalse();
                }
            }
            identifyingPersons += identifying && own.size() > 2 ? 1 : 0;
        }
        assertThat(identifies).isEqualTo(identifyingPersons).isBetween(80, 120);
        try (DuckDbInsights duck = new DuckDbInsights(events)) {
            assertThat(Arrays.stream(duck.dailyCount("$identify").series().get("")).sum()).isEqualTo(identifies);
            assertThat(Arrays.stream(duck.dailyCount(null).series().get("")).sum()).isEqualTo(20_000);
        }
    }

    @Test
    void anEnvelopeCarriesWhatTheBatchSends() throws Exception {
        final InsightsEvents events = new InsightsEvents(1_000, 20, 2, LAST_DAY, 3, 100, 0);
        final JsonNode batch = Json.mapper().readTree(events.batch("phc_x", 0, events.count, false)).get("batch");
        final Instant now = Instant.parse("2024-03-11T12:00:00Z");
        for (int i = 0; i < events.count; i++) {
            final CapturedEvent e = events.envelope(i, "phc_x", now);
            final JsonNode sent = batch.get(i);
            assertThat(e.partitionKey()).isEqualTo("phc_x:" + sent.get("distinct_id").asText());
            assertThat(e.event()).isEqualTo(sent.get("event").asText());
            assertThat(e.uuid()).isEqualTo(sent.get("uuid").asText());
            assertThat(e.timestamp()).isEqualTo(Instant.parse(sent.get("timestamp").asText()));
            assertThat(Json.mapper().readTree(e.properties().toString())).isEqualTo(sent.get("properties"));
            assertThat(e.projectId()).isEqualTo(1);
            assertThat(e.now()).isEqualTo(now);
        }
        assertThat(events.anonymous[0]).as("every person of 100% starts anonymous").isTrue();
    }

    @Test
    void anotherIdSpaceHasOtherDistinctIdsAndUuids() throws Exception {
        final InsightsEvents first = new InsightsEvents(100, 10, 2, LAST_DAY, 3, 100, 0);
        final InsightsEvents other = new InsightsEvents(100, 10, 2, LAST_DAY, 3, 100, 7);
        assertThat(first.distinctId(0)).isEqualTo("anon-" + first.person[0]);
        assertThat(other.distinctId(0)).isEqualTo("s7-anon-" + other.person[0]);
        final JsonNode batch = Json.mapper().readTree(other.batch("phc_x", 0, other.count, false)).get("batch");
        for (int i = 0; i < other.count; i++) {
            assertThat(other.uuid(i)).isNotEqualTo(first.uuid(i)).isNotEqualTo(first.uuid(i + 1));
            assertThat(batch.get(i).get("distinct_id").asText()).startsWith("s7-");
            if (batch.get(i).get("event").asText().equals("$identify")) {
                assertThat(batch.get(i).get("properties").get("$anon_distinct_id").asText()).isEqualTo("s7-anon-" + other.person[i]);
            }
        }
        assertThat(other.uuid(5).version()).isEqualTo(4);
    }
}
