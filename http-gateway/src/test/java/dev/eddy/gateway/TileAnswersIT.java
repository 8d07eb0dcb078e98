package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * A trend asked again (a dashboard tile refreshed) merges the answers its sealed event blocks gave before and reads
 * only the rest, and still answers exactly what a fresh calculation does: after new blocks are sealed, after a merge
 * of two persons takes rows out of a sealed block, and after the saved insight's filters change. Each partition here
 * holds more than one block's rows (4,096) of the project, so sealed blocks are what the trends read.
 */
class TileAnswersIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String[] BROWSERS = {"Chrome", "Safari", "Firefox"};
    private static final int DAYS = 10;
    private static final String RANGE = "\"date_from\":\"2022-03-01\",\"date_to\":\"2022-03-10\",\"interval\":\"day\"";
    private static final String NOT_SAFARI = "{\"key\":\"$browser\",\"value\":\"Safari\",\"operator\":\"is_not\",\"type\":\"event\"}";
    /** Pageviews not on Safari, per URL: the benchmark's filtered and broken-down trend. */
    private static final String BY_URL = "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[" + NOT_SAFARI + "],\"breakdown\":\"$current_url\","
            + "\"breakdown_type\":\"event\"," + RANGE + "}";
    /** Daily persons with a pageview not on Safari (read from the blocks: the filter keeps it off the rollups). */
    private static final String PERSONS = "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"properties\":[" + NOT_SAFARI + "]," + RANGE + "}";
    /** Chrome then Firefox within an hour: every person enters; who converts depends on each one's timing. */
    private static final String FUNNEL = "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"$pageview\",\"order\":0,\"properties\":[{\"key\":\"$browser\","
            + "\"value\":\"Chrome\"}]},{\"id\":\"$pageview\",\"order\":1,\"properties\":[{\"key\":\"$browser\",\"value\":\"Firefox\"}]}],"
            + "\"funnel_window_interval\":1,\"funnel_window_interval_unit\":\"hour\"," + RANGE + "}";
    private static final String BY_BROWSER = "{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"$browser\"," + RANGE + "}";

    /** Every pageview sent so far: person, browser, URL, day of March (1 to 10). */
    private final List<String[]> sent = new ArrayList<>();
    private int fresh;
    private long dashboard;

    @Test
    void aTrendAskedAgainEqualsAFreshCalculationWhateverChanged() throws InterruptedException {
        send("tile-a", 5000, 0);
        send("tile-b", 5000, 5000);
        send("tile-anon", 4500, 10000);
        awaitAll(persons -> persons == 3);

        final long tile = tileOf(BY_URL);
        final Map<String, String> expected = byUrl();
        assertThat(breakdown(trend(BY_URL))).isEqualTo(expected).isEqualTo(breakdown(trend(fresh(BY_URL))));
        final long hitsOnce = hits();
        assertThat(breakdown(trend(BY_URL))).as("asked a second time: answers kept from now on").isEqualTo(expected);
        assertThat(hits()).as("nothing was kept for a question asked once").isEqualTo(hitsOnce);
        final long hitsBefore = hits();
        assertThat(breakdown(trend(BY_URL))).as("asked again").isEqualTo(expected);
        assertThat(hits()).as("the sealed blocks' answers (at least one per person) were kept and used").isGreaterThanOrEqualTo(hitsBefore + 3);
        assertThat(breakdown(refreshed(tile))).as("the dashboard's tile").isEqualTo(expected);
        assertThat(trend(PERSONS).path("result").path(0).path("data").toString()).isEqualTo(daily(3));
        final List<Long> steps = steps(FUNNEL);
        assertThat(steps).as("every person enters; some convert").hasSize(2).startsWith(3L).isEqualTo(steps(freshFunnel()));
        assertThat(steps(FUNNEL)).as("asked a second time: progress kept from now on").isEqualTo(steps);
        final long funnelHits = hits();
        assertThat(steps(FUNNEL)).as("asked again").isEqualTo(steps);
        assertThat(hits()).as("the funnel's progress was kept").isGreaterThan(funnelHits);

        // More rows (new blocks sealed), and the anonymous person identified: its rows leave their sealed block and
        // are stored again under tile-a, one person from then on.
        send("tile-b", 4200, 14500);
        final HttpResponse<String> identify = eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$identify\","
                + "\"timestamp\":\"2022-03-10T23:00:00Z\",\"properties\":{\"distinct_id\":\"tile-a\",\"$anon_distinct_id\":\"tile-anon\"}}");
        assertThat(identify.statusCode()).as(identify.body()).isEqualTo(200);
        awaitAll(persons -> persons == 2);

        final Map<String, String> after = byUrl();
        assertThat(after).isNotEqualTo(expected);
        assertThat(breakdown(trend(BY_URL))).isEqualTo(after).isEqualTo(breakdown(trend(fresh(BY_URL))));
        assertThat(breakdown(refreshed(tile))).isEqualTo(after);
        assertThat(trend(PERSONS).path("result").path(0).path("data").toString()).as("tile-anon's rows are tile-a's now").isEqualTo(daily(2));
        assertThat(trend(PERSONS).path("result").path(0).path("data").toString()).isEqualTo(trend(fresh(PERSONS)).path("result").path(0)
                .path("data").toString());

        assertThat(steps(FUNNEL)).startsWith(2L).isEqualTo(steps(freshFunnel()));

        // The insight changes: its tile answers the new question as a fresh calculation does.
        final HttpResponse<String> patched = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/insights/" + tile + "/",
                "{\"filters\":" + BY_BROWSER + "}");
        assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
        final Map<String, String> byBrowser = breakdown(refreshed(tile));
        assertThat(byBrowser).isEqualTo(breakdown(trend(fresh(BY_BROWSER)))).isEqualTo(count(e -> true, 1));
    }

    /** {@code count} pageviews of {@code person}, the {@code first}th event on, in /batch/es of 1,000. */
    private void send(final String person, final int count, final int first) {
        final List<String> batch = new ArrayList<>();
        for (int i = first; i < first + count; i++) {
            final String[] event = {person, BROWSERS[i % BROWSERS.length], "/p" + i % 4, Integer.toString(1 + i % DAYS)};
            sent.add(event);
            batch.add(String.format(Locale.ROOT, "{\"event\":\"$pageview\",\"timestamp\":\"2022-03-%02dT%02d:%02d:%02dZ\",\"properties\":"
                    + "{\"distinct_id\":\"%s\",\"$browser\":\"%s\",\"$current_url\":\"%s\"}}", 1 + i % DAYS, i / DAYS % 24, i / 240 % 60, i % 60,
                    event[0], event[1], event[2]));
            if (batch.size() == 1000 || i == first + count - 1) {
                final HttpResponse<String> response = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken()
                        + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", batch) + "]}");
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                batch.clear();
            }
        }
    }

    /** Until every pageview sent counts, and the daily persons are as {@code persons} expects. */
    private void awaitAll(final java.util.function.IntPredicate persons) throws InterruptedException {
        final String all = "{\"events\":[{\"id\":\"$pageview\"}],\"display\":\"BoldNumber\"," + RANGE + "}";
        eddy.waitUntil(() -> trend(all).path("result").path(0).path("aggregated_value").asLong() == sent.size()
                && persons.test(trend(fresh(PERSONS)).path("result").path(0).path("data").path(0).asInt()), WAIT,
                () -> "all " + sent.size() + " pageviews in the trends");
    }

    /** The same question in another shape (a condition every event meets), which no kept answer serves: computed afresh. */
    private String fresh(final String query) {
        return query.replace("{\"id\":\"$pageview\"", "{\"id\":\"$pageview\",\"properties\":[{\"key\":\"never-set-" + ++fresh
                + "\",\"operator\":\"is_not_set\"}]");
    }

    /** {@link #FUNNEL} in a shape of its own (a global condition every event meets): evaluated afresh. */
    private String freshFunnel() {
        return FUNNEL.replace("\"funnel_window_interval\"", "\"properties\":[{\"key\":\"never-set-" + ++fresh
                + "\",\"operator\":\"is_not_set\"}],\"funnel_window_interval\"");
    }

    /** A funnel's step counts. */
    private static List<Long> steps(final String funnel) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/", funnel);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final List<Long> counts = new ArrayList<>();
        TestEddy.json(response).path("result").forEach(step -> counts.add(step.path("count").asLong()));
        return counts;
    }

    /** What {@link #BY_URL} must answer for the pageviews sent: per URL, the daily counts. */
    private Map<String, String> byUrl() {
        return count(e -> !"Safari".equals(e[1]), 2);
    }

    /** Per value of field {@code field} of the sent pageviews {@code counted} keeps, the daily counts. */
    private Map<String, String> count(final Predicate<String[]> counted, final int field) {
        final Map<String, int[]> days = new TreeMap<>();
        for (final String[] e : sent) {
            if (counted.test(e)) {
                days.computeIfAbsent(e[field], k -> new int[DAYS])[Integer.parseInt(e[3]) - 1]++;
            }
        }
        final Map<String, String> written = new TreeMap<>();
        days.forEach((value, counts) -> written.put(value, Arrays.toString(counts).replace(" ", "")));
        return written;
    }

    private static String daily(final int persons) {
        final int[] days = new int[DAYS];
        Arrays.fill(days, persons);
        return Arrays.toString(days).replace(" ", "");
    }

    /** A trend's items as breakdown value → daily counts. */
    private static Map<String, String> breakdown(final JsonNode result) {
        final Map<String, String> items = new TreeMap<>();
        result.path("result").forEach(item -> items.put(item.path("breakdown_value").asText(), item.path("data").toString()));
        return items;
    }

    private static long hits() {
        return eddy.get("/metrics", Map.of()).body().lines()
                .filter(l -> l.startsWith("cache_gets_total{") && l.contains("cache=\"block-answers\"") && l.contains("result=\"hit\""))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    /** A saved trend of {@code filters} on a new dashboard: the insight's id. */
    private long tileOf(final String filters) {
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"name\":\"tiles\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        dashboard = TestEddy.json(created).get("id").asLong();
        final HttpResponse<String> insight = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", "{\"name\":\"views by url\","
                + "\"dashboards\":[" + dashboard + "],\"filters\":" + filters.replace("{\"events\"", "{\"insight\":\"TRENDS\",\"events\"") + "}");
        assertThat(insight.statusCode()).as(insight.body()).isEqualTo(201);
        return TestEddy.json(insight).get("id").asLong();
    }

    /** The insight's tile on its dashboard, recalculated ({@code refresh=force_blocking}): its result as a trend's body. */
    private JsonNode refreshed(final long insight) {
        final JsonNode body = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/?refresh=force_blocking"));
        for (final JsonNode tile : body.path("tiles")) {
            if (tile.path("insight").path("id").asLong() == insight) {
                return tile.path("insight");
            }
        }
        throw new AssertionError("no tile of insight " + insight + " in " + body);
    }

    private static JsonNode trend(final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }
}
