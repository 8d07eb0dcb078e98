package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.InsightDataset;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Saved insights carry their computed results end to end: a pageview dataset and a signup funnel captured as a
 * historical migration, then saved trend and funnel insights (legacy filters and HogQL queries) answer PostHog's
 * numbers under each {@code refresh} mode, on dashboards with their date overrides, in the background, and cancelled.
 */
class SavedInsightResultsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RANGE = "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"";
    private static final String PAGEVIEWS = "{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"$pageview\"}]," + RANGE + ",\"interval\":\"day\"}";
    private static final String DAILY = InsightDataset.DAILY;
    private static final String FUNNEL_QUERY = "{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"FunnelsQuery\","
            + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"signed up\"},{\"kind\":\"EventsNode\",\"event\":\"paid\"}],"
            + "\"dateRange\":{\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-03\"},"
            + "\"funnelsFilter\":{\"funnelWindowInterval\":1,\"funnelWindowIntervalUnit\":\"day\"}}}";
    /** Bulk events in June 2019, apart from the other ranges, for calculations slow enough to cancel. */
    private static final int BULK = 6000;
    private static final int HEAVY_SERIES = 10;

    @BeforeAll
    static void captureTheDataset() throws InterruptedException {
        final List<String> events = new ArrayList<>(InsightDataset.events());
        for (int i = 0; i < BULK; i++) {
            events.add("{\"event\":\"bulk\",\"timestamp\":\"2019-06-" + String.format("%02d", 1 + i % 28) + "T10:00:00Z\","
                    + "\"properties\":{\"distinct_id\":\"b" + (i % 300) + "\",\"path\":\"/page/" + i + "\"}}");
        }
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken()
                + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        eddy.waitUntil(() -> count("{\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}") == 12
                        && count("{\"events\":[{\"id\":\"bulk\"}],\"date_from\":\"2019-06-01\",\"date_to\":\"2019-06-30\"}") == BULK
                        && count("{\"events\":[{\"id\":\"paid\"}],\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-02\"}") == 3,
                WAIT, "every event reached the timelines");
    }

    @Test
    void aSavedTrendIsCalculatedOnRequestAndThenAnsweredFromTheCache() {
        final long id = insight("{\"name\":\"daily views\",\"filters\":" + PAGEVIEWS + "}");

        final JsonNode untouched = get(id, "");
        assertThat(untouched.get("result").isNull()).as("force_cache by default: nothing calculated yet").isTrue();
        assertThat(untouched.get("is_cached").asBoolean()).isFalse();
        assertThat(untouched.get("last_refresh").isNull()).isTrue();
        assertThat(untouched.get("timezone").asText()).isEqualTo("UTC");

        final JsonNode calculated = get(id, "?refresh=blocking");
        assertThat(calculated.get("result").get(0).get("data").toString()).isEqualTo(DAILY);
        assertThat(calculated.get("result").get(0).get("count").asInt()).isEqualTo(12);
        assertThat(calculated.get("is_cached").asBoolean()).isFalse();
        assertThat(calculated.get("hasMore").asBoolean()).isFalse();
        assertThat(calculated.get("columns").isNull() && calculated.get("types").isNull() && calculated.get("hogql").isNull()).isTrue();
        assertThat(calculated.get("query_status").isNull()).isTrue();
        final String lastRefresh = calculated.get("last_refresh").asText();
        assertThat(instant(calculated, "cache_target_age")).as("a day interval: an hour").isEqualTo(instant(calculated, "last_refresh").plusSeconds(3600));
        assertThat(instant(calculated, "next_allowed_client_refresh")).as("11 days: the long client refresh")
                .isEqualTo(instant(calculated, "last_refresh").plusSeconds(300));

        for (final String mode : new String[] {"", "?refresh=blocking", "?refresh=async", "?refresh=lazy_async", "?refresh=async_except_on_cache_miss"}) {
            final JsonNode cached = get(id, mode);
            assertThat(cached.get("is_cached").asBoolean()).as(mode + ": the range ended long ago, the result stays fresh").isTrue();
            assertThat(cached.get("last_refresh").asText()).as(mode).isEqualTo(lastRefresh);
            assertThat(cached.get("result").get(0).get("data").toString()).as(mode).isEqualTo(DAILY);
            assertThat(cached.get("query_status").isNull()).as(mode + ": nothing started").isTrue();
        }

        final JsonNode forced = get(id, "?refresh=force_blocking");
        assertThat(forced.get("is_cached").asBoolean()).isFalse();
        assertThat(instant(forced, "last_refresh")).isAfter(instant(calculated, "last_refresh"));
        assertThat(forced.get("result").get(0).get("data").toString()).isEqualTo(DAILY);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?limit=1000")).get("results"))
                .filteredOn(i -> i.get("id").asLong() == id)
                .singleElement().satisfies(i -> assertThat(i.get("last_refresh").asText()).isEqualTo(forced.get("last_refresh").asText()));
    }

    @Test
    void aSavedQueryInsightIsTranslatedForTheEngine() {
        final long trend = insight("{\"name\":\"query trend\",\"query\":{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"TrendsQuery\","
                + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\",\"math\":\"dau\"}],\"interval\":\"day\","
                + "\"dateRange\":{" + RANGE + "},\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\",\"type\":\"event\"}]}}}");
        final JsonNode chrome = get(trend, "?refresh=blocking").get("result").get(0);
        assertThat(chrome.get("data").toString()).as("every pageview but p2's").isEqualTo("[0,1,2,2,1,0,2,0,1,0,1]");

        // Stickiness, saved as PostHog's StickinessQuery and as a legacy filter: p3 and p4 came on one day, p2 and p5 on
        // two, p1 on six of the eleven.
        final long sticky = insight("{\"name\":\"query stickiness\",\"query\":{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":"
                + "\"StickinessQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}],\"interval\":\"day\","
                + "\"dateRange\":{" + RANGE + "},\"stickinessFilter\":{\"computedAs\":\"cumulative\"}}}}");
        final JsonNode orMore = get(sticky, "?refresh=blocking").get("result").get(0);
        assertThat(orMore.get("data").toString()).isEqualTo("[5,3,1,1,1,1,0,0,0,0,0]");
        assertThat(orMore.get("labels").get(1).asText()).isEqualTo("2 days or more");
        final JsonNode legacy = get(insight("{\"name\":\"legacy stickiness\",\"filters\":{\"insight\":\"STICKINESS\","
                + "\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}}"), "?refresh=blocking").get("result").get(0);
        assertThat(legacy.get("data").toString()).isEqualTo("[2,2,0,0,0,1,0,0,0,0,0]");
        assertThat(legacy.get("count").asInt()).isEqualTo(5);

        // A lifecycle saved as PostHog's LifecycleQuery: on the 12th p3 is new, p1 returning, p2 back after two days and
        // p5 (last seen on the 11th, the day before the range, which a lifecycle reads) dormant.
        final long lifecycle = insight("{\"name\":\"query lifecycle\",\"query\":{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":"
                + "\"LifecycleQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}],\"interval\":\"day\","
                + "\"dateRange\":{\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-14\"}}}}");
        final JsonNode statuses = get(lifecycle, "?refresh=blocking").get("result");
        assertThat(statuses).extracting(i -> i.get("data").toString())
                .containsExactly("[1.0,0.0,0.0]", "[1.0,1.0,0.0]", "[1.0,0.0,0.0]", "[-1.0,-2.0,-1.0]");

        // First-time weekly retention saved as PostHog's RetentionQuery (its returning entity, not given, is $pageview):
        // p2, p5 and p1 first came in the week of the 5th, and p2 and p1 again the next; p3 and p4 first in that next week.
        final long retention = insight("{\"name\":\"query retention\",\"query\":{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":"
                + "\"RetentionQuery\",\"dateRange\":{\"date_to\":\"2020-01-15\"},\"retentionFilter\":{\"period\":\"Week\",\"totalIntervals\":3,"
                + "\"retentionType\":\"retention_first_time\",\"targetEntity\":{\"id\":\"$pageview\",\"type\":\"events\"}}}}}");
        final JsonNode cohorts = get(retention, "?refresh=blocking").get("result");
        assertThat(cohorts).extracting(c -> c.get("values").findValues("count").toString().replace(" ", ""))
                .containsExactly("[0,0,0]", "[3,2]", "[2]");
        assertThat(cohorts).extracting(c -> c.get("date").asText()).containsExactly("2019-12-29T00:00:00Z", "2020-01-05T00:00:00Z",
                "2020-01-12T00:00:00Z");

        final JsonNode funnel = get(insight("{\"name\":\"signup funnel\",\"query\":" + FUNNEL_QUERY + "}"), "?refresh=blocking");
        assertThat(funnel.get("result")).extracting(step -> step.get("count").asInt()).containsExactly(4, 3);
        assertThat(funnel.get("result").get(1).get("average_conversion_time").asDouble()).as("1 h each").isEqualTo(3600);
        // A saved funnel's steps link to their persons as the insight route's do.
        assertThat(funnel.get("result").get(1).get("dropped_people_url").asText()).startsWith("/api/projects/1/persons/funnel/?")
                .contains("funnel_step=-2");
    }

    @Test
    void asyncAnswersTheRunningStatusAndALaterReadTheResult() throws InterruptedException {
        final long id = insight("{\"name\":\"async funnel\",\"query\":" + FUNNEL_QUERY + "}");

        final JsonNode started = get(id, "?refresh=async&client_query_id=async-funnel");

        assertThat(started.get("result").isNull()).isTrue();
        final JsonNode status = started.get("query_status");
        assertThat(status.get("id").asText()).isEqualTo("async-funnel");
        assertThat(status.get("complete").asBoolean()).isFalse();
        assertThat(status.get("query_async").asBoolean()).isTrue();
        assertThat(status.get("insight_id").asLong()).isEqualTo(id);
        assertThat(status.get("start_time").asText()).isNotBlank();
        eddy.waitUntil(() -> !get(id, "").get("result").isNull(), WAIT, "the background calculation finished");
        final JsonNode done = get(id, "?refresh=async");
        assertThat(done.get("result")).extracting(step -> step.get("count").asInt()).containsExactly(4, 3);
        assertThat(done.get("is_cached").asBoolean()).isTrue();
        assertThat(done.get("query_status").isNull()).isTrue();

        final JsonNode again = get(id, "?refresh=force_async");
        assertThat(again.get("result").isNull()).as("force_async answers only the status").isTrue();
        assertThat(again.get("query_status").get("complete").asBoolean()).isFalse();
    }

    @Test
    void fromDashboardAppliesTheDashboardsDateRangeToTheNumbers() {
        final long dashboard = dashboard("{\"name\":\"mid january\",\"filters\":{\"date_from\":\"2020-01-15\",\"date_to\":\"2020-01-19\"}}");
        final long id = insight("{\"name\":\"on the dashboard\",\"dashboards\":[" + dashboard + "],\"filters\":" + PAGEVIEWS + "}");

        final JsonNode onDashboard = get(id, "?from_dashboard=" + dashboard + "&refresh=blocking");
        final JsonNode alone = get(id, "?refresh=blocking");

        assertThat(onDashboard.get("filters").get("date_from").asText()).isEqualTo("2020-01-15");
        assertThat(onDashboard.get("result").get(0).get("data").toString()).isEqualTo("[2,0,1,0,1]");
        assertThat(onDashboard.get("result").get(0).get("count").asInt()).isEqualTo(4);
        assertThat(alone.get("result").get(0).get("data").toString()).isEqualTo(DAILY);
        assertThat(alone.get("is_cached").asBoolean()).as("another result than the dashboard's").isFalse();
    }

    @Test
    void aDashboardsTilesCarryTheirInsightsResults() {
        final long dashboard = dashboard("{\"name\":\"tiles\",\"filters\":{\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-12\","
                + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\",\"type\":\"event\"}]}}");
        final long trend = insight("{\"name\":\"tile trend\",\"dashboards\":[" + dashboard + "],\"filters\":" + PAGEVIEWS + "}");
        final long retention = insight("{\"name\":\"tile retention\",\"dashboards\":[" + dashboard + "],\"filters\":{\"insight\":\"RETENTION\","
                + "\"total_intervals\":4}}");
        final long sql = insight("{\"name\":\"tile sql\",\"dashboards\":[" + dashboard + "],\"query\":{\"kind\":\"DataVisualizationNode\","
                + "\"source\":{\"kind\":\"HogQLQuery\",\"query\":\"select 1\"}}}");

        final JsonNode before = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/"));
        assertThat(tile(before, trend).get("insight").get("result").isNull()).isTrue();

        final JsonNode refreshed = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/?refresh=blocking"));
        final JsonNode trendTile = tile(refreshed, trend);
        assertThat(trendTile.get("insight").get("result").get(0).get("data").toString()).as("Chrome only, 9th to 12th").isEqualTo("[0,1,2,2]");
        assertThat(trendTile.get("is_cached").asBoolean()).isFalse();
        assertThat(trendTile.get("last_refresh").asText()).isEqualTo(trendTile.get("insight").get("last_refresh").asText());
        // Retention ends at the dashboard's date_to, over its Chrome users: p5 on the 10th and 11th, p1 on the 11th and
        // 12th, p3 on the 12th.
        assertThat(tile(refreshed, retention).get("insight").get("result")).extracting(c -> c.get("values").findValues("count").toString()
                .replace(" ", "")).containsExactly("[0,0,0,0]", "[1,1,0]", "[2,1]", "[2]");
        final JsonNode unsupported = tile(refreshed, sql).get("insight");
        assertThat(unsupported.get("result").isNull()).isTrue();
        assertThat(unsupported.get("query_status").get("error_message").asText()).isEqualTo("SQL (HogQL) insights are not supported by Eddy yet.");

        final JsonNode later = tile(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/")), trend);
        assertThat(later.get("is_cached").asBoolean()).isTrue();
        assertThat(later.get("insight").get("result").get(0).get("count").asInt()).isEqualTo(5);
        final JsonNode viaInsight = get(trend, "?from_dashboard=" + dashboard);
        assertThat(viaInsight.get("is_cached").asBoolean()).as("the tile's result is the insight's on that dashboard").isTrue();

        final String sharing = "/api/projects/1/dashboards/" + dashboard + "/sharing/";
        final String token = TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":true}")).get("access_token").asText();
        final JsonNode shared = tile(TestEddy.json(eddy.get("/shared/" + token, Map.of())).get("dashboard"), trend);
        assertThat(shared.get("insight").get("result").get(0).get("data").toString()).as("a public viewer sees the cached result")
                .isEqualTo("[0,1,2,2]");
    }

    @Test
    void aQueryTheEngineRefusesIsA400ForOneInsightAndAFailedStatusInALIst() {
        final long id = insight("{\"name\":\"one step\",\"filters\":{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"paid\"}]}}");

        final HttpResponse<String> blocking = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/" + id + "/?refresh=blocking", null);
        assertThat(blocking.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(blocking).get("detail").asText()).isEqualTo("Funnels require at least two steps.");

        final JsonNode listed = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?refresh=blocking&short_id="
                + get(id, "").get("short_id").asText())).get("results").get(0);
        assertThat(listed.get("result").isNull()).isTrue();
        assertThat(listed.get("query_status").get("error").asBoolean()).isTrue();
        assertThat(listed.get("query_status").get("error_message").asText()).isEqualTo("Funnels require at least two steps.");
        assertThat(eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/" + id + "/?refresh=sometimes", null).statusCode())
                .isEqualTo(400);
    }

    @Test
    void cancelStopsARunningCalculation() throws InterruptedException {
        final HttpResponse<String> missing = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/cancel/", "{}");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(missing).get("attr").asText()).isEqualTo("client_query_id");
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/cancel/", "{\"client_query_id\":\"nothing\"}")
                .statusCode()).as("nothing running: nothing to do").isEqualTo(200);

        // A trend of many series over the bulk events takes long enough for the cancel to arrive while it runs;
        // should one finish first all the same, another try (another insight) settles it.
        final StringBuilder series = new StringBuilder();
        for (int i = 0; i < HEAVY_SERIES; i++) {
            series.append(i == 0 ? "" : ",").append("{\"id\":\"bulk\",\"properties\":[{\"key\":\"path\",\"value\":\"/page/").append(i)
                    .append("\\\\d*$\",\"operator\":\"regex\"}]}");
        }
        JsonNode cancelled = null;
        for (int attempt = 0; attempt < 5 && cancelled == null; attempt++) {
            final long id = insight("{\"name\":\"heavy " + attempt + "\",\"filters\":{\"events\":[" + series
                    + "],\"date_from\":\"2019-06-01\",\"date_to\":\"2019-06-30\"}}");
            final String queryId = "heavy-" + attempt;
            final JsonNode started = get(id, "?refresh=force_async&client_query_id=" + queryId);
            assertThat(started.get("query_status").get("complete").asBoolean()).isFalse();
            assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/cancel/",
                    "{\"client_query_id\":\"" + queryId + "\"}").statusCode()).isEqualTo(200);
            final JsonNode after = get(id, "");
            if (after.get("result").isNull()) {
                cancelled = after;
            }
        }
        assertThat(cancelled).as("a cancel arrived while its calculation ran").isNotNull();
        final JsonNode status = cancelled.get("query_status");
        assertThat(status.get("complete").asBoolean()).isTrue();
        assertThat(status.get("error").asBoolean()).isTrue();
        assertThat(status.get("error_message").asText()).isEqualTo("The calculation was cancelled.");
        assertThat(status.get("end_time").asText()).isNotBlank();
    }

    private static Instant instant(final JsonNode insight, final String field) {
        return Instant.parse(insight.get(field).asText());
    }

    private static JsonNode tile(final JsonNode dashboard, final long insight) {
        for (final JsonNode tile : dashboard.get("tiles")) {
            if (tile.path("insight").path("id").asLong() == insight) {
                return tile;
            }
        }
        throw new AssertionError("no tile of insight " + insight);
    }

    private static JsonNode get(final long insight, final String query) {
        final HttpResponse<String> response = eddy.getAuthorized("/api/projects/1/insights/" + insight + "/" + query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static long insight(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static long dashboard(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static int count(final String trend) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", trend);
        return response.statusCode() == 200 ? TestEddy.json(response).path("result").path(0).path("count").asInt() : -1;
    }
}
