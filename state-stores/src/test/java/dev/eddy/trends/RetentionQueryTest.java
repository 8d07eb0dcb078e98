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
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Retention over timeline events, with the events, queries and numbers of PostHog's own retention tests
 * ({@code posthog/queries/test/test_retention.py}, and {@code test_retention_query_runner.py} for first-time weeks,
 * start-event properties and cumulative retention). Their helper {@code _date(day, hour=5, month=0)} is
 * 2020-06-(10+day) at 05:00 UTC, and {@code person1} also uses the distinct id {@code alias1}.
 */
class RetentionQueryTest {
    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

    /** PostHog's {@code _date}: {@code day} days after 2020-06-10 (of {@code month} months later), at {@code hour}. */
    private static String date(final int day, final int hour, final int month) {
        return LocalDateTime.of(2020, 6 + month, 10, hour, 0).plusDays(day).toString();
    }

    private static String date(final int day) {
        return date(day, 5, 0);
    }

    /** PostHog's standard pageviews of person1 (with alias1) and person2; every other one has {@code $some_property}. */
    private static Fixture standard() {
        return new Fixture().events("$pageview", "person1", date(0), "person1", date(1), "person1", date(2), "person1", date(5),
                "person1", date(5, 9, 0), "person1", date(6), "person2", date(1), "person2", date(2), "person2", date(3), "person2", date(6));
    }

    @Test
    void dailyRetentionInPostHogsShape() {
        final ArrayNode result = standard().run("{\"date_to\":\"" + date(10, 6, 0) + "\"}");
        assertThat(result).hasSize(11);
        assertThat(result).extracting(r -> r.get("label").asText()).containsExactly("Day 0", "Day 1", "Day 2", "Day 3", "Day 4", "Day 5",
                "Day 6", "Day 7", "Day 8", "Day 9", "Day 10");
        assertThat(result.get(0).get("date").asText()).isEqualTo("2020-06-10T00:00:00Z");
        assertCounts(result, new int[] {1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0}, new int[] {2, 2, 1, 0, 1, 2, 0, 0, 0, 0},
                new int[] {2, 1, 0, 1, 2, 0, 0, 0, 0}, new int[] {1, 0, 0, 1, 0, 0, 0, 0}, new int[] {0, 0, 0, 0, 0, 0, 0},
                new int[] {1, 1, 0, 0, 0, 0}, new int[] {2, 0, 0, 0, 0}, new int[] {0, 0, 0, 0}, new int[] {0, 0, 0}, new int[] {0, 0},
                new int[] {0});
        assertThat(result.get(1).get("values").get(0).toString()).isEqualTo("{\"count\":2,\"people\":[]}");
        // Without date_to, the periods end today: nothing of 2020 is in them.
        final ArrayNode now = standard().run("{}");
        assertThat(now).hasSize(11);
        assertThat(now.findValues("count")).allMatch(c -> c.asInt() == 0).hasSize(66);
        assertThat(now.get(10).get("date").asText()).isEqualTo("2026-11-28T00:00:00Z");
    }

    /** PostHog's {@code _create_first_time_retention_events}. */
    private static Fixture firstTimeEvents() {
        return standard()
                .events("$user_signed_up", "shouldnt_include", date(-5), "shouldnt_include", date(-1), "person1", date(-1), "person1", date(1),
                        "person1", date(2), "person1", date(3), "person1", date(4), "person2", date(-1), "person3", date(0), "person4", date(2))
                .events("$pageview", "person3", date(1), "person3", date(3), "person3", date(4), "person3", date(5),
                        "person4", date(3), "person4", date(5));
    }

    @Test
    void firstTimeRetentionCountsEachPersonInTheCohortOfTheirFirstTargetEventEver() {
        final ArrayNode result = firstTimeEvents().run("{\"date_to\":\"" + date(5, 6, 0) + "\",\"retention_type\":\"retention_first_time\","
                + "\"target_entity\":\"{\\\"id\\\":\\\"$user_signed_up\\\",\\\"type\\\":\\\"events\\\"}\","
                + "\"returning_entity\":{\"id\":\"$pageview\",\"type\":\"events\"},\"total_intervals\":7}");
        assertThat(result).extracting(r -> r.get("label").asText()).containsExactly("Day 0", "Day 1", "Day 2", "Day 3", "Day 4", "Day 5", "Day 6");
        assertCounts(result, new int[] {2, 1, 2, 2, 1, 0, 1}, new int[] {1, 1, 0, 1, 1, 1}, new int[] {0, 0, 0, 0, 0}, new int[] {1, 1, 0, 1},
                new int[] {0, 0, 0}, new int[] {0, 0}, new int[] {0});
        // By week, shouldnt_include's first sign-up (the 5th) is in the range: it starts a cohort of its own.
        final ArrayNode weeks = firstTimeEvents().run("{\"date_to\":\"" + date(5, 6, 0) + "\",\"retention_type\":\"retention_first_time\","
                + "\"target_entity\":{\"id\":\"$user_signed_up\",\"type\":\"events\"},\"returning_entity\":{\"id\":\"$pageview\",\"type\":\"events\"},"
                + "\"total_intervals\":7,\"period\":\"Week\"}");
        assertCounts(weeks, new int[7], new int[6], new int[5], new int[4], new int[] {1, 0, 0}, new int[] {4, 4}, new int[] {0});
        assertThat(weeks.get(0).get("date").asText()).isEqualTo("2020-05-03T00:00:00Z");
    }

    /** PostHog's week test: person1 and person2 over six weeks, in its order of creation. */
    private static Fixture weekly() {
        return new Fixture().events("$pageview", "person1", date(0), "person2", date(0), "person1", date(1), "person2", date(1),
                "person1", date(7), "person2", date(7), "person1", date(14), "person1", date(-6, 5, 1), "person2", date(-6, 5, 1),
                "person2", date(1, 5, 1), "alias1", date(1, 5, 1), "person2", date(15, 5, 1));
    }

    @Test
    void weeksStartOnTheProjectsDayWithTheSameCounts() {
        final int[][] counts = {{2, 2, 1, 2, 2, 0, 1}, {2, 1, 2, 2, 0, 1}, {1, 1, 1, 0, 0}, {2, 2, 0, 1}, {2, 0, 1}, {0, 0}, {1}};
        final String query = "{\"date_to\":\"" + date(10, 0, 1) + "\",\"period\":\"Week\",\"total_intervals\":7}";
        final ArrayNode sundays = weekly().run(query);
        assertThat(sundays).extracting(r -> r.get("label").asText()).containsExactly("Week 0", "Week 1", "Week 2", "Week 3", "Week 4", "Week 5",
                "Week 6");
        assertCounts(sundays, counts);
        assertThat(sundays).extracting(r -> r.get("date").asText().substring(0, 10)).containsExactly("2020-06-07", "2020-06-14", "2020-06-21",
                "2020-06-28", "2020-07-05", "2020-07-12", "2020-07-19");
        final ArrayNode mondays = weekly().weekStart(DayOfWeek.MONDAY).run(query);
        assertCounts(mondays, counts);
        assertThat(mondays).extracting(r -> r.get("date").asText().substring(0, 10)).containsExactly("2020-06-08", "2020-06-15", "2020-06-22",
                "2020-06-29", "2020-07-06", "2020-07-13", "2020-07-20");
        // PostHog's interval-rounding test: a date_to later in the week gives the same weeks.
        assertCounts(weekly().run("{\"date_to\":\"" + date(14, 0, 1) + "\",\"period\":\"Week\",\"total_intervals\":7}"), counts);
    }

    @Test
    void monthsAndHours() {
        final int[][] counts = {{2, 2, 2, 0, 1, 2, 1, 0, 1, 0, 1}, {2, 2, 0, 1, 2, 1, 0, 1, 0, 1}, {2, 0, 1, 2, 1, 0, 1, 0, 1},
            {0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 1, 0, 0}, {2, 1, 0, 1, 0, 1}, {1, 0, 0, 0, 1}, {0, 0, 0, 0}, {1, 0, 0}, {0, 0}, {1}};
        final Fixture monthly = new Fixture();
        for (final int month : new int[] {0, 1, 2, 4, 5, 8}) {
            monthly.events("$pageview", "person1", date(0, 5, month - 5));
        }
        for (final int month : new int[] {0, 1, 2, 5, 6, 10}) {
            monthly.events("$pageview", "person2", date(0, 5, month - 5));
        }
        final ArrayNode months = monthly.run("{\"date_to\":\"" + date(0, 0, 5) + "\",\"period\":\"Month\"}");
        assertCounts(months, counts);
        assertThat(months.get(0).get("label").asText()).isEqualTo("Month 0");
        assertThat(months).extracting(r -> r.get("date").asText().substring(0, 10)).startsWith("2020-01-10", "2020-02-10").endsWith("2020-11-10");

        final Fixture hourly = new Fixture();
        for (final int hour : new int[] {6, 7, 8, 10, 11, 14}) {
            hourly.events("$pageview", "person1", date(0, hour, 0));
        }
        for (final int hour : new int[] {6, 7, 8, 11, 12, 16}) {
            hourly.events("$pageview", "person2", date(0, hour, 0));
        }
        final ArrayNode hours = hourly.run("{\"date_to\":\"2020-06-10T16:13:00\",\"period\":\"Hour\"}");
        assertCounts(hours, counts);
        assertThat(hours).extracting(r -> r.get("date").asText()).startsWith("2020-06-10T06:00:00Z").endsWith("2020-06-10T16:00:00Z");
        assertThat(hours.get(10).get("label").asText()).isEqualTo("Hour 10");
    }

    @Test
    void globalFiltersApplyToTheTargetAndTheReturningEvents() {
        assertCounts(standard().run("{\"properties\":[{\"key\":\"$some_property\",\"value\":\"value\"}],\"date_to\":\"" + date(10, 0, 0) + "\"}"),
                new int[] {1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}, new int[] {1, 0, 1, 0, 0, 0, 0, 0, 0, 0}, new int[] {1, 0, 0, 1, 0, 0, 0, 0, 0},
                new int[] {1, 0, 0, 0, 0, 0, 0, 0}, new int[7], new int[] {1, 0, 0, 0, 0, 0}, new int[5], new int[4], new int[3], new int[2],
                new int[1]);
        final Fixture emails = standard().person("person1", "{\"email\":\"person1@test.com\"}").person("person2", "{\"email\":\"person2@test.com\"}");
        assertCounts(emails.run("{\"properties\":[{\"key\":\"email\",\"value\":\"person1@test.com\",\"type\":\"person\"}],\"date_to\":\""
                        + date(6, 0, 0) + "\",\"total_intervals\":7}"),
                new int[] {1, 1, 1, 0, 0, 1, 1}, new int[] {1, 1, 0, 0, 1, 1}, new int[] {1, 0, 0, 1, 1}, new int[4], new int[3], new int[] {1, 1},
                new int[] {1});
        // PostHog's test accounts: person1 is one; person2, with no email at all, is not.
        final Fixture testAccounts = standard().person("person1", "{\"email\":\"test@posthog.com\"}");
        assertCounts(testAccounts.run("{\"date_to\":\"" + date(10, 6, 0) + "\",\"filter_test_accounts\":true}"),
                new int[11], new int[] {1, 1, 1, 0, 0, 1, 0, 0, 0, 0}, new int[] {1, 1, 0, 0, 1, 0, 0, 0, 0}, new int[] {1, 0, 0, 1, 0, 0, 0, 0},
                new int[7], new int[6], new int[] {1, 0, 0, 0, 0}, new int[4], new int[3], new int[2], new int[1]);
    }

    @Test
    void periodsAreTheProjectsDaysInItsTimeZone() {
        final Fixture events = new Fixture().events("$pageview", "person1", "2020-06-09T01:00", "person1", "2020-06-10T01:00",
                "person1", "2020-06-11T01:00", "person2", "2020-06-16T01:00", "person2", "2020-06-16T09:00");
        final String query = "{\"date_to\":\"" + date(10) + "\"}";
        assertCounts(events.run(query), new int[] {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, new int[] {1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, new int[9],
                new int[8], new int[7], new int[6], new int[] {1, 0, 0, 0, 0}, new int[4], new int[3], new int[2], new int[1]);
        final ArrayNode pacific = events.zone(ZoneId.of("US/Pacific")).run(query);
        assertCounts(pacific, new int[] {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, new int[10], new int[9], new int[8], new int[7],
                new int[] {1, 1, 0, 0, 0, 0}, new int[] {1, 0, 0, 0, 0}, new int[4], new int[3], new int[2], new int[1]);
        assertThat(pacific.get(0).get("date").asText()).isEqualTo("2020-06-10T00:00:00-07:00");
    }

    /** PostHog's multiple-events test: {@code $some_event} on days 0 to 3 (and person3 on day 5), then pageviews. */
    private static Fixture twoEvents() {
        return new Fixture()
                .events("$some_event", "person1", date(0), "person1", date(1), "person1", date(2), "person1", date(3),
                        "person2", date(0), "person2", date(1), "person2", date(2), "person2", date(3), "person3", date(5))
                .events("$pageview", "person1", date(5), "person1", date(6), "person2", date(5));
    }

    @Test
    void targetAndReturningEventsDifferOrAreAnyEvent() {
        assertCounts(twoEvents().run("{\"date_to\":\"" + date(6, 6, 0) + "\",\"target_entity\":{\"id\":\"$some_event\",\"type\":\"events\"},"
                        + "\"returning_entity\":{\"id\":\"$pageview\",\"type\":\"events\"},\"total_intervals\":7}"),
                new int[] {2, 0, 0, 0, 0, 2, 1}, new int[] {2, 0, 0, 0, 2, 1}, new int[] {2, 0, 0, 2, 1}, new int[] {2, 0, 2, 1}, new int[3],
                new int[] {1, 0}, new int[1]);
        assertCounts(twoEvents().run("{\"date_to\":\"" + date(6, 6, 0) + "\",\"target_entity\":{\"id\":null,\"type\":\"events\"},"
                        + "\"returning_entity\":{\"id\":null,\"type\":\"events\"},\"total_intervals\":7}"),
                new int[] {2, 2, 2, 2, 0, 2, 1}, new int[] {2, 2, 2, 0, 2, 1}, new int[] {2, 2, 0, 2, 1}, new int[] {2, 0, 2, 1}, new int[3],
                new int[] {3, 1}, new int[] {1});
    }

    @Test
    void theFirstTargetEventMatchingTheEntitysFiltersStartsAFirstTimeCohort() {
        final Fixture events = new Fixture().events("$pageview", "person1", date(0), "person1", date(1), "person1", date(2),
                "{\"$target_event_property\":\"value\"}", "person1", date(5), "alias1", date(5, 9, 0), "{\"$target_event_property\":\"value\"}",
                "person1", date(6), "person2", date(1), "person2", date(2), "person2", date(3), "person2", date(6));
        final ArrayNode result = events.run("{\"date_to\":\"" + date(10, 0, 0) + "\",\"retention_type\":\"retention_first_time\","
                + "\"target_entity\":{\"id\":\"$pageview\",\"type\":\"events\",\"properties\":[{\"key\":\"$target_event_property\",\"type\":\"event\","
                + "\"operator\":\"exact\",\"value\":[\"value\"]}]},\"returning_entity\":{\"id\":\"$pageview\",\"type\":\"events\"}}");
        assertCounts(result, new int[11], new int[10], new int[] {1, 0, 0, 1, 1, 0, 0, 0, 0}, new int[8], new int[7], new int[6], new int[5],
                new int[4], new int[3], new int[2], new int[1]);
    }

    @Test
    void cumulativeCountsAPersonInEveryPeriodUpToTheirLastReturn() {
        final Fixture events = new Fixture().events("$pageview", "p1", date(0), "p1", date(3), "p1", date(4), "p2", date(0), "p2", date(1),
                "p3", date(1), "p3", date(2), "p3", date(3), "p4", date(3), "p4", date(4), "p5", date(4));
        assertCounts(events.run("{\"date_to\":\"" + date(5, 6, 0) + "\",\"cumulative\":true,\"total_intervals\":6,"
                        + "\"target_entity\":{\"id\":null,\"type\":\"events\"}}"),
                new int[] {2, 2, 1, 1, 1, 0}, new int[] {2, 1, 1, 0, 0}, new int[] {1, 1, 0, 0}, new int[] {3, 2, 0}, new int[] {3, 0}, new int[1]);
    }

    @Test
    void breakdownsPoolEveryCohortPerValueOfTheTargetEvent() {
        final Fixture events = new Fixture().events("$pageview", "a", date(0), "{\"$browser\":\"Chrome\"}", "a", date(1), "{}",
                "b", date(0), "{\"$browser\":\"Safari\"}", "b", date(2), "{}", "c", date(1), "{\"$browser\":\"Chrome\"}", "c", date(3), "{}",
                "d", date(2), "{}");
        final ArrayNode rows = events.run("{\"date_to\":\"" + date(4, 6, 0) + "\",\"total_intervals\":5,\"breakdowns\":[{\"property\":\"$browser\"}],"
                + "\"breakdown_type\":\"event\"}");
        assertThat(rows).extracting(r -> r.get("label").asText()).containsExactly("$$_posthog_breakdown_null_$$", "Chrome", "Safari");
        assertThat(rows.get(1).get("breakdown_values").toString()).isEqualTo("[\"Chrome\"]");
        assertThat(rows.get(1).has("date")).isFalse();
        // No value: every event without one, each actor once (none came back after such an event); Chrome: a (day 0,
        // back on day 1) and c (day 1, back on day 3); Safari: b (day 0, back on day 2).
        assertCounts(rows, new int[] {4, 0, 0, 0, 0}, new int[] {2, 1, 1, 0, 0}, new int[] {1, 0, 1, 0, 0});
    }

    @Test
    void aCohortsPersonsComeWithThePeriodsTheyCameBackIn() {
        // Day 1's cohort: person1 came back on days 2, 5 and 6, person2 on days 2, 3 and 6.
        final JsonNode cohort = standard().answer("{\"date_to\":\"" + date(10, 6, 0) + "\",\"selected_interval\":1}");
        assertThat(cohort.get("count").asInt()).isEqualTo(2);
        assertThat(cohort.get("actors").toString()).isEqualTo("[[\"person1\",[1,1,0,0,1,1,0,0,0,0]],[\"person2\",[1,1,1,0,0,1,0,0,0,0]]]");
        assertThatThrownBy(() -> parse("{\"selected_interval\":11}")).hasMessageContaining("selected_interval must be a cohort from 0 to 10");
    }

    @Test
    void whatIsWrongOrNotAnsweredIsRefusedByName() {
        assertThatThrownBy(() -> parse("{\"period\":\"Fortnight\"}")).hasMessageContaining("period must be one of");
        assertThatThrownBy(() -> parse("{\"total_intervals\":0}")).hasMessageContaining("total_intervals must be from 1");
        assertThatThrownBy(() -> parse("{\"total_intervals\":\"many\"}")).hasMessageContaining("whole number");
        assertThatThrownBy(() -> parse("{\"retention_type\":\"sometimes\"}")).hasMessageContaining("retention_type must be");
        assertThatThrownBy(() -> parse("{\"retention_type\":\"retention_first_ever_occurrence\"}")).hasMessageContaining("not supported");
        assertThatThrownBy(() -> parse("{\"target_entity\":{\"id\":1,\"type\":\"actions\"}}")).hasMessage("Action ID 1 does not exist!");
        assertThatThrownBy(() -> parse("{\"target_entity\":\"{nope\"}")).hasMessageContaining("target_entity is not valid JSON");
        assertThatThrownBy(() -> parse("{\"returning_entity\":[1]}")).hasMessageContaining("returning_entity must be an object");
        assertThatThrownBy(() -> parse("{\"date_to\":\"2020-13-45\"}")).hasMessageContaining("not a valid date");
        assertThatThrownBy(() -> parse("{\"aggregation_group_type_index\":9}")).hasMessageContaining("aggregation_group_type_index");
        assertThatThrownBy(() -> parse("{\"breakdowns\":[{\"value\":1}]}")).hasMessageContaining("needs a property");
        assertThat(parse("{\"total_intervals\":\"7\",\"period\":\"week\"}").trend().range().interval()).isEqualTo(Interval.WEEK);
    }

    private static RetentionQuery parse(final String json) {
        return RetentionQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
    }

    private static void assertCounts(final ArrayNode result, final int[]... rows) {
        assertThat(result).hasSize(rows.length);
        for (int i = 0; i < rows.length; i++) {
            final int[] counts = result.get(i).get("values").findValues("count").stream().mapToInt(JsonNode::asInt).toArray();
            assertThat(counts).as("row %d", i).containsExactly(rows[i]);
        }
    }

    /** Events by person (alias1 is person1), read as two instances would: person1 on one, everyone else on the other. */
    private static final class Fixture {
        private final List<Object[]> events = new ArrayList<>();
        private final Map<String, String> persons = new HashMap<>();
        private ZoneId zone = ZoneOffset.UTC;
        private DayOfWeek weekStart = DayOfWeek.SUNDAY;

        /**
         * Events named {@code name}: pairs of distinct id and UTC time, each optionally followed by its properties as
         * JSON; without them, every other event (counting from this call's first) has {@code $some_property}, as in
         * PostHog's {@code _create_events}.
         */
        Fixture events(final String name, final String... spec) {
            int index = 0;
            for (int i = 0; i < spec.length; ) {
                final String person = "alias1".equals(spec[i]) ? "person1" : spec[i];
                final String at = spec[i + 1];
                i += 2;
                String properties = index % 2 == 0 ? "{\"$some_property\":\"value\"}" : "{}";
                if (i < spec.length && spec[i].startsWith("{")) {
                    properties = spec[i++];
                }
                events.add(new Object[] {person, name, at, properties});
                index++;
            }
            return this;
        }

        Fixture person(final String id, final String properties) {
            persons.put(id, properties);
            return this;
        }

        Fixture zone(final ZoneId zone) {
            this.zone = zone;
            return this;
        }

        Fixture weekStart(final DayOfWeek weekStart) {
            this.weekStart = weekStart;
            return this;
        }

        ArrayNode run(final String json) {
            return (ArrayNode) answer(json);
        }

        /** What the engine answers: the cohorts, or with {@code selected_interval} that cohort's persons. */
        JsonNode answer(final String json) {
            final JsonNode testAccounts = read("[{\"key\":\"email\",\"value\":\"@posthog.com\",\"operator\":\"not_icontains\",\"type\":\"person\"}]");
            final Optional<Instant> earliest = events.stream().map(e -> Instant.parse(e[2] + (((String) e[2]).length() == 16 ? ":00Z" : "Z")))
                    .min(Instant::compareTo);
            final RetentionQuery query = RetentionQuery.parse(read(json), zone, weekStart, testAccounts, NOW, () -> earliest);
            final TrendQuery trend = query.trend();
            final TrendQuery.Partial first = trend.partial();
            final TrendQuery.Partial second = trend.partial();
            final PropertyLookup lookup = new PropertyLookup() {
                @Override
                public ObjectNode person(final String uuid) {
                    return (ObjectNode) read(persons.getOrDefault(uuid, "{}"));
                }

                @Override
                public ObjectNode group(final int typeIndex, final String groupKey) {
                    return Json.mapper().createObjectNode();
                }
            };
            for (final Object[] e : events) {
                final String person = (String) e[0];
                final String at = (String) e[2];
                final Instant time = Instant.parse(at + (at.length() == 16 ? ":00Z" : "Z"));
                final TimelineEvent event = new TimelineEvent(time.toEpochMilli() * 1000, UUID.randomUUID(), (String) e[1], person, Map.of(),
                        ((String) e[3]).getBytes(StandardCharsets.UTF_8));
                trend.add("person1".equals(person) ? first : second, person, event, lookup, NOW);
            }
            return query.answer(first.merge(trend.decode(second.encode())));
        }
    }
}
