package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Dashboard collaborators and the sharing of dashboards and insights, over HTTP on a real PostgreSQL. */
class SharingAndCollaboratorsTest extends RouteTest {
    /** What a browser's navigation asks for. */
    private static final String BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    private static TestUsers.TestUser member;
    private static TestUsers.TestUser outsider;

    @BeforeAll
    static void setUp() throws Exception {
        member = TestUsers.member(eddy.config().pg(), 1, "*");
        outsider = TestUsers.outsider(eddy.config().pg(), "*");
    }

    @Test
    void anEditorCollaboratorMayEditARestrictedDashboardUntilRemoved() {
        final long d = create("/api/projects/1/dashboards/", "{\"name\":\"restricted\",\"restriction_level\":37}");
        final String path = "/api/projects/1/dashboards/" + d + "/";
        assertThat(send(member.key(), "PATCH", path, "{\"name\":\"x\"}").statusCode()).isEqualTo(403);

        final HttpResponse<String> added = send(eddy.personalKey(), "POST", path + "collaborators/",
                "{\"user_uuid\":\"" + member.uuid() + "\",\"level\":37}");

        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        final JsonNode collaborator = TestEddy.json(added);
        assertThat(collaborator.get("user").get("uuid").asText()).isEqualTo(member.uuid().toString());
        assertThat(collaborator.get("level").asInt()).isEqualTo(37);
        assertThat(collaborator.get("dashboard_id").asLong()).isEqualTo(d);
        assertThat(collaborator.has("added_at") && collaborator.has("updated_at") && collaborator.has("id")).isTrue();
        assertThat(TestEddy.json(eddy.getAuthorized(path + "collaborators/"))).hasSize(1);
        assertThat(TestEddy.json(get(member.key(), path)).get("effective_privilege_level").asInt()).isEqualTo(37);
        assertThat(send(member.key(), "PATCH", path, "{\"name\":\"edited by collaborator\"}").statusCode()).isEqualTo(200);

        final HttpResponse<String> removed = send(eddy.personalKey(), "DELETE", path + "collaborators/" + member.uuid() + "/", null);
        assertThat(removed.statusCode()).isEqualTo(204);
        assertThat(removed.body()).isEmpty();
        assertThat(send(member.key(), "PATCH", path, "{\"name\":\"again\"}").statusCode()).isEqualTo(403);
        assertThat(send(eddy.personalKey(), "DELETE", path + "collaborators/" + member.uuid() + "/", null).statusCode()).isEqualTo(404);
    }

    @Test
    void collaboratorsAreRefusedOnTheLowestLevelAndMustBeProjectUsers() {
        final long open = create("/api/projects/1/dashboards/", "{\"name\":\"open\"}");
        final long locked = create("/api/projects/1/dashboards/", "{\"name\":\"locked\",\"restriction_level\":37}");

        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/" + open + "/collaborators/",
                "{\"user_uuid\":\"" + member.uuid() + "\",\"level\":37}").statusCode()).isEqualTo(400);
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/" + locked + "/collaborators/",
                "{\"user_uuid\":\"" + outsider.uuid() + "\",\"level\":21}").statusCode()).isEqualTo(400);
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/" + locked + "/collaborators/",
                "{\"user_uuid\":\"" + member.uuid() + "\",\"level\":30}").statusCode()).isEqualTo(400);
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/" + locked + "/collaborators/",
                "{\"user_uuid\":\"nope\",\"level\":21}").statusCode()).isEqualTo(400);
    }

    @Test
    void aDashboardIsSharedOnlyWhileEnabledAndRefreshRevokesTheOldLink() {
        final long d = create("/api/projects/1/dashboards/", "{\"name\":\"public\"}");
        create("/api/projects/1/insights/", "{\"name\":\"tile\",\"dashboards\":[" + d + "]}");
        final String sharing = "/api/projects/1/dashboards/" + d + "/sharing/";

        final JsonNode first = TestEddy.json(eddy.getAuthorized(sharing));
        assertThat(first.get("enabled").asBoolean()).as("created disabled on first read").isFalse();
        final String token = first.get("access_token").asText();
        assertThat(token).hasSizeGreaterThanOrEqualTo(40);
        assertThat(TestEddy.json(eddy.getAuthorized(sharing)).get("access_token").asText()).isEqualTo(token);
        assertThat(eddy.get("/shared/" + token, Map.of()).statusCode()).isEqualTo(404);

        assertThat(TestEddy.json(send(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":true}")).get("enabled").asBoolean()).isTrue();
        final HttpResponse<String> shared = eddy.get("/shared/" + token, Map.of());
        assertThat(shared.statusCode()).isEqualTo(200);
        final JsonNode dashboard = TestEddy.json(shared).get("dashboard");
        assertThat(dashboard.get("name").asText()).isEqualTo("public");
        assertThat(dashboard.get("tiles")).hasSize(1);
        assertThat(dashboard.get("created_by").isNull()).isTrue();
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + d + "/")).get("is_shared").asBoolean()).isTrue();

        final String rotated = TestEddy.json(send(eddy.personalKey(), "POST", sharing + "refresh/", null)).get("access_token").asText();
        assertThat(rotated).isNotEqualTo(token);
        assertThat(eddy.get("/shared/" + token, Map.of()).statusCode()).isEqualTo(404);
        assertThat(eddy.get("/shared/" + rotated, Map.of()).statusCode()).isEqualTo(200);

        send(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":false}");
        assertThat(eddy.get("/shared/" + rotated, Map.of()).statusCode()).isEqualTo(404);
    }

    /**
     * A browser opening a shared dashboard's link gets the page that draws it (never cached, held to this server's
     * assets), whose hashed assets are cached for a year; API clients keep getting the JSON at the same address.
     */
    @Test
    void aBrowserGetsTheSharedDashboardsPageAndClientsItsJson() {
        final long d = create("/api/projects/1/dashboards/", "{\"name\":\"on a wall\"}");
        final String sharing = "/api/projects/1/dashboards/" + d + "/sharing/";
        final String token = TestEddy.json(send(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":true}")).get("access_token").asText();

        final HttpResponse<String> page = eddy.get("/shared/" + token, Map.of("Accept", BROWSER));

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-cache");
        assertThat(page.headers().firstValue("Vary")).hasValueSatisfying(v -> assertThat(v).containsIgnoringCase("accept"));
        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v -> assertThat(v)
                .contains("default-src 'self'").contains("script-src 'self'").contains("connect-src 'self'"));
        final java.util.regex.Matcher assets = java.util.regex.Pattern.compile("(?:src|href)=\"(/static/[^\"]+)\"").matcher(page.body());
        final java.util.List<String> found = new java.util.ArrayList<>();
        while (assets.find()) {
            found.add(assets.group(1));
        }
        assertThat(found).hasSize(2).anyMatch(a -> a.matches("/static/shared-dashboard-[A-Z0-9]+\\.js"))
                .anyMatch(a -> a.matches("/static/shared-dashboard-[A-Z0-9]+\\.css"));
        for (final String asset : found) {
            final HttpResponse<String> served = eddy.get(asset, Map.of());
            assertThat(served.statusCode()).as(asset).isEqualTo(200);
            assertThat(served.headers().firstValue("Cache-Control")).as(asset)
                    .hasValueSatisfying(v -> assertThat(v).contains("immutable").contains("max-age=31536000"));
        }
        assertThat(page.body()).as("nothing loaded from elsewhere").doesNotContain("http://", "https://", "//cdn");

        for (final Map<String, String> client : java.util.List.of(Map.<String, String>of(), Map.of("Accept", "application/json"),
                Map.of("Accept", "*/*"))) {
            final HttpResponse<String> json = eddy.get("/shared/" + token, client);
            assertThat(json.headers().firstValue("Content-Type")).as(client.toString()).hasValue("application/json");
            assertThat(TestEddy.json(json).get("dashboard").get("name").asText()).isEqualTo("on a wall");
        }
        send(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":false}");
        assertThat(eddy.get("/shared/" + token, Map.of("Accept", BROWSER)).statusCode()).isEqualTo(404);
        assertThat(eddy.get("/shared/" + token + "/stream", Map.of()).statusCode()).isEqualTo(404);
    }

    @Test
    void anInsightCanBeSharedOnItsOwn() {
        final long i = create("/api/projects/1/insights/", "{\"name\":\"alone\"}");
        final String sharing = "/api/projects/1/insights/" + i + "/sharing/";

        final String token = TestEddy.json(send(eddy.personalKey(), "PATCH", sharing, "{\"enabled\":true}")).get("access_token").asText();

        assertThat(TestEddy.json(eddy.get("/shared/" + token, Map.of())).get("insight").get("name").asText()).isEqualTo("alone");
        assertThat(eddy.get("/shared/" + UUID.randomUUID(), Map.of()).statusCode()).isEqualTo(404);
    }

    @Test
    void anInsightsLinkAnswersJsonEvenToABrowser() {
        final long i = create("/api/projects/1/insights/", "{\"name\":\"alone in a browser\"}");
        final String token = TestEddy.json(send(eddy.personalKey(), "PATCH", "/api/projects/1/insights/" + i + "/sharing/",
                "{\"enabled\":true}")).get("access_token").asText();

        final HttpResponse<String> shared = eddy.get("/shared/" + token, Map.of("Accept", BROWSER));

        assertThat(TestEddy.json(shared).get("insight").get("name").asText()).isEqualTo("alone in a browser");
        assertThat(eddy.get("/shared/" + token + "/stream", Map.of()).statusCode()).as("no live stream of an insight").isEqualTo(404);
    }

    @Test
    void sharingOfAnotherProjectIsNotFound() {
        final long d = create("/api/projects/1/dashboards/", "{\"name\":\"private\"}");

        assertThat(get(outsider.key(), "/api/projects/1/dashboards/" + d + "/sharing/").statusCode()).isEqualTo(404);
        assertThat(get(outsider.key(), "/api/projects/1/dashboards/" + d + "/collaborators/").statusCode()).isEqualTo(404);
    }

    private static long create(final String path, final String body) {
        final HttpResponse<String> response = send(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static HttpResponse<String> get(final String key, final String path) {
        return eddy.get(path, Map.of("Authorization", "Bearer " + key));
    }

    private static HttpResponse<String> send(final String key, final String method, final String path, final String body) {
        return eddy.request(key, method, path, body);
    }
}
