package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Actions end to end: PostHog's actions API on PostgreSQL, and actions as trend series, funnel steps, retention
 * entities and saved insights' series over events captured through {@code /batch/}: autocapture clicks matched by
 * selector and text (from posthog-js's {@code $elements} and from {@code $elements_chain}), pageviews by URL.
 */
class ActionsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RANGE = "\"date_from\":\"2019-03-04\",\"date_to\":\"2019-03-07\"";
    private static final String SIGNED_UP_STEPS = "[{\"event\":\"$autocapture\",\"selector\":\"button.signup\",\"text\":\"Sign up\"},"
            + "{\"event\":\"$pageview\",\"url\":\"/welcome\"}]";
    private static long signedUp;

    @BeforeAll
    static void captureClicksPageviewsAndPurchases() throws InterruptedException {
        final String batch = String.join(",", List.of(
                // u1 clicks the signup button (posthog-js's $elements); u2 a button of another class (the chain as text).
                "{\"event\":\"$autocapture\",\"timestamp\":\"2019-03-04T10:00:00Z\",\"distinct_id\":\"u1\",\"properties\":{\"$elements\":"
                        + "[{\"tag_name\":\"button\",\"attr__class\":\"signup primary\",\"$el_text\":\"Sign up\",\"nth_child\":1},{\"tag_name\":\"div\"}]}}",
                "{\"event\":\"$autocapture\",\"timestamp\":\"2019-03-04T11:00:00Z\",\"distinct_id\":\"u2\",\"properties\":{\"$elements_chain\":"
                        + "\"button.other:nth-child=\\\"1\\\"nth-of-type=\\\"1\\\"text=\\\"Sign up\\\"\"}}",
                // u3 lands on the welcome page; u4's URL differs in case, which LIKE tells apart.
                "{\"event\":\"$pageview\",\"timestamp\":\"2019-03-05T10:00:00Z\",\"distinct_id\":\"u3\",\"properties\":{\"$current_url\":"
                        + "\"https://x.test/welcome?ref=1\"}}",
                "{\"event\":\"$pageview\",\"timestamp\":\"2019-03-05T11:00:00Z\",\"distinct_id\":\"u4\",\"properties\":{\"$current_url\":"
                        + "\"https://x.test/WELCOME\"}}",
                "{\"event\":\"purchase\",\"timestamp\":\"2019-03-06T10:00:00Z\",\"distinct_id\":\"u1\"}",
                "{\"event\":\"purchase\",\"timestamp\":\"2019-03-07T10:00:00Z\",\"distinct_id\":\"u3\"}"));
        final HttpResponse<String> sent = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"historical_migration\":true,"
                + "\"batch\":[" + batch + "]}");
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        signedUp = TestEddy.json(create("{\"name\":\"Signed up\",\"description\":\"clicked or landed\",\"tags\":[\"growth\"],\"steps\":"
                + SIGNED_UP_STEPS + "}")).get("id").asLong();
        eddy.waitUntil(() -> trend("{\"events\":[{\"id\":\"purchase\"}]," + RANGE + "}").path("result").path(0).path("count").asInt() == 2
                        && trend("{\"events\":[{\"id\":null}]," + RANGE + "}").path("result").path(0).path("count").asInt() == 6,
                WAIT, "the events reached the timelines");
    }

    @Test
    void anActionIsCreatedInPostHogsShape() {
        final JsonNode action = TestEddy.json(eddy.getAuthorized("/api/projects/1/actions/" + signedUp + "/"));
        assertThat(action.get("name").asText()).isEqualTo("Signed up");
        assertThat(action.get("description").asText()).isEqualTo("clicked or landed");
        assertThat(action.get("tags").toString()).isEqualTo("[\"growth\"]");
        assertThat(action.get("is_action").asBoolean()).isTrue();
        assertThat(action.get("deleted").asBoolean()).isFalse();
        assertThat(action.get("team_id").asLong()).isEqualTo(1);
        assertThat(action.get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        final JsonNode click = action.get("steps").get(0);
        assertThat(click.get("url_matching").asText()).as("contains when not given").isEqualTo("contains");
        assertThat(click.get("text_matching").isNull()).isTrue();
        assertThat(click.get("selector_regex").asText()).startsWith("(^|;)button.*?\\.signup");
        assertThat(click.size()).as("ten fields and the selector's regex").isEqualTo(11);
    }

    @Test
    void namesAreUniqueBadStepsAre400AndDeletingIsAPatch() {
        final HttpResponse<String> twin = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/actions/", "{\"name\":\"Signed up\"}");
        assertThat(twin.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(twin).get("detail").asText()).isEqualTo("This project already has an action with this name, ID " + signedUp);
        assertThat(TestEddy.json(twin).get("attr").asText()).isEqualTo("name");
        assertThat(TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/actions/", "{\"name\":\"  \"}")).get("code").asText())
                .isEqualTo("blank");
        for (final String bad : List.of("[{\"url\":\"/x\",\"url_matching\":\"sounds-like\"}]", "[{\"url\":\"(\",\"url_matching\":\"regex\"}]",
                "[{\"event\":\"\"}]", "[{\"properties\":[{\"value\":1}]}]", "[\"$pageview\"]", "{\"event\":\"x\"}")) {
            final HttpResponse<String> refused = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/actions/",
                    "{\"name\":\"bad " + UUID.randomUUID() + "\",\"steps\":" + bad + "}");
            assertThat(refused.statusCode()).as(bad + ": " + refused.body()).isEqualTo(400);
            assertThat(TestEddy.json(refused).get("attr").asText()).as(bad).isEqualTo("steps");
        }

        final long doomed = TestEddy.json(create("{\"name\":\"Doomed\",\"steps\":[{\"event\":\"x\"}]}")).get("id").asLong();
        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/projects/1/actions/" + doomed + "/", null).statusCode()).isEqualTo(405);
        final JsonNode deleted = TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/actions/" + doomed + "/",
                "{\"deleted\":true,\"pinned_at\":\"2020-01-01T00:00:00Z\"}"));
        assertThat(deleted.get("deleted").asBoolean()).isTrue();
        assertThat(deleted.get("pinned_at").isNull()).as("pinned at the server's time").isFalse();
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/actions/?limit=1000")).get("results"))
                .extracting(a -> a.get("id").asLong()).contains(signedUp).doesNotContain(doomed);
        assertThat(eddy.getAuthorized("/api/projects/1/actions/" + doomed + "/").statusCode()).as("still readable by id").isEqualTo(200);
        assertThat(create("{\"name\":\"Doomed\"}").statusCode()).as("a deleted action's name is free again").isEqualTo(201);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/actions/?search=signed")).get("results"))
                .extracting(a -> a.get("name").asText()).containsExactly("Signed up");
    }

    @Test
    void actionsAreSeriesStepsAndEntitiesOfEveryInsight() {
        // u1's click and u3's landing, not u2's other button nor u4's upper-case URL.
        final JsonNode series = trend("{\"actions\":[{\"id\":" + signedUp + ",\"type\":\"actions\",\"order\":1}],\"events\":[{\"id\":\"purchase\","
                + "\"order\":0}]," + RANGE + "}").get("result");
        assertThat(series).extracting(s -> s.get("label").asText()).containsExactly("purchase", "Signed up");
        assertThat(series.get(1).get("data").toString()).isEqualTo("[1,1,0,0]");
        assertThat(series.get(1).get("filter").get("actions").get(0).has("eddy_action")).as("the inlined definition is not echoed").isFalse();

        final HttpResponse<String> funnel = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"actions\":[{\"id\":" + signedUp + ",\"order\":0}],\"events\":[{\"id\":\"purchase\",\"order\":1}]," + RANGE + "}");
        assertThat(funnel.statusCode()).as(funnel.body()).isEqualTo(200);
        final JsonNode steps = TestEddy.json(funnel).get("result");
        assertThat(steps).extracting(s -> s.get("count").asInt()).containsExactly(2, 2);
        assertThat(steps.get(0).get("name").asText()).isEqualTo("Signed up");
        assertThat(steps.get(0).get("action_id").asLong()).isEqualTo(signedUp);
        assertThat(steps.get(0).get("type").asText()).isEqualTo("actions");

        final HttpResponse<String> retention = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/retention/",
                "{\"target_entity\":{\"id\":" + signedUp + ",\"type\":\"actions\"},\"returning_entity\":{\"id\":\"purchase\",\"type\":\"events\"},"
                        + "\"date_to\":\"2019-03-07\",\"total_intervals\":4}");
        assertThat(retention.statusCode()).as(retention.body()).isEqualTo(200);
        assertThat(TestEddy.json(retention).get("result")).extracting(c -> c.get("values").findValues("count").toString().replace(" ", ""))
                .containsExactly("[1,0,1,0]", "[1,0,1]", "[0,0]", "[0]");

        final HttpResponse<String> missing = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"actions\":[{\"id\":999999,\"type\":\"actions\"}]}");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(missing).get("detail").asText()).isEqualTo("Action ID 999999 does not exist!");
    }

    @Test
    void aChangedActionChangesTheNextAnswerAndSavedQueriesNameActions() {
        final long landed = TestEddy.json(create("{\"name\":\"Landed\",\"steps\":" + SIGNED_UP_STEPS + "}")).get("id").asLong();
        final String query = "{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"ActionsNode\",\"id\":" + landed
                + "}],\"interval\":\"day\",\"dateRange\":{" + RANGE + "}}}";
        final HttpResponse<String> saved = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", "{\"name\":\"landings\",\"query\":"
                + query + "}");
        assertThat(saved.statusCode()).as(saved.body()).isEqualTo(201);
        final long insight = TestEddy.json(saved).get("id").asLong();
        assertThat(result(insight, "blocking").get(0).get("data").toString()).isEqualTo("[1,1,0,0]");

        final HttpResponse<String> patched = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/actions/" + landed + "/",
                "{\"steps\":[{\"event\":\"$pageview\",\"url\":\"welcome\",\"url_matching\":\"regex\"}]}");
        assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
        assertThat(result(insight, "force_blocking").get(0).get("data").toString()).as("only the landing now, once calculated again")
                .isEqualTo("[0,1,0,0]");
    }

    private static JsonNode result(final long insight, final String refresh) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/" + insight + "/?refresh=" + refresh,
                null);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).get("result");
    }

    private static HttpResponse<String> create(final String body) {
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/actions/", body);
        assertThat(created.statusCode()).as(created.body()).isIn(201, 400);
        return created;
    }

    private static JsonNode trend(final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }
}
