package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.NodeScripts;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The shared dashboard page in headless Chromium: {@code src/test/js/shared-dashboard.e2e.mjs} (playwright-core,
 * Debian's {@code /usr/bin/chromium}, which {@code scripts/test} installs) opens a shared dashboard with a trend, a
 * funnel, stickiness, a lifecycle, retention, paths and a bold number tile, checks the exact values drawn, captures events and sees them appear without a
 * reload, and keeps a screenshot in {@code target/artifacts/shared-dashboard.png}. Never skipped: without Chromium or
 * node it fails, saying what is missing.
 */
class SharedDashboardBrowserIT extends EddyIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(4);
    /** Markup in the name: the page must show it as text. */
    private static final String NAME = "Live <img src=x onerror=\"document.body.dataset.xss=1\"> & \"board\"";

    @Test
    void theSharedPageDrawsTheTilesAndShowsNewEventsWithoutAReload() throws Exception {
        assertThat(Files.isExecutable(CHROMIUM)).as("%s is missing: scripts/test installs Debian's chromium (apt-get install chromium)",
                CHROMIUM).isTrue();
        final String id = UUID.randomUUID().toString().substring(0, 8);
        final String view = "e2e-view-" + id;
        final String signup = "e2e-signup-" + id;
        final String pay = "e2e-pay-" + id;
        final long dashboard = create("/api/projects/1/dashboards/", "{\"name\":" + json(NAME) + "}");
        insight(dashboard, "Views", "{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"" + view + "\"}],\"date_from\":\"-7d\",\"interval\":\"day\"}");
        insight(dashboard, "Signup funnel", "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"" + signup + "\",\"order\":0},{\"id\":\""
                + pay + "\",\"order\":1}],\"date_from\":\"-7d\",\"funnel_viz_type\":\"steps\"}");
        insight(dashboard, "Total views", "{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"" + view + "\"}],\"date_from\":\"-7d\","
                + "\"display\":\"BoldNumber\"}");
        insight(dashboard, "Stickiness", "{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"" + view + "\"}],\"date_from\":\"-7d\"}");
        insight(dashboard, "Lifecycle", "{\"insight\":\"LIFECYCLE\",\"events\":[{\"id\":\"" + view + "\"}],\"date_from\":\"-7d\"}");
        insight(dashboard, "Paths", "{\"insight\":\"PATHS\",\"include_custom_events\":[\"" + signup + "\",\"" + pay + "\"],\"date_from\":\"-7d\"}");
        insight(dashboard, "Retention", "{\"insight\":\"RETENTION\",\"target_entity\":{\"id\":\"" + view + "\",\"type\":\"events\"},"
                + "\"total_intervals\":7}");
        // Before the page opens: 3 views; 2 persons signed up, 1 of them paid.
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            events.add(event(view, "viewer-" + i, 1));
        }
        events.add(event(signup, "buyer-1", 3));
        events.add(event(pay, "buyer-1", 2));
        events.add(event(signup, "buyer-2", 3));
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":["
                + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        eddy.waitUntil(() -> trendCount(view) == 3 && funnelCounts(signup, pay).equals(List.of(2, 1)), WAIT, "the events reached the timelines");
        final String token = TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/sharing/",
                "{\"enabled\":true}")).get("access_token").asText();
        final Path screenshot = Path.of(System.getProperty("user.dir"), "target", "artifacts", "shared-dashboard.png");
        Files.deleteIfExists(screenshot);

        final Map<String, String> env = Map.of(
                "PAGE_URL", eddy.uri("/shared/" + token).toString(),
                "CAPTURE_URL", eddy.uri("/batch/").toString(),
                "PROJECT_TOKEN", eddy.projectToken(),
                "VIEW_EVENT", view, "SIGNUP_EVENT", signup, "PAY_EVENT", pay,
                "DASHBOARD_NAME", NAME,
                "EXPECTED", "{\"views\":3,\"funnel\":[2,1]}",
                "SCREENSHOT", screenshot.toString());
        final NodeScripts.Run run = NodeScripts.run("shared-dashboard.e2e.mjs", List.of(), env, SCRIPT_TIMEOUT);

        assertThat(run.exitCode()).as("the browser script's exit code (-1: stopped after %s); its output:%n%s", SCRIPT_TIMEOUT,
                run.output()).isZero();
        assertThat(run.summary().has("latencies_ms")).isTrue();
        assertThat(Files.size(screenshot)).as("the screenshot").isGreaterThan(10_000);
    }

    /** An event of {@code person}, {@code secondsAgo} before now. */
    private static String event(final String name, final String person, final int secondsAgo) {
        return "{\"event\":\"" + name + "\",\"timestamp\":\"" + Instant.now().minusSeconds(secondsAgo) + "\","
                + "\"properties\":{\"distinct_id\":\"" + person + "\"}}";
    }

    private static int trendCount(final String event) {
        final HttpResponse<String> trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"" + event + "\"}],\"date_from\":\"-7d\"}");
        return trend.statusCode() == 200 ? TestEddy.json(trend).get("result").get(0).get("count").asInt() : -1;
    }

    private static List<Integer> funnelCounts(final String first, final String second) {
        final HttpResponse<String> funnel = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"" + first + "\",\"order\":0},{\"id\":\"" + second + "\",\"order\":1}],\"date_from\":\"-7d\"}");
        final List<Integer> counts = new ArrayList<>();
        if (funnel.statusCode() == 200) {
            TestEddy.json(funnel).get("result").forEach(step -> counts.add(step.get("count").asInt()));
        }
        return counts;
    }

    private static void insight(final long dashboard, final String name, final String filters) {
        create("/api/projects/1/insights/", "{\"name\":\"" + name + "\",\"dashboards\":[" + dashboard + "],\"filters\":" + filters + "}");
    }

    private static long create(final String path, final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static String json(final String text) {
        return dev.eddy.serde.Json.mapper().getNodeFactory().textNode(text).toString();
    }
}
