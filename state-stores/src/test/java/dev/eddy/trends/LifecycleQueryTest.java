package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Lifecycles over timeline events, with the persons, events, queries and numbers of PostHog's own lifecycle query
 * runner tests ({@code posthog/hogql_queries/insights/test/test_lifecycle_query_runner.py}).
 */
class LifecycleQueryTest {
    private static final Instant NOW = Instant.parse("2020-03-30T12:00:00Z");

    /** PostHog's standard dataset: each person created at its first pageview, all at 12:00 UTC. */
    private static Fixture standard() {
        return new Fixture()
                .person("p1", "2020-01-11", "2020-01-11", "2020-01-12", "2020-01-13", "2020-01-15", "2020-01-17", "2020-01-19")
                .person("p2", "2020-01-09", "2020-01-09", "2020-01-12")
                .person("p3", "2020-01-12", "2020-01-12")
                .person("p4", "2020-01-15", "2020-01-15");
    }

    /** New, returning, resurrecting and dormant in PostHog's basic test, by the day; its monthly test has the same. */
    private static final int[][] BASIC = {{1, 0, 0, 1, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 1, 0, 1, 0, 1},
        {0, -2, -1, 0, -2, 0, -1, 0}};

    @Test
    void theBasicDailyLifecycle() {
        final ArrayNode result = standard().run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-12T00:00:00Z\","
                + "\"date_to\":\"2020-01-19T00:00:00Z\"}", DayOfWeek.SUNDAY);
        assertThat(result.get(0).get("label").asText()).isEqualTo("$pageview - new");
        assertStatuses(result, BASIC);
    }

    @Test
    void theWholeRangeInPostHogsShape() {
        final ArrayNode result = standard().run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}",
                DayOfWeek.SUNDAY);
        assertStatuses(result,
                new int[] {1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0},
                new int[] {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0},
                new int[] {0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1},
                new int[] {0, -1, 0, 0, -2, -1, 0, -2, 0, -1, 0});
        assertThat(result).extracting(i -> i.get("count").asDouble()).containsExactly(4.0, 2.0, 4.0, -7.0);
        final JsonNode dormant = result.get(3);
        assertThat(dormant.get("data").get(1).isDouble()).as("PostHog's values are floats").isTrue();
        assertThat(dormant.get("status").asText()).isEqualTo("dormant");
        assertThat(dormant.get("days").get(0).asText()).isEqualTo("2020-01-09");
        assertThat(dormant.get("labels").get(10).asText()).isEqualTo("19-Jan-2020");
        assertThat(dormant.get("action").toString()).isEqualTo("{\"id\":\"$pageview\",\"name\":\"$pageview\",\"type\":\"events\",\"order\":0,"
                + "\"math\":\"total\"}");
    }

    @Test
    void weeksStartOnTheProjectsDayWithTheSameNumbers() {
        final Fixture weekly = new Fixture()
                .person("p1", "2020-02-01", "2020-02-01", "2020-02-05", "2020-02-10", "2020-02-15", "2020-02-27", "2020-03-02")
                .person("p2", "2020-02-11", "2020-02-11", "2020-02-18")
                .person("p3", "2020-02-12", "2020-02-12")
                .person("p4", "2020-02-27", "2020-02-27");
        final String query = "{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"week\",\"date_from\":\"2020-02-05T00:00:00Z\","
                + "\"date_to\":\"2020-03-09T00:00:00Z\"}";
        for (final DayOfWeek start : List.of(DayOfWeek.SUNDAY, DayOfWeek.MONDAY)) {
            final ArrayNode result = weekly.run(query, start);
            assertStatuses(result,
                    new int[] {0, 2, 0, 1, 0, 0},
                    new int[] {1, 1, 1, 0, 1, 0},
                    new int[] {0, 0, 0, 1, 0, 0},
                    new int[] {0, 0, -2, -1, -1, -1});
            assertThat(result.get(0).get("days").get(0).asText()).isEqualTo(start == DayOfWeek.SUNDAY ? "2020-02-02" : "2020-02-03");
        }
    }

    @Test
    void months() {
        final Fixture monthly = new Fixture()
                .person("p1", "2020-01-11", "2020-01-11", "2020-02-12", "2020-03-13", "2020-05-15", "2020-07-17", "2020-09-19")
                .person("p2", "2019-12-09", "2019-12-09", "2020-02-12")
                .person("p3", "2020-02-12", "2020-02-12")
                .person("p4", "2020-05-15", "2020-05-15");
        assertStatuses(monthly.run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"month\",\"date_from\":\"2020-02-01T00:00:00Z\","
                        + "\"date_to\":\"2020-09-01T00:00:00Z\"}", DayOfWeek.SUNDAY), BASIC);
    }

    @Test
    void aPersonCreatedAfterTheirEventsIsNeverNewAndFiltersApply() {
        // PostHog's property-filter test creates its persons at the real now, after every event.
        final Fixture late = new Fixture();
        final String now = "2026-01-01";
        late.person("p1", now, "2020-01-11", "2020-01-12", "2020-01-13", "2020-01-15", "2020-01-17", "2020-01-19");
        late.person("p2", now, "2020-01-09", "2020-01-12").person("p3", now, "2020-01-12").person("p4", now, "2020-01-15");
        late.properties.put("p1", "{\"$number\":1}");
        final String range = "\"date_from\":\"2020-01-12T00:00:00Z\",\"date_to\":\"2020-01-19T00:00:00Z\"";
        final int[][] p1Only = {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 1, 0, 1}, {0, 0, -1, 0, -1, 0, -1, 0}};
        assertStatuses(late.run("{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"$number\",\"value\":\"1\",\"operator\":\"exact\"}],"
                + range + "}", DayOfWeek.SUNDAY), p1Only);
        assertStatuses(late.run("{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"$number\",\"value\":\"1\",\"operator\":\"exact\"}]}],"
                + range + "}", DayOfWeek.SUNDAY), p1Only);
    }

    @Test
    void aRangeStartingLaterSeesOnlyTheIntervalBeforeIt() {
        // p2 was created on the 9th and came back on the 12th: the 10th is not read, so on the 12th p2 is resurrecting.
        assertStatuses(standard().run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-14\"}",
                        DayOfWeek.SUNDAY),
                new int[] {1, 0, 0},
                new int[] {1, 1, 0},
                new int[] {1, 0, 0},
                new int[] {0, -2, -1});
    }

    @Test
    void whatEddyDoesNotAnswerIsRefusedByName() {
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"},{\"id\":\"b\"}]}")).hasMessageContaining("one series");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"aggregation_group_type_index\":0}")).hasMessageContaining("groups");
        assertThatThrownBy(() -> parse("{\"events\":[]}")).hasMessageContaining("at least one");
    }

    private static LifecycleQuery parse(final String json) {
        return LifecycleQuery.parse(read(json), java.time.ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
    }

    /** Persons with their creation day and the days of their pageviews (at 12:00 UTC), read as two instances would. */
    private static final class Fixture {
        private final Map<String, String> created = new LinkedHashMap<>();
        private final Map<String, List<String>> days = new LinkedHashMap<>();
        private final Map<String, String> properties = new LinkedHashMap<>();

        Fixture person(final String id, final String createdOn, final String... pageviews) {
            created.put(id, createdOn);
            days.put(id, List.of(pageviews));
            return this;
        }

        ArrayNode run(final String json, final DayOfWeek weekStart) {
            return (ArrayNode) answer(json, weekStart);
        }

        /** What the engine answers: the statuses, or with {@code target_date} and {@code lifecycle_type} that bar's persons. */
        JsonNode answer(final String json, final DayOfWeek weekStart) {
            final LifecycleQuery query = LifecycleQuery.parse(read(json), java.time.ZoneOffset.UTC, weekStart, null, NOW, Optional::empty);
            final List<LifecycleQuery.Partial> partials = new ArrayList<>(List.of(query.partial(), query.partial()));
            int i = 0;
            for (final String person : days.keySet()) {
                // Each person on one partition of one of the two instances, which knows when it was created.
                final LifecycleQuery.Partial partial = partials.get(i++ % 2);
                final PropertyLookup lookup = new PropertyLookup() {
                    @Override
                    public ObjectNode person(final String uuid) {
                        return Json.mapper().createObjectNode();
                    }

                    @Override
                    public ObjectNode group(final int typeIndex, final String groupKey) {
                        return Json.mapper().createObjectNode();
                    }

                    @Override
                    public Optional<Instant> personCreatedAt(final String uuid) {
                        return uuid.equals(person) ? Optional.of(Instant.parse(created.get(person) + "T12:00:00Z")) : Optional.empty();
                    }
                };
                for (final String day : days.get(person)) {
                    final TimelineEvent event = new TimelineEvent(Instant.parse(day + "T12:00:00Z").toEpochMilli() * 1000, UUID.randomUUID(),
                            "$pageview", person, Map.of(), properties.getOrDefault(person, "{}").getBytes(StandardCharsets.UTF_8));
                    query.trend().add(partial.trend(), person, event, lookup, NOW);
                }
                query.addCreated(partial, lookup);
            }
            return query.answer(partials.get(0).merge(query.decode(partials.get(1).encode())));
        }
    }

    @Test
    void eachBarListsItsPersons() {
        final String range = "\"date_from\":\"2020-01-12T00:00:00Z\",\"date_to\":\"2020-01-19T00:00:00Z\"";
        final JsonNode fresh = standard().answer("{\"events\":[{\"id\":\"$pageview\"}]," + range + ",\"target_date\":\"2020-01-12\","
                + "\"lifecycle_type\":\"new\"}", DayOfWeek.SUNDAY);
        assertThat(fresh.toString()).isEqualTo("{\"count\":1,\"actors\":[[\"p3\",null]]}");
        final JsonNode dormant = standard().answer("{\"events\":[{\"id\":\"$pageview\"}]," + range + ",\"target_date\":\"2020-01-13\","
                + "\"lifecycle_type\":\"dormant\"}", DayOfWeek.SUNDAY);
        assertThat(dormant.get("actors").toString()).as("p2 and p3 came on the 12th, not the 13th").isEqualTo("[[\"p2\",null],[\"p3\",null]]");
        assertThatThrownBy(() -> standard().answer("{\"events\":[{\"id\":\"$pageview\"}]," + range + ",\"target_date\":\"2020-01-12\","
                + "\"lifecycle_type\":\"bored\"}", DayOfWeek.SUNDAY)).hasMessageContaining("lifecycle_type must be one of");
    }

    private static void assertStatuses(final ArrayNode result, final int[]... expected) {
        assertThat(result).extracting(i -> i.get("status").asText()).containsExactly("new", "returning", "resurrecting", "dormant");
        for (int s = 0; s < expected.length; s++) {
            assertThat(TrendTesting.ints(result.get(s).get("data"))).as(result.get(s).get("status").asText()).containsExactly(expected[s]);
        }
    }
}
