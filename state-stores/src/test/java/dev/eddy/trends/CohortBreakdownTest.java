package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Trends broken down by cohorts ({@code breakdown_type: cohort}) on PostHog's own cases ({@code test_trends.py}:
 * {@code test_breakdown_by_cohort}, {@code test_trends_breakdown_single_aggregate_cohorts},
 * {@code test_breakdown_multiple_cohorts}, {@code test_breakdown_single_cohort}, {@code test_breakdown_by_empty_cohort}):
 * an event counts under every listed cohort its person is in, and under {@code all}; read from timelines and from
 * event blocks alike.
 */
class CohortBreakdownTest {
    /** Persons by name, each with {@code name} set to it, and their uuids. */
    private final Map<String, UUID> persons = new HashMap<>();
    private final List<EventBlock.Row> rows = new ArrayList<>();
    private final PropertyLookup lookup = new PropertyLookup() {
        @Override
        public ObjectNode person(final String personUuid) {
            return persons.entrySet().stream().filter(e -> e.getValue().toString().equals(personUuid)).findFirst()
                    .map(e -> Json.mapper().createObjectNode().put("name", e.getKey())).orElse(Json.mapper().createObjectNode());
        }

        @Override
        public ObjectNode group(final int typeIndex, final String groupKey) {
            return Json.mapper().createObjectNode();
        }
    };

    private CohortBreakdownTest event(final String person, final String name, final String time) {
        final UUID uuid = persons.computeIfAbsent(person, p -> UUID.nameUUIDFromBytes(p.getBytes(StandardCharsets.UTF_8)));
        rows.add(new EventBlock.Row(TimelineEvent.micros(LocalDateTime.parse(time).toInstant(ZoneOffset.UTC)), UUID.randomUUID(), uuid, person, name,
                Map.of(), Json.mapper().createObjectNode()));
        return this;
    }

    /** A cohort of the persons named {@code names} (one group each: any of them), inlined as the gateway inlines it. */
    private static String cohort(final long id, final String name, final String... names) {
        final StringBuilder groups = new StringBuilder();
        for (final String n : names) {
            groups.append(groups.isEmpty() ? "" : ",").append("{\"type\":\"AND\",\"values\":[{\"key\":\"name\",\"type\":\"person\",\"value\":\"")
                    .append(n).append("\"}]}");
        }
        return "\"" + id + "\":{\"id\":" + id + ",\"name\":\"" + name + "\",\"filters\":{\"properties\":{\"type\":\"OR\",\"values\":[" + groups + "]}}}";
    }

    /** The trend over every event's timeline, asserting that the same events in blocks give the same answer. */
    private JsonNode run(final String query, final Instant now) {
        final TrendQuery trend = TrendQuery.parse(read(query), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, now, Optional::empty);
        final TrendQuery.Partial byTimeline = trend.partial();
        for (final EventBlock.Row row : rows) {
            trend.add(byTimeline, row.person().toString(), new TimelineEvent(row.timeMicros(), row.uuid(), row.event(), row.distinctId(), Map.of(),
                    "{}".getBytes(StandardCharsets.UTF_8)), lookup, now);
        }
        final EventBlock.Builder builder = new EventBlock.Builder();
        rows.forEach(builder::add);
        final TrendQuery.Partial byBlock = trend.partial();
        trend.add(byBlock, builder.build(), new BitSet(), lookup, now);
        final JsonNode result = trend.result(byTimeline);
        assertThat(trend.result(trend.decode(byBlock.encode()))).as("from blocks").isEqualTo(result);
        return result;
    }

    private static String summary(final JsonNode result) {
        final List<String> items = new ArrayList<>();
        result.forEach(i -> items.add(i.get("label").asText() + "=" + (i.has("aggregated_value") ? i.get("aggregated_value").asInt() : i.get("count").asInt())
                + "@" + i.get("breakdown_value")));
        return String.join(", ", items);
    }

    @Test
    void eachEventCountsUnderEveryCohortOfItsPersonAndUnderAll() {
        // test_breakdown_by_cohort: cohort3 is person1 or person2; all users is every event.
        event("person1", "watched movie", "2020-01-01T12:00").event("person2", "watched movie", "2020-01-01T12:00")
                .event("person2", "watched movie", "2020-01-02T12:00").event("person2", "watched movie", "2020-01-02T12:00")
                .event("person3", "watched movie", "2020-01-01T12:00").event("person3", "watched movie", "2020-01-02T12:00")
                .event("person3", "watched movie", "2020-01-03T12:00").event("person4", "watched movie", "2020-01-05T12:00");
        final String cohorts = "\"eddy_breakdown_cohorts\":{" + cohort(1, "cohort1", "person1") + "," + cohort(2, "cohort2", "person2") + ","
                + cohort(3, "cohort3", "person1", "person2") + "}";
        final JsonNode result = run("{\"date_from\":\"-14d\",\"breakdown\":\"[1,2,3,\\\"all\\\"]\",\"breakdown_type\":\"cohort\"," + cohorts
                + ",\"events\":[{\"id\":\"watched movie\",\"name\":\"watched movie\",\"type\":\"events\",\"order\":0}]}",
                Instant.parse("2020-01-04T13:01:01Z"));
        assertThat(summary(result)).isEqualTo("all users=7@\"all\", cohort3=4@3, cohort2=3@2, cohort1=1@1");
        assertThat(result.get(1).get("data").get(11).asInt()).as("1 January").isEqualTo(2);
        assertThat(result.get(0).get("data").get(13).asInt()).as("3 January: person3, in no cohort but all").isEqualTo(1);
        // Two series: each label names its series.
        final JsonNode two = run("{\"date_from\":\"-14d\",\"breakdown\":[2],\"breakdown_type\":\"cohort\"," + cohorts
                + ",\"events\":[{\"id\":\"watched movie\",\"order\":0},{\"id\":\"$pageview\",\"order\":1}]}", Instant.parse("2020-01-04T13:01:01Z"));
        assertThat(summary(two)).isEqualTo("watched movie - cohort2=3@2");
    }

    @Test
    void aTotalValueDisplayAggregatesEachCohort() {
        // test_trends_breakdown_single_aggregate_cohorts
        for (int i = 0; i < 2; i++) {
            event("John", "sign up", "2020-01-01T00:06:34");
        }
        for (int i = 0; i < 3; i++) {
            event("Jill", "sign up", "2020-01-01T00:06:34");
        }
        for (int i = 0; i < 2; i++) {
            event("Jane", "sign up", "2020-01-02T00:06:34");
        }
        final JsonNode result = run("{\"display\":\"ActionsTable\",\"breakdown\":[1,2,3,\"all\"],\"breakdown_type\":\"cohort\","
                + "\"eddy_breakdown_cohorts\":{" + cohort(1, "cohort1", "Jane") + "," + cohort(2, "cohort2", "John") + "," + cohort(3, "cohort3", "Jill")
                + "},\"events\":[{\"id\":\"sign up\"}]}", Instant.parse("2020-01-04T13:00:01Z"));
        assertThat(summary(result)).isEqualTo("all users=7@\"all\", cohort3=3@3, cohort1=2@1, cohort2=2@2");
    }

    @Test
    void oneCohortOrSeveralOrAllAlone() {
        // test_breakdown_multiple_cohorts / test_breakdown_single_cohort / test_breakdown_by_empty_cohort
        event("p1", "$pageview", "2020-01-02T12:00").event("p2", "$pageview", "2020-01-02T12:00").event("p3", "$pageview", "2020-01-02T12:00");
        final Instant now = Instant.parse("2020-01-04T13:01:01Z");
        final String cohorts = "\"eddy_breakdown_cohorts\":{" + cohort(1, "cohort_1", "p1") + "," + cohort(2, "cohort_2", "p2", "p3") + "}";
        assertThat(summary(run("{\"date_from\":\"-7d\",\"events\":[{\"id\":\"$pageview\"}],\"properties\":[],\"breakdown\":[1,2],"
                + "\"breakdown_type\":\"cohort\"," + cohorts + "}", now))).isEqualTo("cohort_2=2@2, cohort_1=1@1");
        assertThat(summary(run("{\"date_from\":\"-7d\",\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":1,\"breakdown_type\":\"cohort\"," + cohorts
                + "}", now))).isEqualTo("cohort_1=1@1");
        assertThat(summary(run("{\"date_from\":\"-14d\",\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"[\\\"all\\\"]\","
                + "\"breakdown_type\":\"cohort\"}", now))).isEqualTo("all users=3@\"all\"");
        // A cohort nobody of the range is in has no item, as PostHog's trends query runner answers.
        assertThat(summary(run("{\"date_from\":\"-7d\",\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":[1,3],\"breakdown_type\":\"cohort\","
                + "\"eddy_breakdown_cohorts\":{" + cohort(1, "cohort_1", "p1") + "," + cohort(3, "nobody", "p9") + "}}", now))).isEqualTo("cohort_1=1@1");
    }

    @Test
    void whatIsNotACohortBreakdownIsRefusedByName() {
        final Instant now = Instant.parse("2020-01-04T13:01:01Z");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"breakdown\":[9],\"breakdown_type\":\"cohort\"}", now))
                .hasMessage("Cohort ID 9 does not exist!");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"breakdown\":[\"x\"],\"breakdown_type\":\"cohort\"}", now))
                .hasMessageContaining("cohort ids or \"all\"");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"breakdowns\":[{\"property\":\"1\",\"type\":\"cohort\"}]}", now))
                .hasMessageContaining("not in breakdowns");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"breakdown\":[\"all\"],\"breakdown_type\":\"cohort\","
                + "\"breakdown_histogram_bin_count\":5}", now)).hasMessageContaining("breakdown_histogram_bin_count");
    }
}
