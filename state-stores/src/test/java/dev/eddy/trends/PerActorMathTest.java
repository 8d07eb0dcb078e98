package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The per-actor math of trends ({@code avg_count_per_actor}, ...), over PostHog's {@code _create_event_count_per_actor_events}
 * fixture and with the numbers its trends tests assert ({@code posthog/hogql_queries/insights/trends/test/test_trends.py}).
 */
class PerActorMathTest {
    private static final Instant NOW = Instant.parse("2020-02-01T00:00:00Z");
    private static final Map<String, String> FRUIT = Map.of("A", "{\"fruit\":\"mango\"}", "T", "{\"fruit\":\"mango\"}", "M", "{}",
            "R", "{\"fruit\":\"tomato\"}");
    /** (person, event, time, event properties): A has two distinct ids in PostHog's fixture, one person here. */
    private static final List<String[]> EVENTS = List.of(
            e("A", "viewed video", "2020-01-01T00:06:02Z", "{\"color\":\"red\"}"),
            e("A", "viewed video", "2020-01-01T00:06:02Z", "{}"),
            e("R", "viewed video", "2020-01-01T00:06:02Z", "{\"color\":\"blue\"}"),
            e("T", "sign up", "2020-01-01T00:06:02Z", "{}"),
            e("M", "sign up", "2020-01-03T19:06:34Z", "{}"),
            e("T", "viewed video", "2020-01-04T23:17:00Z", "{\"color\":\"red\"}"),
            e("A", "viewed video", "2020-01-05T19:06:34Z", "{\"color\":\"blue\"}"),
            e("T", "viewed video", "2020-01-05T19:06:34Z", "{\"color\":\"red\"}"),
            e("T", "viewed video", "2020-01-05T19:06:34Z", "{\"color\":\"red\"}"),
            e("T", "viewed video", "2020-01-05T19:06:34Z", "{\"color\":\"blue\"}"));
    private static final String RANGE = "\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-07\"";

    private static String[] e(final String person, final String event, final String at, final String properties) {
        return new String[] {person, event, at, properties};
    }

    @Test
    void eachDayAveragesTheEventsOfThePersonsWhoHadAny() {
        final JsonNode daily = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}]," + RANGE + "}").get(0);
        assertThat(doubles(daily.get("data"))).containsExactly(1.5, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0);
        assertThat(daily.get("action").get("math").asText()).isEqualTo("avg_count_per_actor");

        final JsonNode weekly = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}],\"interval\":\"week\"," + RANGE + "}")
                .get(0);
        assertThat(weekly.get("days").toString()).isEqualTo("[\"2019-12-29\",\"2020-01-05\"]");
        assertThat(doubles(weekly.get("data"))).containsExactly(1.3333333333333333, 2.0);

        assertThat(doubles(run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"max_count_per_actor\"}]," + RANGE + "}").get(0).get("data")))
                .containsExactly(2.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0);
    }

    @Test
    void aTotalValueCountsEachPersonsEventsOverTheWholeRange() {
        final JsonNode table = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}],\"display\":\"ActionsTable\","
                + RANGE + "}").get(0);
        assertThat(table.get("aggregated_value").asDouble()).as("8 events of 3 persons").isEqualTo(2.6666666666666665);
    }

    @Test
    void breakdownsByEventAndPersonProperties() {
        final ArrayNode byColor = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}],\"breakdown\":\"color\"," + RANGE + "}");
        assertThat(byColor).extracting(i -> i.get("breakdown_value").asText()).containsExactly("red", "blue", "$$_posthog_breakdown_null_$$");
        assertThat(doubles(byColor.get(0).get("data"))).containsExactly(1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0);
        assertThat(doubles(byColor.get(1).get("data"))).containsExactly(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0);
        assertThat(doubles(byColor.get(2).get("data"))).containsExactly(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);

        final ArrayNode byFruit = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}],\"breakdown\":\"fruit\","
                + "\"breakdown_type\":\"person\"," + RANGE + "}");
        assertThat(byFruit).extracting(i -> i.get("breakdown_value").asText()).containsExactly("mango", "tomato");
        assertThat(doubles(byFruit.get(0).get("data"))).containsExactly(2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0);
        assertThat(doubles(byFruit.get(1).get("data"))).containsExactly(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);

        final ArrayNode table = run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"avg_count_per_actor\"}],\"breakdown\":\"color\","
                + "\"display\":\"ActionsTable\"," + RANGE + "}");
        assertThat(table).extracting(i -> i.get("aggregated_value").asDouble()).containsExactly(2.0, 1.0, 1.0);
    }

    @Test
    void quantilesInterpolateAsClickHousesQuantile() {
        // Jan 1: A 2, R 1; Jan 5: A 1, T 3. PostHog has no test of these; ClickHouse's quantile interpolates at (n - 1)·p.
        assertThat(doubles(run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"median_count_per_actor\"}]," + RANGE + "}").get(0).get("data")))
                .containsExactly(1.5, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0);
        assertThat(run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"p90_count_per_actor\"}]," + RANGE + "}").get(0).get("data").get(4).asDouble())
                .isCloseTo(2.8, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(doubles(run("{\"events\":[{\"id\":\"viewed video\",\"math\":\"min_count_per_actor\"}]," + RANGE + "}").get(0).get("data")))
                .containsExactly(1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0);
    }

    /** The query over the fixture as two instances would read it (A and T on one, the others on the other, as bytes). */
    private static ArrayNode run(final String json) {
        final TrendQuery trend = TrendQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        final TrendQuery.Partial first = trend.partial();
        final TrendQuery.Partial second = trend.partial();
        final PropertyLookup persons = new PropertyLookup() {
            @Override
            public ObjectNode person(final String person) {
                return (ObjectNode) read(FRUIT.get(person));
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                return Json.mapper().createObjectNode();
            }
        };
        for (final String[] e : EVENTS) {
            final TimelineEvent event = new TimelineEvent(Instant.parse(e[2]).toEpochMilli() * 1000, UUID.randomUUID(), e[1], e[0], Map.of(),
                    e[3].getBytes(StandardCharsets.UTF_8));
            trend.add(e[0].equals("A") || e[0].equals("T") ? first : second, e[0], event, persons, NOW);
        }
        return trend.result(first.merge(trend.decode(second.encode())));
    }

    private static double[] doubles(final JsonNode array) {
        final double[] values = new double[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asDouble();
        }
        return values;
    }
}
