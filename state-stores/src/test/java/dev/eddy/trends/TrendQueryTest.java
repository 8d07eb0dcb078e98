package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.eddy.trends.TrendTesting.ints;
import static dev.eddy.trends.TrendTesting.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
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
import org.junit.jupiter.api.Test;

/** Trend queries in PostHog's filter format over timeline events: PostHog's trends query runner fixture. */
class TrendQueryTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:00:00Z");
    private static final Map<String, String> PERSONS = Map.of(
            "p1", "{\"$browser\":\"Chrome\",\"prop\":10,\"email\":\"one@corp.test\"}",
            "p2", "{\"$browser\":\"Firefox\",\"prop\":20,\"email\":\"two@mail.test\"}",
            "p3", "{\"$browser\":\"Edge\",\"prop\":30}",
            "p4", "{\"$browser\":\"Safari\",\"prop\":40}");

    /** (person, event, day) of PostHog's fixture, at 12:00; each event carries its person's properties. */
    private static final List<String[]> EVENTS = List.of(
            e("p1", "$pageview", "11"), e("p1", "$pageview", "12"), e("p1", "$pageview", "13"), e("p1", "$pageview", "15"),
            e("p1", "$pageview", "17"), e("p1", "$pageview", "19"), e("p1", "$pageleave", "11"), e("p1", "$pageleave", "12"),
            e("p1", "$pageleave", "13"), e("p2", "$pageview", "09"), e("p2", "$pageview", "12"), e("p2", "$pageleave", "13"),
            e("p3", "$pageview", "12"), e("p3", "$pageleave", "13"), e("p4", "$pageview", "15"), e("p4", "$pageleave", "16"));

    private static String[] e(final String person, final String event, final String day) {
        return new String[] {person, event, day};
    }

    @Test
    void aDailyTrendHasPostHogsItemShape() {
        final ArrayNode result = run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(result).hasSize(1);
        final JsonNode item = result.get(0);
        assertThat(ints(item.get("data"))).containsExactly(1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1);
        assertThat(item.get("count").asInt()).isEqualTo(10);
        assertThat(item.get("days").get(0).asText()).isEqualTo("2020-01-09");
        assertThat(item.get("labels").get(10).asText()).isEqualTo("19-Jan-2020");
        assertThat(item.get("label").asText()).isEqualTo("$pageview");
        assertThat(item.get("action").get("id").asText()).isEqualTo("$pageview");
        assertThat(item.get("action").get("math").asText()).isEqualTo("total");
        assertThat(item.get("filter").get("interval").asText()).isEqualTo("day");
        assertThat(item.has("breakdown_value")).isFalse();
    }

    @Test
    void formulasCombineTheSeries() {
        final ArrayNode result = run("{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"$pageleave\",\"order\":1}],"
                + "\"formula\":\"A+2*B\",\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(result).hasSize(1);
        assertThat(ints(result.get(0).get("data"))).containsExactly(1, 0, 3, 5, 7, 0, 2, 2, 1, 0, 1);
        assertThat(result.get(0).get("count").asInt()).isEqualTo(22);
        assertThat(result.get(0).get("label").asText()).isEqualTo("Formula (A+2*B)");
        assertThat(result.get(0).get("action").isNull()).isTrue();
    }

    @Test
    void comparePutsThePreviousPeriodAfterTheCurrentOne() {
        // test_trends_query_runner's compare cases with the formula A+2*B.
        final String query = "{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"$pageleave\",\"order\":1}],"
                + "\"formula\":\"A+2*B\",\"date_from\":\"2020-01-15\",\"date_to\":\"2020-01-19\",\"compare\":true";
        final ArrayNode previous = run(query + "}");
        assertThat(previous).hasSize(2);
        assertThat(ints(previous.get(0).get("data"))).containsExactly(2, 2, 1, 0, 1);
        assertThat(previous.get(0).get("compare_label").asText()).isEqualTo("current");
        assertThat(ints(previous.get(1).get("data"))).containsExactly(0, 3, 5, 7, 0);
        assertThat(previous.get(1).get("count").asInt()).isEqualTo(15);
        assertThat(previous.get(1).get("compare_label").asText()).isEqualTo("previous");
        assertThat(previous.get(1).get("days").get(0).asText()).isEqualTo("2020-01-10");
        assertThat(previous.get(1).get("compare").asBoolean()).isTrue();
        assertThat(ints(run(query + ",\"compare_to\":\"-1w\"}").get(1).get("data"))).containsExactly(0, 1, 0, 3, 5);
        assertThat(ints(run(query + ",\"compare_to\":\"-2d\"}").get(1).get("data"))).containsExactly(7, 0, 2, 2, 1);

        final ArrayNode series = run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-15\",\"date_to\":\"2020-01-19\",\"compare\":true}");
        assertThat(series).extracting(i -> i.get("compare_label").asText()).containsExactly("current", "previous");
        assertThat(ints(series.get(1).get("data"))).containsExactly(0, 1, 3, 1, 0);
    }

    @Test
    void breakdownsFiltersAndTotalValues() {
        final ArrayNode byBrowser = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"$browser\",\"date_from\":\"2020-01-09\","
                + "\"date_to\":\"2020-01-20\"}");
        assertThat(byBrowser).extracting(i -> i.get("breakdown_value").asText()).containsExactly("Chrome", "Firefox", "Edge", "Safari");
        assertThat(byBrowser).extracting(i -> i.get("label").asText()).containsExactly("Chrome", "Firefox", "Edge", "Safari");
        assertThat(byBrowser.get(0).get("count").asInt()).isEqualTo(6);

        final ArrayNode filtered = run("{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"prop\",\"value\":15,\"operator\":\"gt\"}]}],"
                + "\"properties\":[{\"key\":\"email\",\"value\":\"@mail.test\",\"operator\":\"icontains\",\"type\":\"person\"}],"
                + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(filtered.get(0).get("count").asInt()).as("p2's two pageviews").isEqualTo(2);

        final ArrayNode testAccounts = run("{\"events\":[{\"id\":\"$pageview\"}],\"filter_test_accounts\":true,"
                + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(testAccounts.get(0).get("count").asInt()).as("corp.test persons are test accounts").isEqualTo(4);

        final ArrayNode bold = run("{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"display\":\"BoldNumber\","
                + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(bold.get(0).get("aggregated_value").asInt()).isEqualTo(4);
        assertThat(bold.get(0).get("data")).isEmpty();

        final ArrayNode sum = run("{\"events\":[{\"id\":\"$pageview\",\"math\":\"sum\",\"math_property\":\"prop\"}],\"display\":\"ActionsTable\","
                + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(sum.get(0).get("aggregated_value").asInt()).isEqualTo(6 * 10 + 2 * 20 + 30 + 40);
    }

    @Test
    void smoothingAveragesEachPointWithThePointsBeforeItAsPostHogDoes() {
        // PostHog's test_smoothing: daily counts 1,0,1,3,1,0,2,0,1,0,1,0 averaged over up to 7 days, rounded down.
        final JsonNode smoothed = run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-20\","
                + "\"smoothing_intervals\":7}").get(0);
        assertThat(ints(smoothed.get("data"))).containsExactly(1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0);
        assertThat(smoothed.get("count").asInt()).isEqualTo(8);
        final JsonNode two = run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-14\","
                + "\"smoothing_intervals\":\"2\"}").get(0);
        assertThat(ints(two.get("data"))).containsExactly(1, 0, 0, 2, 2, 0);
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-14\","
                + "\"smoothing_intervals\":1}").get(0).get("data"))).containsExactly(1, 0, 1, 3, 1, 0);
        for (final String bad : List.of("0", "-2", "\"soon\"", "1.5")) {
            assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"$pageview\"}],\"smoothing_intervals\":" + bad + "}"))
                    .hasMessage("Smoothing intervals must be a positive integer!");
        }
    }

    @Test
    void normalizedUrlBreakdownsDropTrailingSeparators() {
        final TrendQuery query = parse("{\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"$current_url\",\"breakdown_normalize_url\":true}");
        final TrendQuery.Partial partial = query.partial();
        int i = 0;
        for (final String url : List.of("https://x.test/a/", "https://x.test/a?#", "https://x.test/a", "/", "https://x.test/b?q=1")) {
            final TimelineEvent event = new TimelineEvent(Instant.parse("2020-01-29T12:00:00Z").toEpochMilli() * 1000, UUID.randomUUID(), "$pageview",
                    "p" + i++, Map.of(), ("{\"$current_url\":\"" + url + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            query.add(partial, "p1", event, TrendTesting.NO_PROPERTIES, NOW);
        }
        final ArrayNode result = query.result(partial);
        assertThat(result).extracting(item -> item.get("breakdown_value").asText() + "=" + item.get("count").asInt())
                .containsExactly("https://x.test/a=3", "/=1", "https://x.test/b?q=1=1");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"breakdown\":\"amount\",\"breakdown_histogram_bin_count\":10}"))
                .hasMessageContaining("breakdown_histogram_bin_count is not supported");
    }

    @Test
    void queriesPostHogWouldRefuseAreRefused() {
        assertThatThrownBy(() -> run("{\"events\":[]}")).hasMessageContaining("at least one");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\",\"math\":\"sum\"}]}")).hasMessageContaining("math_property");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\",\"math\":\"banana\"}]}")).hasMessageContaining("banana");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"interval\":\"fortnight\"}")).hasMessageContaining("fortnight");
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"date_from\":\"2020-99-99\"}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"formula\":\"A+C\"}")).hasMessageContaining("series C");
        assertThatThrownBy(() -> run("{\"events\":\"a\"}")).hasMessageContaining("list");
        final StringBuilder many = new StringBuilder("{\"events\":[");
        for (int i = 0; i <= TrendQuery.MAX_SERIES; i++) {
            many.append(i == 0 ? "" : ",").append("{\"id\":\"e").append(i).append("\"}");
        }
        assertThatThrownBy(() -> run(many.append("]}").toString())).hasMessageContaining("at most 100 series");
    }

    @Test
    void scansSkipEventsNoSeriesNames() {
        assertThat(parse("{\"events\":[{\"id\":\"a\"},{\"id\":\"b\",\"math\":\"dau\"}]}").eventNames()).contains(java.util.Set.of("a", "b"));
        assertThat(parse("{\"events\":[{\"id\":\"a\"},{\"id\":null}]}").eventNames()).as("a series of all events").isEmpty();
    }

    private static TrendQuery parse(final String json) {
        return TrendQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
    }

    /**
     * A block's answer may be kept for another query exactly when both have the same shape: what the event alone
     * decides. Person, group and relative-date filters and breakdowns other than the event's decide it too.
     */
    @Test
    void aBlockAnswerIsKeptOnlyForQueriesOfTheSameShapeDecidedByTheEventAlone() {
        final String filtered = "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"$browser\",\"value\":\"Safari\","
                + "\"operator\":\"is_not\"}],\"breakdown\":\"$current_url\",\"date_from\":\"-7d\"}";
        final Optional<String> shape = parse(filtered).blockShape();
        assertThat(shape).isPresent();
        assertThat(parse(filtered.replace("{\"events\"", "{\"name\":\"renamed\",\"events\"")).blockShape()).as("a name adds nothing")
                .isEqualTo(shape);
        for (final String other : List.of(filtered.replace("Safari", "Chrome"), filtered.replace("is_not", "exact"),
                filtered.replace("$current_url", "$browser"), filtered.replace("-7d", "-8d"), filtered.replace("$pageview", "signup"),
                filtered.replace("\"id\":\"$pageview\"", "\"id\":\"$pageview\",\"math\":\"dau\""),
                filtered.replace("\"date_from\"", "\"interval\":\"hour\",\"date_from\""),
                filtered.replace("\"date_from\"", "\"compare\":true,\"date_from\""),
                filtered.replace("\"properties\":[", "\"properties\":[{\"key\":\"x\",\"operator\":\"is_set\"},"))) {
            assertThat(parse(other).blockShape()).as(other).isPresent().isNotEqualTo(shape);
        }
        // A key that reads like the rest of a filter is still another filter.
        assertThat(parse("{\"events\":[{\"id\":\"a\"}],\"properties\":[{\"key\":\"k\\\",\\\"operator\\\":\\\"exact\",\"value\":\"v\"}]}")
                .blockShape()).isNotEqualTo(parse("{\"events\":[{\"id\":\"a\"}],\"properties\":[{\"key\":\"k\",\"value\":\"v\"}]}").blockShape());
        for (final String changesWithoutTheBlock : List.of(
                filtered.replace("\"operator\":\"is_not\"}", "\"operator\":\"is_not\",\"type\":\"person\"}"),
                filtered.replace("\"breakdown\":\"$current_url\"", "\"breakdown\":\"plan\",\"breakdown_type\":\"person\""),
                filtered.replace("\"breakdown\":\"$current_url\"", "\"breakdown\":\"industry\",\"breakdown_type\":\"group\","
                        + "\"breakdown_group_type_index\":0"),
                "{\"events\":[{\"id\":\"a\",\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}]}",
                "{\"events\":[{\"id\":\"a\"}],\"properties\":[{\"key\":\"industry\",\"value\":\"tech\",\"type\":\"group\",\"group_type_index\":0}]}",
                "{\"events\":[{\"id\":\"a\"}],\"properties\":[{\"key\":\"signed_up_at\",\"value\":\"-7d\",\"operator\":\"is_date_before\"}]}")) {
            assertThat(parse(changesWithoutTheBlock).blockShape()).as(changesWithoutTheBlock).isEmpty();
        }
    }

    /** A formula with a breakdown: one item per value, a series without the value as zeros, ranked as PostHog. */
    @Test
    void formulasApplyPerBreakdownValue() {
        final ArrayNode result = run("{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"$pageleave\",\"order\":1}],"
                + "\"formula\":\"A+B\",\"breakdown\":\"$browser\",\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        assertThat(result.findValuesAsText("breakdown_value")).containsExactly("Chrome", "Firefox", "Edge", "Safari");
        assertThat(ints(result.get(0).get("data"))).containsExactly(0, 0, 2, 2, 2, 0, 1, 0, 1, 0, 1);
        assertThat(result.get(0).get("count").asInt()).isEqualTo(9);
        assertThat(result.get(0).get("label").asText()).isEqualTo("Formula (A+B)");
        assertThat(result.findValues("count").stream().map(JsonNode::asInt)).containsExactly(9, 3, 2, 2);
        final ArrayNode ratio = run("{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"$pageleave\",\"order\":1}],"
                + "\"formula\":\"B/A\",\"breakdown\":\"$browser\",\"display\":\"ActionsTable\",\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}");
        // Edge and Safari 1 leave over 1 view; Chrome 3 over 6, Firefox 1 over 2: ties go by value, descending.
        assertThat(ratio.findValuesAsText("breakdown_value")).containsExactly("Safari", "Edge", "Firefox", "Chrome");
        assertThat(ratio.findValues("aggregated_value").stream().map(JsonNode::asDouble)).containsExactly(1.0, 1.0, 0.5, 0.5);
    }

    /** Queries too large to hold are refused with a message saying what to change, not answered out of memory. */
    @Test
    void oversizedQueriesAreRefused() {
        assertThatThrownBy(() -> run("{\"events\":[{\"id\":\"a\"}],\"interval\":\"hour\",\"date_from\":\"2010-01-01\",\"date_to\":\"2020-01-01\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("coarser interval");
        // About 5.7 years by hour (49,680 intervals) broken down by 202 values: more than 10M cells.
        final TrendQuery trend = TrendQuery.parse(read("{\"events\":[{\"id\":\"a\"}],\"interval\":\"hour\",\"breakdown\":\"v\","
                + "\"date_from\":\"2014-05-01\",\"date_to\":\"2020-01-01\"}"), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        final TrendQuery.Partial partial = trend.partial();
        final PropertyLookup none = TrendTesting.NO_PROPERTIES;
        assertThatThrownBy(() -> {
            for (int i = 0; i < 300; i++) {
                trend.add(partial, "p", new TimelineEvent(Instant.parse("2019-01-01T00:00:00Z").toEpochMilli() * 1000, UUID.randomUUID(), "a", "d",
                        Map.of(), ("{\"v\":" + i + "}").getBytes(StandardCharsets.UTF_8)), none, NOW);
            }
        }).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too many breakdown values");
    }

    /** Counting trends are answered from hourly counts exactly as from the events; others are not answerable so. */
    @Test
    void hourlyCountsAnswerUnfilteredCountingTrends() {
        for (final String display : List.of("ActionsLineGraph", "ActionsLineGraphCumulative", "BoldNumber")) {
            final String json = "{\"events\":[{\"id\":\"$pageview\"},{\"id\":null}],\"date_from\":\"2020-01-09\","
                    + "\"date_to\":\"2020-01-19\",\"display\":\"" + display + "\",\"compare\":true}";
            final TrendQuery trend = TrendQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
            assertThat(trend.answerableFromRollups()).isTrue();
            final TrendQuery.Partial counted = trend.partial();
            for (final String[] ev : EVENTS) {
                trend.addHourly(counted, ev[1], Instant.parse("2020-01-" + ev[2] + "T12:00:00Z").getEpochSecond() / 3600, 1);
            }
            assertThat(trend.result(counted).toString()).as(display).isEqualTo(run(json).toString());
        }
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}")
                .get(0).get("data"))).containsExactly(1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1);

        final String base = "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"";
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + "}", "America/New_York")).isTrue();
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + ",\"interval\":\"week\"}", "Europe/Berlin")).isTrue();
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + "}", "Asia/Kolkata")).as("a half-hour offset").isFalse();
        assertThat(answerable("{\"events\":[{\"id\":\"a\",\"math\":\"dau\"}]," + base + "}", "UTC")).isTrue();
        assertThat(answerable("{\"events\":[{\"id\":\"a\",\"math\":\"sum\",\"math_property\":\"x\"}]," + base + "}", "UTC")).isFalse();
        assertThat(answerable("{\"events\":[{\"id\":\"a\",\"math\":\"unique_group\",\"math_group_type_index\":0}]," + base + "}", "UTC"))
                .isFalse();
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + ",\"breakdown\":\"$browser\"}", "UTC")).isFalse();
        assertThat(answerable("{\"events\":[{\"id\":\"a\",\"properties\":[{\"key\":\"x\",\"value\":1}]}]," + base + "}", "UTC")).isFalse();
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + ",\"properties\":{\"type\":\"AND\",\"values\":[]}}", "UTC"))
                .as("an empty filter group filters nothing").isTrue();
        assertThat(answerable("{\"events\":[{\"id\":\"a\"}]," + base + ",\"filter_test_accounts\":true}", "UTC")).isFalse();
    }

    /** Distinct-person math from the markers' person-hours equals it from the events, weekly and monthly actives too. */
    @Test
    void uniquePersonMarkersAnswerActiveUserTrends() {
        for (final String json : List.of(
                "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"},{\"id\":null,\"math\":\"dau\"},{\"id\":\"$pageview\"}],"
                        + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\",\"compare\":true}",
                "{\"events\":[{\"id\":\"$pageview\",\"math\":\"weekly_active\"},{\"id\":\"$pageleave\",\"math\":\"monthly_active\"}],"
                        + "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}",
                "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-31\","
                        + "\"interval\":\"week\",\"display\":\"ActionsLineGraphCumulative\"}",
                "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-31\","
                        + "\"display\":\"BoldNumber\"}")) {
            final TrendQuery trend = TrendQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
            assertThat(trend.answerableFromRollups()).as(json).isTrue();
            final TrendQuery.Partial counted = trend.partial();
            for (final String[] ev : EVENTS) {
                final long hour = Instant.parse("2020-01-" + ev[2] + "T12:00:00Z").getEpochSecond() / 3600;
                trend.addHourly(counted, ev[1], hour, 1);
                trend.addPersonHour(counted, ev[1], ev[0], hour);
                trend.addPersonHour(counted, UniqueMarkers.ALL_EVENTS, ev[0], hour);
            }
            assertThat(trend.result(counted).toString()).as(json).isEqualTo(run(json).toString());
        }
        // PostHog's fixture: daily actives of $pageview, and weekly actives.
        assertThat(ints(run("{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"date_from\":\"2020-01-09\","
                + "\"date_to\":\"2020-01-19\"}").get(0).get("data"))).containsExactly(1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1);
    }

    private static boolean answerable(final String json, final String zone) {
        final JsonNode testAccounts = read("[{\"key\":\"email\",\"value\":\"@corp.test\",\"operator\":\"not_icontains\",\"type\":\"person\"}]");
        return TrendQuery.parse(read(json), java.time.ZoneId.of(zone), DayOfWeek.SUNDAY, testAccounts, NOW, Optional::empty)
                .answerableFromRollups();
    }

    /** Uuid actors, property values and breakdown rows survive the trip between instances exactly. */
    @Test
    void partialsTravelBetweenInstancesAsBytes() {
        final TrendQuery trend = TrendQuery.parse(read("{\"events\":[{\"id\":\"buy\",\"math\":\"dau\"},"
                        + "{\"id\":\"buy\",\"math\":\"p90\",\"math_property\":\"amount\"}],\"breakdown\":\"$browser\","
                        + "\"date_from\":\"2020-01-28\",\"date_to\":\"2020-01-29\"}"),
                ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        final TrendQuery.Partial local = trend.partial();
        final TrendQuery.Partial travelling = trend.partial();
        final PropertyLookup none = TrendTesting.NO_PROPERTIES;
        for (int i = 0; i < 40; i++) {
            final String person = new UUID(7, i % 10).toString();
            final long micros = Instant.parse("2020-01-2" + (8 + i % 2) + "T10:00:00Z").toEpochMilli() * 1000 + i;
            final String props = "{\"$browser\":\"" + (i % 3 == 0 ? "Chrome" : "Safari") + "\",\"amount\":" + i + "}";
            trend.add(i < 25 ? local : travelling, person, new TimelineEvent(micros, UUID.randomUUID(), "buy", "d" + i, Map.of(),
                    props.getBytes(StandardCharsets.UTF_8)), none, NOW);
        }
        final TrendQuery.Partial direct = trend.partial().merge(local).merge(travelling);
        final byte[] wire = travelling.encode();
        final TrendQuery.Partial copy = trend.partial().merge(local).merge(trend.decode(wire));
        assertThat(trend.result(copy).toString()).isEqualTo(trend.result(direct).toString());
        // Five persons a day per browser: a tie, ranked by value.
        final JsonNode chrome = trend.result(copy).get(0);
        assertThat(chrome.get("breakdown_value").asText()).isEqualTo("Chrome");
        assertThat(ints(chrome.get("data"))).containsExactly(5, 5);
        // p90 of Chrome's amounts on the 28th, 0, 6, 12, 18, 24, 30, 36: interpolated at 5.4 of 6.
        assertThat(trend.result(copy).get(2).get("data").get(0).asDouble()).isCloseTo(32.4, org.assertj.core.data.Offset.offset(1e-9));
        assertThatThrownBy(() -> trend.decode(java.util.Arrays.copyOf(wire, wire.length - 3))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> trend.decode(new byte[] {9})).hasMessageContaining("version");
    }

    private static ArrayNode run(final String json) {
        final JsonNode query;
        try {
            query = Json.mapper().readTree(json);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
        final JsonNode testAccounts = read("[{\"key\":\"email\",\"value\":\"@corp.test\",\"operator\":\"not_icontains\",\"type\":\"person\"}]");
        final TrendQuery trend = TrendQuery.parse(query, ZoneOffset.UTC, DayOfWeek.SUNDAY, testAccounts, NOW, Optional::empty);
        // Two partials, as two instances would compute them, merged.
        final TrendQuery.Partial first = trend.partial();
        final TrendQuery.Partial second = trend.partial();
        final PropertyLookup properties = new PropertyLookup() {
            @Override
            public ObjectNode person(final String personUuid) {
                return (ObjectNode) read(PERSONS.get(personUuid));
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                return Json.mapper().createObjectNode();
            }
        };
        final List<String[]> events = new ArrayList<>(EVENTS);
        for (int i = 0; i < events.size(); i++) {
            final String[] ev = events.get(i);
            final long micros = Instant.parse("2020-01-" + ev[2] + "T12:00:00Z").toEpochMilli() * 1000;
            final TimelineEvent timeline = new TimelineEvent(micros, UUID.randomUUID(), ev[1], ev[0], Map.of(),
                    PERSONS.get(ev[0]).getBytes(StandardCharsets.UTF_8));
            trend.add(i % 2 == 0 ? first : second, ev[0], timeline, properties, NOW);
        }
        // The second travels as bytes, as from another instance.
        return trend.result(first.merge(trend.decode(second.encode())));
    }

}
