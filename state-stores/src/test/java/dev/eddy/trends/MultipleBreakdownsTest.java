package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.ints;
import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

/**
 * Trends broken down by several properties ({@code breakdowns}), with the events, queries and numbers of PostHog's trends
 * query runner tests ({@code test_trends_query_runner.py}, {@code test_trends_breakdown_empty_null_properties.py}).
 */
class MultipleBreakdownsTest {
    private static final Instant NOW = Instant.parse("2020-02-01T00:00:00Z");
    private static final String NULL = TrendEvent.NULL_BREAKDOWN;
    private static final String OTHER = TrendEvent.OTHER_BREAKDOWN;
    private static final String RANGE = "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-20\"";
    /** PostHog's groups: organizations (type 0) and one company (type 1). */
    private static final Map<String, String> GROUPS = Map.of(
            "0:org:5", "{\"name\":\"Hedgeflix\",\"industry\":\"finance\"}",
            "0:org:6", "{\"name\":\"Hedgebox\",\"industry\":\"technology\"}",
            "0:org:7", "{\"name\":\"Hedgebank\",\"industry\":\"finance\"}",
            "1:company:10", "{\"name\":\"Hedgeheadquarters\",\"industry\":\"service\",\"employee_count\":\"50-249\"}");

    /** PostHog's {@code _create_test_events}: each person's pageviews at 12:00, each with the person's event properties and groups. */
    private static List<Event> fixture() {
        final List<Event> events = new ArrayList<>();
        person(events, "p1", "{\"$browser\":\"Chrome\",\"prop\":10,\"bool_field\":true}", Map.of(0, "org:5"), 11, 12, 13, 15, 17, 19);
        person(events, "p2", "{\"$browser\":\"Firefox\",\"prop\":20,\"bool_field\":false}", Map.of(0, "org:6"), 9, 12);
        person(events, "p3", "{\"$browser\":\"Edge\",\"prop\":30,\"bool_field\":true}", Map.of(0, "org:7", 1, "company:10"), 12);
        person(events, "p4", "{\"$browser\":\"Safari\",\"prop\":40,\"bool_field\":false}", Map.of(0, "company:10"), 15);
        return events;
    }

    private static void person(final List<Event> events, final String person, final String properties, final Map<Integer, String> groups,
                               final int... days) {
        for (final int day : days) {
            events.add(new Event(person, String.format("2020-01-%02dT12:00:00Z", day), properties, groups));
        }
    }

    @Test
    void eventPropertiesTwoAndThree() {
        final ArrayNode two = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"$browser\",\"type\":\"event\"},"
                + "{\"property\":\"prop\",\"type\":\"event\"}]," + RANGE + "}", fixture());
        assertThat(two).extracting(i -> i.get("breakdown_value").toString())
                .containsExactly("[\"Chrome\",\"10\"]", "[\"Firefox\",\"20\"]", "[\"Edge\",\"30\"]", "[\"Safari\",\"40\"]");
        assertThat(two).extracting(i -> i.get("label").asText()).containsExactly("Chrome::10", "Firefox::20", "Edge::30", "Safari::40");
        assertThat(two).extracting(i -> i.get("count").asInt()).containsExactly(6, 2, 1, 1);
        assertThat(ints(two.get(0).get("data"))).containsExactly(0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0);

        final ArrayNode three = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"$browser\"},{\"property\":\"prop\"},"
                + "{\"property\":\"bool_field\"}]," + RANGE + "}", fixture());
        assertThat(three).extracting(i -> i.get("label").asText())
                .containsExactly("Chrome::10::true", "Firefox::20::false", "Edge::30::true", "Safari::40::false");
    }

    @Test
    void personAndGroupPropertiesWithNullCombinationsAfterTheOthers() {
        final ArrayNode byName = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"$browser\"},"
                + "{\"property\":\"name\",\"type\":\"person\"}]," + RANGE + "}", fixture());
        assertThat(byName).extracting(i -> i.get("label").asText()).containsExactly("Chrome::p1", "Firefox::p2", "Edge::p3", "Safari::p4");

        final ArrayNode byIndustry = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"$browser\"},"
                + "{\"property\":\"industry\",\"type\":\"group\",\"group_type_index\":0}]," + RANGE + "}", fixture());
        assertThat(byIndustry).extracting(i -> i.get("label").asText())
                .containsExactly("Chrome::finance", "Firefox::technology", "Edge::finance", "Safari::" + NULL);

        // A combination with a null value comes after every one without, whatever its count.
        final ArrayNode twoGroups = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"employee_count\",\"type\":\"group\","
                + "\"group_type_index\":1},{\"property\":\"industry\",\"type\":\"group\",\"group_type_index\":0}]," + RANGE + "}", fixture());
        assertThat(twoGroups).extracting(i -> i.get("breakdown_value").toString()).containsExactly("[\"50-249\",\"finance\"]",
                "[\"" + NULL + "\",\"finance\"]", "[\"" + NULL + "\",\"technology\"]", "[\"" + NULL + "\",\"" + NULL + "\"]");
        assertThat(twoGroups).extracting(i -> i.get("count").asInt()).containsExactly(1, 6, 2, 1);

        final ArrayNode threeGroups = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"industry\",\"type\":\"group\","
                + "\"group_type_index\":0},{\"property\":\"name\",\"type\":\"group\",\"group_type_index\":0},{\"property\":\"employee_count\","
                + "\"type\":\"group\",\"group_type_index\":1}]," + RANGE + "}", fixture());
        assertThat(threeGroups).extracting(i -> i.get("label").asText()).containsExactly("finance::Hedgebank::50-249",
                "finance::Hedgeflix::" + NULL, "technology::Hedgebox::" + NULL, NULL + "::" + NULL + "::" + NULL);
        assertThat(threeGroups).extracting(i -> i.get("count").asInt()).containsExactly(1, 6, 2, 1);
    }

    @Test
    void theLimitKeepsCombinationsAndSumsTheRestIntoOther() {
        final List<Event> thirty = new ArrayList<>();
        for (int v = 0; v < 30; v++) {
            thirty.add(new Event("person_" + v, "2020-01-11T12:00:00Z", "{\"breakdown_value\":\"" + v + "\",\"other\":\"x\"}", Map.of()));
        }
        final String query = "{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"breakdown_value\"},{\"property\":\"other\"}],"
                + RANGE;
        assertThat(run(query + "}", thirty)).hasSize(26);
        final ArrayNode ten = run(query + ",\"breakdown_limit\":10}", thirty);
        assertThat(ten).hasSize(11);
        assertThat(ten.get(10).get("breakdown_value").toString()).isEqualTo("[\"" + OTHER + "\",\"" + OTHER + "\"]");
        assertThat(ten.get(10).get("count").asInt()).isEqualTo(20);
        assertThat(run(query + ",\"breakdown_limit\":10,\"breakdown_hide_other_aggregation\":true}", thirty)).hasSize(10);
        assertThat(run(query + ",\"breakdown_limit\":10,\"display\":\"ActionsTable\"}", thirty)).hasSize(11);
    }

    @Test
    void aTotalValuePerCombination() {
        // PostHog's test_trends_multiple_breakdowns_single_aggregate: one person's sign-ups by browser and variant.
        final List<Event> signups = new ArrayList<>();
        for (final String[] e : new String[][] {{"Chrome", "1", "01"}, {"Chrome", "2", "01"}, {"Safari", "1", "01"}, {"Safari", "1", "01"},
                {"Safari", "2", "01"}, {"Safari", "2", "02"}, {"Safari", "2", "02"}}) {
            signups.add(new Event("blabla", "2020-01-" + e[2] + "T00:06:34Z", "{\"$browser\":\"" + e[0] + "\",\"$variant\":\"" + e[1] + "\"}", Map.of()));
        }
        final ArrayNode table = run("{\"events\":[{\"id\":\"$pageview\"}],\"display\":\"ActionsTable\",\"breakdowns\":[{\"property\":\"$browser\"},"
                + "{\"property\":\"$variant\"}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-04\"}", signups);
        assertThat(table).extracting(i -> i.get("breakdown_value").toString())
                .containsExactly("[\"Safari\",\"2\"]", "[\"Safari\",\"1\"]", "[\"Chrome\",\"1\"]", "[\"Chrome\",\"2\"]");
        assertThat(table).extracting(i -> i.get("aggregated_value").asInt()).containsExactly(3, 2, 1, 1);
    }

    @Test
    void missingAndEmptyValuesAreNull() {
        final List<Event> events = List.of(new Event("user_none_none", "2020-01-10T12:00:00Z", "{}", Map.of()),
                new Event("user_value_none", "2020-01-10T12:00:00Z", "{\"prop1\":\"value1\",\"prop2\":\"\"}", Map.of()),
                new Event("user_none_value", "2020-01-10T12:00:00Z", "{\"prop2\":\"value2\"}", Map.of()));
        final ArrayNode result = run("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"prop1\"},{\"property\":\"prop2\"}],"
                + RANGE + "}", events);
        assertThat(result).extracting(i -> i.get("breakdown_value").toString()).containsExactly("[\"" + NULL + "\",\"" + NULL + "\"]",
                "[\"" + NULL + "\",\"value2\"]", "[\"value1\",\"" + NULL + "\"]");
        assertThat(result).extracting(i -> i.get("count").asInt()).containsExactly(1, 1, 1);
    }

    @Test
    void whatEddyDoesNotAnswerIsRefusedByName() {
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"breakdown\":\"x\",\"breakdowns\":[{\"property\":\"y\"}]}"))
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"breakdowns\":[{\"property\":\"a\"},{\"property\":\"b\"},{\"property\":\"c\"},"
                + "{\"property\":\"d\"}]}")).hasMessageContaining("at most 3");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"breakdowns\":[{\"property\":\"a\",\"histogram_bin_count\":5}]}"))
                .hasMessageContaining("histogram_bin_count");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"}],\"breakdowns\":[{\"property\":\"a\",\"type\":\"cohort\"}]}"))
                .hasMessageContaining("breakdown_type cohort");
        assertThatThrownBy(() -> parse("{\"events\":[{\"id\":\"a\"},{\"id\":\"b\"}],\"formula\":\"A+B\",\"breakdowns\":[{\"property\":\"a\"}]}"))
                .hasMessageContaining("formulas");
    }

    private record Event(String person, String at, String properties, Map<Integer, String> groups) {
    }

    private static TrendQuery parse(final String json) {
        return TrendQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
    }

    /** The query over {@code events} as two instances would read them (p1's on one), one partial travelling as bytes. */
    private static ArrayNode run(final String json, final List<Event> events) {
        final TrendQuery trend = parse(json);
        final TrendQuery.Partial first = trend.partial();
        final TrendQuery.Partial second = trend.partial();
        final PropertyLookup lookup = new PropertyLookup() {
            @Override
            public ObjectNode person(final String person) {
                return (ObjectNode) read("{\"name\":\"" + person + "\"}");
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                final String group = GROUPS.get(typeIndex + ":" + groupKey);
                return group == null ? Json.mapper().createObjectNode() : (ObjectNode) read(group);
            }
        };
        for (final Event e : events) {
            final TimelineEvent event = new TimelineEvent(Instant.parse(e.at()).toEpochMilli() * 1000, UUID.randomUUID(), "$pageview", e.person(),
                    e.groups(), e.properties().getBytes(StandardCharsets.UTF_8));
            trend.add(e.person().equals("p1") ? first : second, e.person(), event, lookup, NOW);
        }
        return trend.result(first.merge(trend.decode(second.encode())));
    }
}
