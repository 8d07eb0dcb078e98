package dev.eddy.paths;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyFilter;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Paths over persons' events, with the events, queries and expected edges of PostHog's own paths tests
 * ({@code test_paths_query_runner.py} and the legacy {@code test_paths.py}).
 */
class PathQueryTest {
    /** Events of persons, each {@code person, event, item (URL, screen name or nothing), time}, in the order given. */
    private static final class Fixture {
        private final Map<String, List<String[]>> persons = new LinkedHashMap<>();

        Fixture add(final String person, final String event, final String item, final String time) {
            persons.computeIfAbsent(person, p -> new ArrayList<>()).add(new String[] {event, item, time});
            return this;
        }

        /** Pageviews of one person: pairs of URL and time. */
        Fixture views(final String person, final String... urlsAndTimes) {
            for (int i = 0; i < urlsAndTimes.length; i += 2) {
                add(person, "$pageview", urlsAndTimes[i], urlsAndTimes[i + 1]);
            }
            return this;
        }

        ArrayNode run(final String json, final String now) {
            final PathQuery query = parse(json, now);
            final List<PathQuery.Partial> partials = List.of(query.partial(), query.partial());
            int i = 0;
            for (final List<String[]> events : persons.values()) {
                final List<PathQuery.Step> steps = new ArrayList<>();
                for (final String[] e : events) {
                    final String property = "$pageview".equals(e[0]) ? "$current_url" : "$screen_name";
                    final JsonNode properties = Json.mapper().createObjectNode().put(property, e[1]);
                    final long micros = TimelineEvent.micros(Instant.parse(e[2]));
                    query.item(micros, e[0], PropertyFilter.Source.ofEvent(properties), Instant.parse(now))
                            .ifPresent(item -> steps.add(new PathQuery.Step(micros, item)));
                }
                query.add(partials.get(i++ % 2), steps);
            }
            return query.result(partials.get(0).merge(query.decode(partials.get(1).encode())));
        }
    }

    private static PathQuery parse(final String json, final String now) {
        try {
            return PathQuery.parse(Json.mapper().readTree(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, Instant.parse(now), Optional::empty);
        } catch (final IOException e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> edges(final ArrayNode result) {
        final List<String> edges = new ArrayList<>();
        result.forEach(e -> edges.add(e.get("source").asText() + " > " + e.get("target").asText() + " " + e.get("value").asLong() + " "
                + (long) e.get("average_conversion_time").asDouble()));
        return edges;
    }

    @Test
    void pageviewPathsOfTheLastWeekByDefault() {
        final Fixture fixture = new Fixture()
                .views("fake", "/", "2012-01-01T03:21:34Z", "/about", "2012-01-01T03:21:34Z")
                .views("person_1", "/", "2012-01-14T03:21:34Z", "/about", "2012-01-14T03:28:34Z")
                .views("person_2", "/", "2012-01-14T03:21:34Z", "/pricing", "2012-01-14T03:28:34Z", "/about", "2012-01-14T03:29:34Z")
                .views("person_3", "/pricing", "2012-01-14T03:21:34Z", "/", "2012-01-14T03:28:34Z")
                .views("person_4", "/", "2012-01-14T03:21:34Z", "/pricing", "2012-01-14T03:28:34Z");
        final ArrayNode result = fixture.run("{}", "2012-01-15T03:21:34Z");
        assertThat(edges(result)).containsExactly("1_/ > 2_/pricing 2 420000", "1_/ > 2_/about 1 420000", "1_/pricing > 2_/ 1 420000",
                "2_/pricing > 3_/about 1 60000");
        assertThat(result.get(0).get("average_conversion_time").isDouble()).isTrue();
        assertThat(fixture.run("{\"date_from\":\"2012-01-22\"}", "2012-01-15T03:21:34Z")).isEmpty();
        assertThat(fixture.run("{\"date_from\":\"2012-01-08\",\"date_to\":\"2012-01-22\"}", "2012-01-15T03:21:34Z")).hasSize(4);
        assertThat(fixture.run("{\"date_from\":\"2012-01-22\",\"date_to\":\"2012-01-08\"}", "2012-01-15T03:21:34Z")).isEmpty();
    }

    @Test
    void screensAndCustomEvents() {
        final Fixture screens = new Fixture()
                .add("p1", "$screen", "/", "2012-01-14T03:00:00Z").add("p1", "$screen", "/about", "2012-01-14T03:01:00Z")
                .add("p2", "$screen", "/", "2012-01-14T03:00:00Z").add("p2", "$screen", "/pricing", "2012-01-14T03:01:00Z")
                .add("p2", "$screen", "/about", "2012-01-14T03:02:00Z")
                .add("p3", "$screen", "/pricing", "2012-01-14T03:00:00Z").add("p3", "$screen", "/", "2012-01-14T03:01:00Z")
                .add("p4", "$screen", "/", "2012-01-14T03:00:00Z").add("p4", "$screen", "/pricing", "2012-01-14T03:01:00Z")
                .add("p4", "$pageview", "/ignored", "2012-01-14T03:02:00Z");
        assertThat(edges(screens.run("{\"include_event_types\":[\"$screen\"],\"date_from\":\"2012-01-01\"}", "2012-01-15T00:00:00Z")))
                .containsExactly("1_/ > 2_/pricing 2 60000", "1_/ > 2_/about 1 60000", "1_/pricing > 2_/ 1 60000", "2_/pricing > 3_/about 1 60000");
        final Fixture custom = new Fixture()
                .add("p1", "custom_event_1", "", "2012-01-14T03:00:00Z").add("p1", "custom_event_3", "", "2012-01-14T03:01:00Z")
                .add("p1", "$pageview", "/", "2012-01-14T03:02:00Z")
                .add("p2", "custom_event_1", "", "2012-01-14T03:00:00Z").add("p2", "custom_event_2", "", "2012-01-14T03:01:00Z")
                .add("p2", "custom_event_3", "", "2012-01-14T03:02:00Z")
                .add("p3", "custom_event_2", "", "2012-01-14T03:00:00Z").add("p3", "custom_event_1", "", "2012-01-14T03:01:00Z")
                .add("p4", "custom_event_1", "", "2012-01-14T03:00:00Z").add("p4", "custom_event_2", "", "2012-01-14T03:01:00Z");
        assertThat(edges(custom.run("{\"include_event_types\":[\"custom_event\"],\"date_from\":\"2012-01-01\"}", "2012-01-15T00:00:00Z")))
                .containsExactly("1_custom_event_1 > 2_custom_event_2 2 60000", "1_custom_event_1 > 2_custom_event_3 1 60000",
                        "1_custom_event_2 > 2_custom_event_1 1 60000", "2_custom_event_2 > 3_custom_event_3 1 60000");
    }

    @Test
    void startAndEndPointsCutEachSessionPath() {
        final Fixture starts = new Fixture()
                .views("p1", "/", "2021-05-01T00:01:00Z", "/about/", "2021-05-01T00:02:00Z")
                .views("p2", "/", "2021-05-01T00:01:00Z", "/pricing/", "2021-05-01T00:02:00Z", "/about", "2021-05-01T00:03:00Z")
                .views("p3", "/pricing", "2021-05-01T00:01:00Z", "/", "2021-05-01T00:02:00Z", "/about/", "2021-05-01T00:03:00Z")
                .views("p4", "/", "2021-05-01T00:01:00Z", "/pricing/", "2021-05-01T00:02:00Z")
                .views("p5", "/pricing", "2021-05-01T00:01:00Z", "/about", "2021-05-01T00:02:00Z", "/pricing/", "2021-05-01T00:03:00Z",
                        "/help", "2021-05-01T00:04:00Z");
        final String now = "2021-05-02T00:00:00Z";
        assertThat(edges(starts.run("{\"start_point\":\"/pricing/\",\"date_from\":\"2021-05-01\"}", now))).containsExactly(
                "1_/pricing > 2_/about 2 60000", "1_/pricing > 2_/ 1 60000", "2_/ > 3_/about 1 60000", "2_/about > 3_/pricing 1 60000",
                "3_/pricing > 4_/help 1 60000");
        assertThat(edges(starts.run("{\"start_point\":\"/\",\"date_from\":\"2021-05-01\"}", now))).containsExactly(
                "1_/ > 2_/about 2 60000", "1_/ > 2_/pricing 2 60000", "2_/pricing > 3_/about 1 60000");

        final Fixture ends = new Fixture()
                .views("p1", "/1", "2021-05-01T00:01:00Z", "/2", "2021-05-01T00:02:00Z", "/3/", "2021-05-01T00:03:00Z", "/4/", "2021-05-01T00:04:00Z",
                        "/5", "2021-05-01T00:05:00Z", "/about", "2021-05-01T00:06:00Z", "/after/", "2021-05-01T00:07:00Z")
                .views("p2", "/5", "2021-05-01T00:01:00Z", "/about", "2021-05-01T00:02:00Z")
                .views("p3", "/3/", "2021-05-01T00:01:00Z", "/4", "2021-05-01T00:02:00Z", "/about/", "2021-05-01T00:03:00Z", "/after", "2021-05-01T00:04:00Z");
        final String range = "\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-07\"";
        assertThat(edges(ends.run("{\"end_point\":\"/about\"," + range + "}", "2021-05-08T00:00:00Z"))).containsExactly(
                "1_/2 > 2_/3 1 60000", "1_/3 > 2_/4 1 60000", "1_/5 > 2_/about 1 60000", "2_/3 > 3_/4 1 60000", "2_/4 > 3_/about 1 60000",
                "3_/4 > 4_/5 1 60000", "4_/5 > 5_/about 1 60000");
        assertThat(edges(ends.run("{\"start_point\":\"/5\",\"end_point\":\"/about\"," + range + "}", "2021-05-08T00:00:00Z")))
                .containsExactly("1_/5 > 2_/about 2 60000");
        assertThat(edges(ends.run("{\"start_point\":\"/2\",\"end_point\":\"/about\",\"step_limit\":4," + range + "}", "2021-05-08T00:00:00Z")))
                .containsExactly("1_/2 > 2_/3 1 60000", "2_/3 > 3_... 1 60000", "3_... > 4_/5 1 60000", "4_/5 > 5_/about 1 60000");
    }

    @Test
    void stepLimitsRepeatsAndSessions() {
        final Fixture one = new Fixture().views("fake", "/1", "2012-01-01T03:21:34Z", "/2", "2012-01-01T03:22:34Z", "/3", "2012-01-01T03:24:34Z",
                "/4", "2012-01-01T03:27:34Z");
        final String now = "2012-01-07T03:21:34Z";
        assertThat(edges(one.run("{\"step_limit\":2}", now))).containsExactly("1_/1 > 2_/2 1 60000");
        assertThat(edges(one.run("{\"step_limit\":4}", now))).containsExactly("1_/1 > 2_/2 1 60000", "2_/2 > 3_/3 1 120000", "3_/3 > 4_/4 1 180000");

        final Fixture repeats = new Fixture()
                .views("fake", "/1", "2012-01-01T03:21:34Z", "/1", "2012-01-01T03:21:54Z", "/2", "2012-01-01T03:22:34Z", "/2/", "2012-01-01T03:22:54Z",
                        "/3", "2012-01-01T03:24:54Z")
                .views("fake2", "/1", "2012-01-01T03:21:34Z", "/2/", "2012-01-01T03:23:34Z", "/3", "2012-01-01T03:27:34Z");
        assertThat(edges(repeats.run("{\"date_from\":\"2012-01-01\"}", now))).as("the last of repeats counts, with its time")
                .containsExactly("1_/1 > 2_/2 2 90000", "2_/2 > 3_/3 2 180000");

        final Fixture sessions = new Fixture().views("fake", "/1", "2012-01-01T03:21:34Z", "/2", "2012-01-01T03:22:34Z", "/3", "2012-01-01T03:24:34Z",
                "/1", "2012-01-02T03:21:54Z", "/2/", "2012-01-02T03:22:54Z", "/3", "2012-01-02T03:26:54Z");
        assertThat(edges(sessions.run("{\"date_from\":\"2012-01-01\"}", now))).as("one person, two sessions")
                .containsExactly("1_/1 > 2_/2 2 60000", "2_/2 > 3_/3 2 180000");
    }

    @Test
    void groupingsAndExclusions() {
        final Fixture bars = new Fixture()
                .views("p1", "/1", "2012-01-01T03:21:34Z", "/2/bar/1/foo", "2012-01-01T03:22:34Z", "/3", "2012-01-01T03:24:34Z")
                .views("p2", "/1", "2012-01-01T03:21:34Z", "/bar/2/foo", "2012-01-01T03:22:34Z", "/3", "2012-01-01T03:24:34Z")
                .views("p3", "/1", "2012-01-01T03:21:34Z", "/bar/33/foo", "2012-01-01T03:24:34Z", "/3", "2012-01-01T03:24:34Z");
        final String now = "2012-01-07T03:21:34Z";
        final String base = "\"step_limit\":4,\"include_event_types\":[\"$pageview\"],\"date_from\":\"2012-01-01\"";
        final ArrayNode grouped = bars.run("{" + base + ",\"path_groupings\":[\"/bar/*/foo\"]}", now);
        assertThat(edges(grouped)).extracting(e -> e.substring(0, e.lastIndexOf(' ')))
                .containsExactly("1_/1 > 2_/bar/*/foo 3", "2_/bar/*/foo > 3_/3 3");
        assertThat(edges(bars.run("{" + base + ",\"path_groupings\":[\"/bar/*/foo\"],\"exclude_events\":[\"/bar/*/foo\"]}", now)))
                .containsExactly("1_/1 > 2_/3 3 180000");
        assertThat(bars.run("{" + base + ",\"path_groupings\":[\"/xxx/invalid/*\"],\"exclude_events\":[\"/bar/*/foo\"]}", now)).hasSize(6);
    }

    @Test
    void edgeWeightsLimitsAndRefusals() {
        final Fixture fixture = new Fixture();
        for (int i = 0; i < 3; i++) {
            fixture.views("a" + i, "/a", "2012-01-01T03:00:00Z", "/b", "2012-01-01T03:01:00Z");
        }
        fixture.views("c", "/c", "2012-01-01T03:00:00Z", "/d", "2012-01-01T03:01:00Z", "/e", "2012-01-01T03:02:00Z");
        final String now = "2012-01-07T00:00:00Z";
        assertThat(edges(fixture.run("{\"date_from\":\"2012-01-01\",\"min_edge_weight\":2}", now))).containsExactly("1_/a > 2_/b 3 60000");
        assertThat(edges(fixture.run("{\"date_from\":\"2012-01-01\",\"edge_limit\":2}", now))).as("2_/d's edge did not make the limit")
                .containsExactly("1_/a > 2_/b 3 60000", "1_/c > 2_/d 1 60000");
        assertThatThrownBy(() -> parse("{\"min_edge_weight\":5,\"max_edge_weight\":2}", now)).hasMessage("Max Edge weight can't be lower than min edge weight");
        assertThatThrownBy(() -> parse("{\"include_event_types\":[\"hogql\"]}", now)).hasMessageContaining("not supported");
        assertThatThrownBy(() -> parse("{\"funnel_paths\":\"funnel_path_after_step\"}", now)).hasMessageContaining("not supported");
        assertThatThrownBy(() -> parse("{\"include_event_types\":[\"$click\"]}", now)).hasMessageContaining("$pageview, $screen and custom_event");
    }
}
