package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.eddy.trends.TrendTesting.ints;
import static dev.eddy.trends.TrendTesting.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Stickiness over timeline events, with the events, queries and numbers of PostHog's own stickiness query runner tests
 * ({@code posthog/hogql_queries/insights/stickiness/test/test_stickiness_query_runner.py}).
 */
class StickinessQueryTest {
    private static final String CHROME = "{\"$browser\":\"Chrome\",\"prop\":10}";
    private static final String FIREFOX = "{\"$browser\":\"Firefox\",\"prop\":10}";

    /** PostHog's {@code _create_test_events}: p1 every day from the 11th to the 19th, p2 every other day; at 12:00, in org:1. */
    private static List<Event> fixture() {
        final List<Event> events = new ArrayList<>();
        for (int day = 11; day <= 19; day++) {
            for (final String name : List.of("$pageview", "$pageleave")) {
                events.add(new Event("p1", name, "2020-01-" + day + "T12:00:00Z", CHROME));
                if (day % 2 == 1) {
                    events.add(new Event("p2", name, "2020-01-" + day + "T12:00:00Z", FIREFOX));
                }
            }
        }
        return events;
    }

    private static final String DEFAULT_RANGE = "\"date_from\":\"2020-01-11\",\"date_to\":\"2020-01-20\"";

    @Test
    void eachPersonCountsInTheNumberOfDaysTheyWereActive() {
        final JsonNode item = run("{\"events\":[{\"id\":\"$pageview\"}]," + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z").get(0);
        assertThat(ints(item.get("data"))).containsExactly(0, 0, 0, 0, 1, 0, 0, 0, 1, 0);
        assertThat(item.get("count").asInt()).isEqualTo(2);
        assertThat(ints(item.get("days"))).containsExactly(IntStream.rangeClosed(1, 10).toArray());
        assertThat(item.get("labels").get(0).asText()).isEqualTo("1 day");
        assertThat(item.get("labels").get(9).asText()).isEqualTo("10 days");
        assertThat(item.get("label").asText()).isEqualTo("$pageview");
        assertThat(item.get("action").get("id").asText()).isEqualTo("$pageview");
        assertThat(item.get("action").get("type").asText()).isEqualTo("events");
        assertThat(item.get("action").get("order").asInt()).isZero();
        assertThat(item.has("compare")).isFalse();
    }

    @Test
    void hourWeekAndMonthIntervals() {
        // An absolute date_to with hours is that moment: 00:00 on the 11th to 00:00 on the 12th, 25 hours.
        final JsonNode hours = run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"hour\",\"date_from\":\"2020-01-11\",\"date_to\":\"2020-01-12\"}",
                fixture(), "2020-01-30T12:00:00Z").get(0);
        assertThat(hours.get("data")).hasSize(25);
        assertThat(hours.get("data").get(0).asInt()).isEqualTo(2);
        assertThat(hours.get("labels").get(1).asText()).isEqualTo("2 hours");
        assertThat(IntStream.range(1, 25).map(i -> hours.get("data").get(i).asInt()).sum()).isZero();

        // The last two days by the hour, now at 12:00 on the 20th: 48 + 12 + 1 hours.
        final JsonNode recent = run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"hour\",\"date_from\":\"-2d\"}", fixture(),
                "2020-01-20T12:00:00Z").get(0);
        assertThat(recent.get("data")).hasSize(61);
        assertThat(recent.get("data").get(0).asInt()).isEqualTo(1);
        assertThat(recent.get("data").get(1).asInt()).isEqualTo(1);

        final JsonNode weeks = run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"week\"," + DEFAULT_RANGE + "}", fixture(),
                "2020-01-30T12:00:00Z").get(0);
        assertThat(ints(weeks.get("data"))).containsExactly(0, 0, 2);
        assertThat(weeks.get("labels").get(2).asText()).isEqualTo("3 weeks");

        final JsonNode fullWeeks = run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"week\",\"date_from\":\"-30d\"}", fixture(),
                "2020-01-23T12:00:00Z").get(0);
        assertThat(ints(fullWeeks.get("data"))).containsExactly(0, 0, 2, 0, 0);

        final JsonNode months = run("{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"month\"," + DEFAULT_RANGE + "}", fixture(),
                "2020-01-30T12:00:00Z").get(0);
        assertThat(ints(months.get("data"))).containsExactly(2);
        assertThat(months.get("labels").get(0).asText()).isEqualTo("1 month");
    }

    @Test
    void filtersTestAccountsAndAnyEvent() {
        final int[] chromeOnly = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"$browser\",\"operator\":\"exact\",\"value\":\"Chrome\"}],"
                + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z").get(0).get("data"))).containsExactly(chromeOnly);
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"$browser\",\"operator\":\"exact\",\"value\":\"Chrome\"}]}],"
                + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z").get(0).get("data"))).containsExactly(chromeOnly);
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\"}],\"filter_test_accounts\":true," + DEFAULT_RANGE + "}", fixture(),
                "2020-01-30T12:00:00Z").get(0).get("data"))).containsExactly(chromeOnly);
        final JsonNode any = run("{\"events\":[{\"id\":null}]," + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z").get(0);
        assertThat(any.get("label").asText()).isEqualTo("All events");
        assertThat(ints(any.get("data"))).containsExactly(0, 0, 0, 0, 1, 0, 0, 0, 1, 0);
    }

    @Test
    void groupsAreTheActorsWithUniqueGroupAndEveryOtherMathCountsPersons() {
        final JsonNode groups = run("{\"events\":[{\"id\":\"$pageview\",\"math\":\"unique_group\",\"math_group_type_index\":0}],"
                + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z").get(0);
        assertThat(ints(groups.get("data"))).as("org:1, active nine days").containsExactly(0, 0, 0, 0, 0, 0, 0, 0, 1, 0);
        // PostHog rewrites any other math (total, sum, ...) to distinct persons.
        final JsonNode total = run("{\"events\":[{\"id\":\"$pageview\",\"math\":\"sum\",\"math_property\":\"prop\"}],\"breakdown\":\"$browser\","
                + "\"display\":\"BoldNumber\"," + DEFAULT_RANGE + "}", fixture(), "2020-01-30T12:00:00Z");
        assertThat(total).as("breakdowns and the display are not stickiness's").hasSize(1);
        assertThat(ints(total.get(0).get("data"))).containsExactly(0, 0, 0, 0, 1, 0, 0, 0, 1, 0);
    }

    @Test
    void compareGivesEachSeriesItsPreviousPeriodAfterIt() {
        final ArrayNode compared = run("{\"events\":[{\"id\":\"$pageview\"}],\"compare\":true," + DEFAULT_RANGE + "}", fixture(),
                "2020-01-30T12:00:00Z");
        assertThat(compared).hasSize(2);
        assertThat(compared.get(0).get("count").asInt()).isEqualTo(2);
        assertThat(compared.get(0).get("compare_label").asText()).isEqualTo("current");
        assertThat(compared.get(1).get("count").asInt()).isZero();
        assertThat(compared.get(1).get("compare_label").asText()).isEqualTo("previous");

        final ArrayNode byADay = run("{\"events\":[{\"id\":\"$pageview\"}],\"compare\":true,\"compare_to\":\"-1d\","
                + "\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-20\"}", fixture(), "2020-01-30T12:00:00Z");
        assertThat(ints(byADay.get(0).get("data"))).containsExactly(0, 0, 0, 1, 0, 0, 0, 1, 0);
        assertThat(ints(byADay.get(1).get("data"))).containsExactly(0, 0, 0, 0, 1, 0, 0, 0, 1);
        assertThat(byADay.get(1).get("count").asInt()).isEqualTo(2);
    }

    @Test
    void cumulativeCountsTheActorsOfThatManyIntervalsOrMore() {
        final List<Event> events = List.of(new Event("p1", "$pageview", "2020-01-11T12:00:00Z", CHROME),
                new Event("p1", "$pageview", "2020-01-12T12:00:00Z", CHROME), new Event("p1", "$pageview", "2020-01-13T12:00:00Z", CHROME),
                new Event("p2", "$pageview", "2020-01-11T12:00:00Z", CHROME), new Event("p2", "$pageview", "2020-01-12T12:00:00Z", CHROME),
                new Event("p3", "$pageview", "2020-01-11T12:00:00Z", CHROME));
        final String query = "{\"events\":[{\"id\":\"$pageview\"}],\"computed_as\":\"cumulative\",\"date_from\":\"2020-01-11\",\"date_to\":\"2020-01-13\"}";
        final JsonNode item = run(query, events, "2020-01-30T12:00:00Z").get(0);
        assertThat(ints(item.get("data"))).containsExactly(3, 2, 1);
        assertThat(item.get("count").asInt()).isEqualTo(3);
        assertThat(item.get("labels").get(0).asText()).isEqualTo("1 day or more");
        assertThat(ints(run(query, List.of(), "2020-01-30T12:00:00Z").get(0).get("data"))).containsExactly(0, 0, 0);
    }

    @Test
    void whatEddyDoesNotAnswerIsRefusedByName() {
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"stickiness_criteria\":{\"operator\":\"gte\",\"value\":2}}"))
                .hasMessageContaining("stickiness criteria");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"interval_count\":2}")).hasMessageContaining("interval count");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"computed_as\":\"sometimes\"}")).hasMessageContaining("computed_as");
        assertThatThrownBy(() -> parse("{\"events\":[]}")).hasMessageContaining("at least one");
    }

    private record Event(String person, String name, String at, String properties) {
    }

    private static StickinessQuery parse(final String json) {
        return StickinessQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, Instant.parse("2020-01-30T12:00:00Z"), Optional::empty);
    }

    /** The query over {@code events} as two instances would read them, one partial travelling as bytes. */
    private static ArrayNode run(final String json, final List<Event> events, final String now) {
        final JsonNode testAccounts = read("[{\"key\":\"$browser\",\"type\":\"event\",\"value\":\"Chrome\",\"operator\":\"exact\"}]");
        final Instant at = Instant.parse(now);
        final StickinessQuery query = StickinessQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, testAccounts, at, Optional::empty);
        final TrendQuery trend = query.trend();
        final TrendQuery.Partial first = trend.partial();
        final TrendQuery.Partial second = trend.partial();
        final PropertyLookup properties = TrendTesting.NO_PROPERTIES;
        for (final Event e : events) {
            final TimelineEvent event = new TimelineEvent(Instant.parse(e.at()).toEpochMilli() * 1000, UUID.randomUUID(), e.name(), e.person(),
                    Map.of(0, "org:1"), e.properties().getBytes(StandardCharsets.UTF_8));
            // Each person's events on one partial, as a person lives on one partition.
            trend.add(e.person().equals("p1") ? first : second, e.person(), event, properties, at);
        }
        return query.result(first.merge(trend.decode(second.encode())));
    }
}
