package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Funnel trends ({@code funnel_viz_type: trends}) on PostHog's own cases ({@code funnels/test/test_funnel_trends.py}). */
class FunnelTrendsTest {
    private static final Instant NOW = Instant.parse("2021-06-01T00:00:00Z");
    private static final String THREE = "\"insight\":\"FUNNELS\",\"funnel_viz_type\":\"trends\",\"display\":\"ActionsLineGraph\","
            + "\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1},{\"id\":\"step three\",\"order\":2}]";

    private static Journeys sample() {
        // BaseTestFunnelTrends._create_sample_data
        return new Journeys()
                .event("user_one", "step one", "2021-05-01T00:00").event("user_one", "step two", "2021-05-03T00:00")
                .event("user_one", "step three", "2021-05-05T00:00")
                .event("user_two", "step one", "2021-05-02T00:00").event("user_two", "step two", "2021-05-04T00:00")
                .event("user_three", "step one", "2021-05-06T00:00")
                .event("user_four", "step none", "2021-05-06T00:00")
                .event("user_five", "step one", "2021-05-01T01:00").event("user_five", "step two", "2021-05-01T02:00")
                .event("user_five", "step three", "2021-05-01T03:00")
                .event("user_six", "step one", "2021-05-01T00:00").event("user_six", "step two", "2021-05-03T00:00")
                .event("user_six", "step three", "2021-05-05T00:00")
                .event("user_seven", "step one", "2021-05-02T00:00").event("user_seven", "step two", "2021-05-04T00:00");
    }

    @Test
    void eachDayConvertsTheActorsThatEnteredThatDay() {
        // test_all_results_for_day_interval: 5/1 3 of 3 convert, 5/2 none of 2, 5/6 none of 1.
        final JsonNode result = sample().runBoth("{" + THREE + ",\"interval\":\"day\",\"date_from\":\"2021-05-01 00:00:00\","
                + "\"date_to\":\"2021-05-07 00:00:00\"}", NOW);
        assertThat(result).hasSize(1);
        final JsonNode item = result.get(0);
        assertThat(item.get("count").asInt()).isEqualTo(7);
        assertThat(item.get("data").toString()).isEqualTo("[100.0,0.0,0.0,0.0,0.0,0.0,0.0]");
        assertThat(item.get("days").toString()).isEqualTo("[\"2021-05-01\",\"2021-05-02\",\"2021-05-03\",\"2021-05-04\",\"2021-05-05\","
                + "\"2021-05-06\",\"2021-05-07\"]");
        assertThat(item.get("labels").get(0).asText()).isEqualTo("1-May-2021");
        // test_window_size_one_day: only user_five converts within a day.
        final JsonNode oneDay = sample().runBoth("{" + THREE + ",\"interval\":\"day\",\"date_from\":\"2021-05-01 00:00:00\","
                + "\"date_to\":\"2021-05-07 00:00:00\",\"funnel_window_interval\":1,\"funnel_window_interval_unit\":\"day\"}", NOW);
        assertThat(oneDay.get(0).get("data").toString()).isEqualTo("[33.33,0.0,0.0,0.0,0.0,0.0,0.0]");
    }

    @Test
    void aLaterEntryInThePeriodMovesItsStart() {
        // test_period_not_final / test_two_runs_by_single_user_in_one_period: user_one converts on 5/1 and 5/4 (1 of 2).
        final Journeys journeys = new Journeys()
                .event("user_one", "step one", "2021-05-01T01:00").event("user_one", "step two", "2021-05-01T02:00")
                .event("user_one", "step three", "2021-05-01T03:00")
                .event("user_one", "step one", "2021-05-03T01:00").event("user_one", "step two", "2021-05-03T02:00")
                .event("user_one", "step one", "2021-05-04T11:00").event("user_one", "step two", "2021-05-04T12:00")
                .event("user_one", "step three", "2021-05-04T13:00")
                .event("user_two", "step one", "2021-05-04T18:00");
        final JsonNode result = journeys.runBoth("{" + THREE + ",\"interval\":\"day\",\"date_from\":\"2021-05-01 00:00:00\","
                + "\"date_to\":\"2021-05-04 23:59:59\",\"funnel_window_interval\":1,\"funnel_window_interval_unit\":\"day\"}", NOW);
        assertThat(result.get(0).get("data").toString()).isEqualTo("[100.0,0.0,0.0,50.0]");
    }

    @Test
    void monthsAreTheProjectsMonths() {
        // test_month_interval: 2020-05-01 00:00 UTC is still April in US/Pacific.
        for (final String zone : List.of("UTC", "US/Pacific")) {
            final JsonNode result = new Journeys().zone(zone)
                    .event("user_one", "step one", "2020-05-01T00:00").event("user_one", "step two", "2020-05-01T01:00")
                    .event("user_one", "step three", "2020-05-01T02:00")
                    .runBoth("{" + THREE + ",\"interval\":\"month\",\"date_from\":\"2020-01-01 00:00:00\",\"date_to\":\"2020-07-01 00:00:00\","
                            + "\"funnel_window_days\":7}", NOW);
            final String april = "UTC".equals(zone) ? "0.0" : "100.0";
            final String may = "UTC".equals(zone) ? "100.0" : "0.0";
            assertThat(result.get(0).get("data").toString()).as(zone).isEqualTo("[0.0,0.0,0.0," + april + "," + may + ",0.0,0.0]");
            assertThat(result.get(0).get("days").get(3).asText()).isEqualTo("2020-04-01");
        }
    }

    @Test
    void hoursOfTheRangeAreThePeriods() {
        // test_hour_interval: from 2021-05-01 00:00 to now 2021-05-06T23:40.
        final JsonNode result = new Journeys().runBoth("{" + THREE + ",\"interval\":\"hour\",\"date_from\":\"2021-05-01 00:00:00\","
                + "\"funnel_window_interval\":7}", Instant.parse("2021-05-06T23:40:59Z"));
        assertThat(result.get(0).get("count").asInt()).isEqualTo(144);
        assertThat(result.get(0).get("days").get(1).asText()).isEqualTo("2021-05-01 01:00:00");
    }

    private static final String TWO = "\"insight\":\"FUNNELS\",\"funnel_viz_type\":\"trends\",\"interval\":\"day\","
            + "\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1}]";

    @Test
    void anExclusionOnlyCountsWithinTheWindow() {
        // test_short_exclusions (broken down by a $browser nobody has: one item, value [""]).
        final JsonNode shortOne = new Journeys()
                .event("user_one", "step one", "2021-05-01T00:00:00").event("user_one", "exclusion", "2021-05-01T00:00:01")
                .event("user_one", "step two", "2021-05-01T00:00:31")
                .event("user_one", "step one", "2021-05-01T01:00:00").event("user_one", "step two", "2021-05-01T01:00:29")
                .runBoth("{" + TWO + ",\"date_from\":\"2021-05-01 00:00:00\",\"date_to\":\"2021-05-13 23:59:59\",\"funnel_window_interval\":30,"
                        + "\"funnel_window_interval_unit\":\"second\",\"exclusions\":[{\"id\":\"exclusion\",\"type\":\"events\","
                        + "\"funnel_from_step\":0,\"funnel_to_step\":1}],\"breakdown_type\":\"event\",\"breakdown\":\"$browser\"}", NOW);
        assertThat(shortOne).hasSize(1);
        assertThat(shortOne.get(0).get("breakdown_value").toString()).isEqualTo("[\"\"]");
        assertThat(shortOne.get(0).get("data").toString()).isEqualTo("[100.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]");
        // test_funnel_exclusion_no_end_event: persons 2 and 3 are excluded, 1 converts, 4's exclusion is too late.
        final JsonNode noEnd = new Journeys()
                .event("person1", "user signed up", "2021-05-01T01:00").event("person1", "paid", "2021-05-01T02:00")
                .event("person2", "user signed up", "2021-05-01T03:00").event("person2", "x", "2021-05-01T03:30")
                .event("person2", "paid", "2021-05-01T04:00")
                .event("person3", "user signed up", "2021-05-01T05:00").event("person3", "x", "2021-05-01T06:00")
                .event("person4", "user signed up", "2021-05-01T07:00").event("person4", "x", "2021-05-02T08:00")
                .runBoth("{\"funnel_viz_type\":\"trends\",\"events\":[{\"id\":\"user signed up\",\"type\":\"events\",\"order\":0},"
                        + "{\"id\":\"paid\",\"type\":\"events\",\"order\":1}],\"funnel_window_interval\":1,\"date_from\":\"2021-05-01 00:00:00\","
                        + "\"date_to\":\"2021-05-14 00:00:00\",\"exclusions\":[{\"id\":\"x\",\"type\":\"events\",\"funnel_from_step\":0,"
                        + "\"funnel_to_step\":1}]}", NOW);
        assertThat(noEnd.get(0).get("data").toString()).isEqualTo("[50.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0]");
    }

    @Test
    void entriesAndConversionsPerPeriodAroundExclusions() {
        final long second = 1_000_000L;
        final PeriodFunnel two = new PeriodFunnel(2, 10 * second, "ordered", 0, 1);
        // test_funnel_exclusion_multiple_possible_no_end_event1: the second start, after the exclusion, still counts.
        assertThat(two.evaluate(events(second, "0:0", "1:x", "31:0"), e -> 0, -1, List.of())).isEqualTo(Map.of(0, -1));
        // ...2: the later start is excluded, the earlier one still entered.
        assertThat(two.evaluate(events(second, "0:0", "31:0", "32:x"), e -> 0, -1, List.of())).isEqualTo(Map.of(0, -1));
        // ...3: the exclusion is within the window of the (moved) start: nothing counts.
        assertThat(two.evaluate(events(second, "0:0", "1:0", "2:x"), e -> 0, -1, List.of())).isEqualTo(Map.of());
        // test_exclusion_after_goal: the conversion at 3 s stands; the later excluded run does not undo it.
        final PeriodFunnel three = new PeriodFunnel(3, 10 * second, "ordered", 0, 2);
        assertThat(three.evaluate(events(second, "0:0", "1:1", "3:2", "4:0", "5:1", "6:x1", "7:2"), e -> 0, -1, List.of()))
                .isEqualTo(Map.of(0, 1));
        // test_exclusion_multiday_completion_on_first_day: day one converts, day two is excluded.
        final long day = 86_400 * second;
        final List<FunnelEvent> multiday = events(second, "0:0", "1:1", "86404:0", "86405:x", "86406:1");
        assertThat(two.evaluate(multiday, e -> (int) (e.timeMicros() / day), -1, List.of())).isEqualTo(Map.of(0, 1));
    }

    @Test
    void aBreakdownGivesOneItemPerValueSortedByValue() {
        final JsonNode result = new Journeys()
                .event("a", "step one", "2021-05-01T00:00", "{\"$browser\":\"Safari\"}").event("a", "step two", "2021-05-01T01:00")
                .event("b", "step one", "2021-05-01T00:00", "{\"$browser\":\"Safari\"}")
                .event("c", "step one", "2021-05-02T00:00", "{\"$browser\":\"Chrome\"}").event("c", "step two", "2021-05-02T01:00")
                .runBoth("{" + TWO + ",\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-02\",\"breakdown\":\"$browser\"}", NOW);
        assertThat(result.toString()).isEqualTo("[{\"count\":2,\"data\":[0.0,100.0],\"days\":[\"2021-05-01\",\"2021-05-02\"],"
                + "\"labels\":[\"1-May-2021\",\"2-May-2021\"],\"breakdown_value\":[\"Chrome\"]},"
                + "{\"count\":2,\"data\":[50.0,0.0],\"days\":[\"2021-05-01\",\"2021-05-02\"],"
                + "\"labels\":[\"1-May-2021\",\"2-May-2021\"],\"breakdown_value\":[\"Safari\"]}]");
        // With a limit of one value, only the value most actors entered under is read.
        final JsonNode limited = new Journeys()
                .event("a", "step one", "2021-05-01T00:00", "{\"$browser\":\"Safari\"}")
                .event("b", "step one", "2021-05-01T00:00", "{\"$browser\":\"Safari\"}")
                .event("c", "step one", "2021-05-02T00:00", "{\"$browser\":\"Chrome\"}")
                .runBoth("{" + TWO + ",\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-02\",\"breakdown\":\"$browser\",\"breakdown_limit\":1}",
                        NOW);
        assertThat(limited).hasSize(1);
        assertThat(limited.get(0).get("breakdown_value").toString()).isEqualTo("[\"Safari\"]");
    }

    /** Events one per entry "seconds:steps", steps a digit per matched step or x (exclusion of gap 0), x1 (gap 1). */
    private static List<FunnelEvent> events(final long second, final String... entries) {
        final List<FunnelEvent> events = new ArrayList<>();
        int uuid = 0;
        for (final String entry : entries) {
            final String[] parts = entry.split(":");
            final long time = Long.parseLong(parts[0]) * second;
            if (parts[1].startsWith("x")) {
                final int gap = parts[1].length() > 1 ? parts[1].charAt(1) - '0' : 0;
                events.add(new FunnelEvent(time, "e" + uuid++, new int[0], new int[] {gap}));
            } else {
                events.add(new FunnelEvent(time, "e" + uuid++, parts[1].chars().map(c -> c - '0').toArray(), new int[0]));
            }
        }
        return events;
    }
}
