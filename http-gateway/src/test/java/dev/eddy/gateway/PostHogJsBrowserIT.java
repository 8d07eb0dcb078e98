package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.NodeScripts;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * posthog-js from npm, at its default settings, on a page of another origin in headless Chromium
 * ({@code src/test/js/posthog-js.e2e.mjs}): it loads its remote config and lazy bundles from Eddy, gets its flags,
 * sends its $pageview, queued events (flushed by its request queue's timer, and by {@code sendBeacon} when the page is
 * left), $identify with its {@code $set_once} of {@code $initial_*} properties, and a group. Every request is answered
 * without an error, and what Eddy stored is exactly what the page sent: events counted once, the anonymous visitor's
 * events on the identified person, the person's and the group's properties. Last, a page loads posthog-js as PostHog's
 * HTML snippet does, from Eddy's {@code /static/array.js}, and its event is counted.
 */
class PostHogJsBrowserIT extends EddyIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(3);
    private static final String FLAG = "everyone";

    @Test
    void posthogJsAtItsDefaultsSendsEverythingAndEddyCountsItOnce() throws Exception {
        assertThat(Files.isExecutable(CHROMIUM)).as("%s is missing: scripts/test installs Debian's chromium (apt-get install chromium)",
                CHROMIUM).isTrue();
        final HttpResponse<String> flag = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"" + FLAG + "\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}]}}");
        assertThat(flag.statusCode()).as(flag.body()).isEqualTo(201);
        eddy.waitUntil(() -> decide("anyone").path(FLAG).asBoolean(false), WAIT, "the flag is served");

        final String run = UUID.randomUUID().toString().substring(0, 8);
        final String user = "js-user-" + run;
        final NodeScripts.Run page = NodeScripts.run("posthog-js.e2e.mjs", List.of(), Map.of(
                "EDDY_URL", "http://127.0.0.1:" + eddy.eddy().port(), "PROJECT_TOKEN", eddy.projectToken(),
                "FLAG_KEY", FLAG, "RUN", run, "USER", user), SCRIPT_TIMEOUT);
        assertThat(page.exitCode()).as("the browser script's exit code (-1: stopped after %s); its output:%n%s", SCRIPT_TIMEOUT,
                page.output()).isZero();
        final JsonNode seen = page.summary();

        // In the browser: flags received, no request refused or failed, no error in the console.
        assertThat(seen.get("flags").get("enabled").asBoolean()).as("isFeatureEnabled of a flag rolled out to everybody").isTrue();
        assertThat(seen.get("failures")).as("failed requests").isEmpty();
        assertThat(seen.get("consoleErrors")).as("errors in the console").isEmpty();
        final List<String> asked = new ArrayList<>();
        seen.get("requests").forEach(r -> asked.add(r.get("method").asText() + " " + r.get("path").asText() + " " + r.get("status").asText()));
        assertThat(asked).contains("GET /array/" + eddy.projectToken() + "/config.js 200", "POST /flags/ 200", "GET /static/array.js 200");
        assertThat(asked).allSatisfy(a -> assertThat(a).endsWith(" 200"));
        assertThat(queuedBatches(seen.get("requests"), "js before " + run)).as("the request queue's batch with both events")
                .contains(2L);
        assertThat(seen.get("beacons")).as("sendBeacon calls on leaving").isNotEmpty()
                .allSatisfy(b -> {
                    assertThat(b.get("url").asText()).startsWith("http://127.0.0.1:" + eddy.eddy().port() + "/");
                    assertThat(b.get("queued").asBoolean()).isTrue();
                });

        // In Eddy: each event counted once, the last ones only through the beacon.
        final Map<String, Long> expected = Map.of("$pageview", 1L, "js before " + run, 2L, "$identify", 1L,
                "$groupidentify", 1L, "js after " + run, 3L, "$autocapture", 1L, "$pageleave", 1L, "js script-tag " + run, 1L);
        eddy.waitUntil(() -> eddy.eventCounts().entrySet().containsAll(expected.entrySet()), WAIT,
                () -> "counts " + expected + ", got " + eddy.eventCounts());
        // A marker captured after the page's events, for each of its distinct ids, is counted only after them: then a
        // second copy of any of them would be counted too.
        final String marker = "js marker " + run;
        for (final String id : List.of(user, seen.get("anonymousId").asText())) {
            assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"" + marker
                    + "\",\"distinct_id\":\"" + id + "\"}").statusCode()).isEqualTo(200);
        }
        eddy.waitUntil(() -> eddy.eventCounts().getOrDefault(marker, 0L) == 2, WAIT, "the markers counted");
        assertThat(eddy.eventCounts()).as("nothing counted twice").containsAllEntriesOf(expected);
        assertThat(eddy.eventCounts().get("$feature_flag_called")).as("posthog-js reports the flag it was asked").isPositive();

        // The identified person: the anonymous id merged in, $set and posthog-js's $set_once of $initial_* properties.
        final String anonymous = seen.get("anonymousId").asText();
        final JsonNode person = TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?distinct_id=" + user))
                .get("results").get(0);
        final List<String> ids = new ArrayList<>();
        person.get("distinct_ids").forEach(id -> ids.add(id.asText()));
        assertThat(ids).containsExactlyInAnyOrder(user, anonymous);
        final JsonNode properties = person.get("properties");
        assertThat(properties.get("email").asText()).isEqualTo(user + "@example.com");
        assertThat(properties.get("plan").asText()).isEqualTo("pro");
        assertThat(properties.get("first_plan").asText()).isEqualTo("pro");
        assertThat(properties.get("$initial_pathname").asText()).isEqualTo("/");
        assertThat(properties.get("$initial_current_url").asText()).matches("http://127\\.0\\.0\\.1:\\d+/");
        assertThat(properties.get("$initial_referrer").asText()).isEqualTo("$direct");

        // The visitor's events from before identify (sent without person processing) are the person's: one journey.
        final HttpResponse<String> funnel = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"js before " + run + "\",\"order\":1},"
                        + "{\"id\":\"js after " + run + "\",\"order\":2}],\"date_from\":\"-1d\"}");
        assertThat(funnel.statusCode()).as(funnel.body()).isEqualTo(200);
        final List<Integer> steps = new ArrayList<>();
        TestEddy.json(funnel).get("result").forEach(s -> steps.add(s.get("count").asInt()));
        assertThat(steps).containsExactly(1, 1, 1);

        // The group and its properties.
        final HttpResponse<String> group = eddy.getAuthorized("/api/projects/1/groups/find?group_type_index=0&group_key=acme-" + user);
        assertThat(group.statusCode()).as(group.body()).isEqualTo(200);
        assertThat(TestEddy.json(group).get("group_properties").get("name").asText()).isEqualTo("Acme");
        assertThat(TestEddy.json(group).get("group_properties").get("seats").asInt()).isEqualTo(12);
    }

    /** The sizes of the batches the page's fetches carried that include {@code event}. */
    private static List<Long> queuedBatches(final JsonNode requests, final String event) {
        final List<Long> sizes = new ArrayList<>();
        requests.forEach(r -> {
            final List<String> names = new ArrayList<>();
            r.path("events").forEach(e -> names.add(e.asText()));
            if (names.contains(event)) {
                sizes.add(names.stream().filter(event::equals).count());
            }
        });
        return sizes;
    }


    private static JsonNode decide(final String user) {
        final HttpResponse<String> response = eddy.post("/decide/?v=3",
                "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        return response.statusCode() == 200 ? TestEddy.json(response).get("featureFlags") : TestEddy.json(response);
    }
}
