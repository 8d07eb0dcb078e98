package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.EventStreamClient;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Live dashboards end to end ({@code dashboards.live-debounce} at its default, 1 s): the stream's authorisation, its
 * opening snapshot, tiles pushed with their exact new values once captured events reach the timelines, bursts of
 * events recalculated at most once per interval, the public shared stream, which follows its sharing, and a
 * dashboard read through the API kept fresh with no one watching.
 */
class LiveDashboardsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration INTERVAL = Duration.ofSeconds(1);
    /** How long an open stream may take to notice that it may no longer be read: a keep-alive, and margin. */
    private static final Duration KEEP_ALIVE_AND_MORE = Duration.ofSeconds(40);
    private static TestUsers.TestUser reader;
    private static TestUsers.TestUser noDashboards;
    private static TestUsers.TestUser outsider;

    @BeforeAll
    static void users() throws Exception {
        reader = TestUsers.member(eddy.eddy().config().pg(), 1, "dashboard:read");
        noDashboards = TestUsers.member(eddy.eddy().config().pg(), 1, "insight:read");
        outsider = TestUsers.outsider(eddy.eddy().config().pg(), "*");
    }

    @Test
    void theStreamIsReadAsTheDashboardIs() throws Exception {
        final long dashboard = dashboard("guarded");
        trendTile(dashboard, "guarded-" + UUID.randomUUID());
        final String path = "/api/projects/1/dashboards/" + dashboard + "/stream/";
        final long otherProject = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/", "{\"name\":\"other\"}"))
                .get("id").asLong();
        final long elsewhere = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/" + otherProject + "/dashboards/",
                "{\"name\":\"elsewhere\"}")).get("id").asLong();

        assertThat(status(path, null)).as("no key").isEqualTo(401);
        assertThat(status(path, noDashboards.key())).as("no dashboard:read").isEqualTo(403);
        assertThat(status(path, outsider.key())).as("not the key's project").isEqualTo(404);
        assertThat(status("/api/projects/1/dashboards/" + elsewhere + "/stream/", eddy.personalKey()))
                .as("another project's dashboard under this project").isEqualTo(404);
        assertThat(status(path, reader.key())).isEqualTo(200);
    }

    @Test
    void aStreamOpensWithTheDashboardAndPushesTheExactNewValuesOfEvents() throws Exception {
        final String event = "opened-" + UUID.randomUUID();
        capture(event, 2);
        waitForCount(event, 2);
        final long dashboard = dashboard("live");
        final long insight = trendTile(dashboard, event);

        try (EventStreamClient stream = open("/api/projects/1/dashboards/" + dashboard + "/stream", eddy.personalKey())) {
            assertThat(stream.status()).isEqualTo(200);
            assertThat(stream.response().headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
            final JsonNode snapshot = stream.next("dashboard", WAIT).json();
            assertThat(stream.lines().get(0)).isEqualTo("retry: 2000");
            assertThat(snapshot.get("dashboard_id").asLong()).isEqualTo(dashboard);
            final JsonNode tile = snapshot.get("tiles").get(0);
            assertThat(tile.get("insight_id").asLong()).isEqualTo(insight);
            assertThat(tile.get("kind").asText()).isEqualTo("trend");
            assertThat(tile.get("result").get(0).get("count").asInt()).as("fresh, not the (empty) cache").isEqualTo(2);
            assertThat(tile.get("last_refresh").asText()).isNotEmpty();

            capture(event, 3);

            final JsonNode pushed = stream.next("tile", WAIT).json();
            assertThat(pushed.get("tile_id").asLong()).isEqualTo(tile.get("tile_id").asLong());
            assertThat(pushed.get("insight_id").asLong()).isEqualTo(insight);
            assertThat(pushed.get("result").get(0).get("count").asInt()).isEqualTo(5);
        }
    }

    /**
     * Events arriving in a burst are recalculated at most once per interval: as the ticks are an interval apart, a
     * run of {@code t} seconds sees at most {@code t / interval + 1} recalculations (one more for a late timer), and
     * here, fewer than the batches sent.
     */
    @Test
    void aBurstOfEventsIsRecalculatedAtMostOncePerInterval() throws Exception {
        final String event = "burst-" + UUID.randomUUID();
        final long dashboard = dashboard("burst");
        trendTile(dashboard, event);
        try (EventStreamClient stream = open("/api/projects/1/dashboards/" + dashboard + "/stream", eddy.personalKey())) {
            stream.next("dashboard", WAIT);
            final double before = metric("eddy_live_recalculations_total");
            final long started = System.nanoTime();
            final int batches = 6;

            for (int b = 0; b < batches; b++) {
                capture(event, 1);
            }
            int shown = 0;
            final List<Integer> seen = new ArrayList<>();
            while (shown < batches) {
                shown = stream.next("tile", WAIT).json().get("result").get(0).get("count").asInt();
                seen.add(shown);
            }
            // Any tick still on its way finds nothing new.
            Thread.sleep(INTERVAL.multipliedBy(2).toMillis());
            final double seconds = (System.nanoTime() - started) / 1e9;
            final double recalculations = metric("eddy_live_recalculations_total") - before;

            System.out.printf("%d batches: %.0f recalculations in %.1f s, values pushed %s%n", batches, recalculations, seconds, seen);
            assertThat(shown).isEqualTo(batches);
            assertThat(stream.poll(Duration.ZERO)).as("nothing after the last value").isNull();
            assertThat(recalculations).as("%s s, values pushed %s", seconds, seen)
                    .isGreaterThanOrEqualTo(seen.size())
                    .isLessThanOrEqualTo(Math.floor(seconds / INTERVAL.toSeconds()) + 2)
                    .isLessThan(batches);
        }
    }

    @Test
    void theSharedStreamIsOpenOnlyWhileSharingIsEnabled() throws Exception {
        final String event = "shared-" + UUID.randomUUID();
        final long dashboard = dashboard("shared");
        trendTile(dashboard, event);
        final String sharing = "/api/projects/1/dashboards/" + dashboard + "/sharing/";
        final String token = TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":true}"))
                .get("access_token").asText();

        try (EventStreamClient stream = open("/shared/" + token + "/stream", null)) {
            assertThat(stream.status()).isEqualTo(200);
            assertThat(stream.next("dashboard", WAIT).json().get("tiles").get(0).get("result").get(0).get("count").asInt()).isZero();
            capture(event, 1);
            assertThat(stream.next("tile", WAIT).json().get("result").get(0).get("count").asInt()).isEqualTo(1);

            eddy.request(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":false}");

            assertThat(status("/shared/" + token + "/stream", null)).isEqualTo(404);
            final JsonNode gone = stream.next("gone", KEEP_ALIVE_AND_MORE).json();
            assertThat(gone.get("dashboard_id").asLong()).isEqualTo(dashboard);
            eddy.waitUntil(stream::ended, WAIT, "the open stream ended once sharing was disabled");
        }
        assertThat(status("/shared/" + UUID.randomUUID() + "/stream", null)).isEqualTo(404);
    }

    @Test
    void aDashboardReadThroughTheApiIsKeptFreshWithNoOneWatching() throws Exception {
        final String event = "kept-fresh-" + UUID.randomUUID();
        final long dashboard = dashboard("kept fresh");
        trendTile(dashboard, event);
        final String path = "/api/projects/1/dashboards/" + dashboard + "/";
        assertThat(tileCount(path + "?refresh=force_blocking")).isZero();
        final double before = metric("eddy_dashboards_kept_fresh_recalculations_total");
        assertThat(metric("eddy_dashboards_kept_fresh")).isPositive();

        capture(event, 3);

        // The default read (force_cache) starts no calculation: only the background one can bring the new events.
        eddy.waitUntil(() -> tileCount(path) == 3, WAIT, "the cached tile counts the new events");
        assertThat(metric("eddy_dashboards_kept_fresh_recalculations_total")).isGreaterThan(before);
    }

    private static int tileCount(final String path) {
        final HttpResponse<String> read = eddy.getAuthorized(path);
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
        final JsonNode result = TestEddy.json(read).get("tiles").get(0).get("insight").get("result");
        return result.isNull() ? -1 : result.get(0).get("count").asInt();
    }

    @Test
    void closingTheConnectionEndsTheSubscription() throws Exception {
        final long dashboard = dashboard("closing");
        trendTile(dashboard, "closing-" + UUID.randomUUID());
        final double before = metric("eddy_live_subscribers");
        final EventStreamClient stream = open("/api/projects/1/dashboards/" + dashboard + "/stream", eddy.personalKey());
        stream.next("dashboard", WAIT);
        assertThat(metric("eddy_live_subscribers")).isEqualTo(before + 1);

        stream.close();

        eddy.waitUntil(() -> metric("eddy_live_subscribers") == before, WAIT, "the subscriber left");
    }

    private static int status(final String path, final String key) throws Exception {
        try (EventStreamClient stream = open(path, key)) {
            return stream.status();
        }
    }

    private static EventStreamClient open(final String path, final String key) throws Exception {
        return EventStreamClient.open(eddy.http(), eddy.uri(path), key == null ? Map.of() : Map.of("Authorization", "Bearer " + key));
    }

    /** {@code n} events named {@code event} now, of one new person each, in one batch. */
    private static void capture(final String event, final int n) {
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            events.add("{\"event\":\"" + event + "\",\"properties\":{\"distinct_id\":\"" + UUID.randomUUID() + "\"}}");
        }
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":["
                + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
    }

    private static void waitForCount(final String event, final int count) throws InterruptedException {
        eddy.waitUntil(() -> {
            final HttpResponse<String> trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                    "{\"events\":[{\"id\":\"" + event + "\"}],\"date_from\":\"-7d\"}");
            return trend.statusCode() == 200 && TestEddy.json(trend).get("result").get(0).get("count").asInt() == count;
        }, WAIT, count + " events " + event);
    }

    /** A daily trend of {@code event} over the last 7 days, as a tile of {@code dashboard}; its id. */
    private static long trendTile(final long dashboard, final String event) {
        return create("/api/projects/1/insights/", "{\"name\":\"" + event + "\",\"dashboards\":[" + dashboard + "],"
                + "\"filters\":{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"" + event + "\"}],\"date_from\":\"-7d\","
                + "\"interval\":\"day\"}}");
    }

    private static long dashboard(final String name) {
        return create("/api/projects/1/dashboards/", "{\"name\":\"" + name + "\"}");
    }

    private static long create(final String path, final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    /** A Prometheus sample of /metrics without labels. */
    private static double metric(final String name) {
        final String body = eddy.get("/metrics", Map.of()).body();
        return body.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no metric " + name));
    }
}
