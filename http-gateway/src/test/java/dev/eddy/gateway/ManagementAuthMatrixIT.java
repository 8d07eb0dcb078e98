package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.GatewayIT;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every management route against every kind of caller: no key (401), a key without the route's scope (403 naming
 * it), a key of a user outside the project (404, never data), and a key with the scope (not 401/403/404).
 */
class ManagementAuthMatrixIT extends GatewayIT {
    private static TestUsers.TestUser noScopes;
    private static TestUsers.TestUser outsider;
    private static long dashboard;
    private static long insight;

    @BeforeAll
    static void setUp() throws Exception {
        noScopes = TestUsers.member(eddy.eddy().config().pg(), 15, "other:read");
        outsider = TestUsers.outsider(eddy.eddy().config().pg(), "*");
        dashboard = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"name\":\"m\"}"))
                .get("id").asLong();
        insight = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", "{\"name\":\"m\"}"))
                .get("id").asLong();
    }

    /** method, path ({d} dashboard id, {i} insight id), scope, body. */
    static Stream<Arguments> routes() {
        return Stream.of(
                Arguments.of("GET", "/api/projects/1/", "project:read", null),
                Arguments.of("PATCH", "/api/projects/1/", "project:write", "{}"),
                Arguments.of("GET", "/api/projects/1/dashboards/", "dashboard:read", null),
                Arguments.of("POST", "/api/projects/1/dashboards/", "dashboard:write", "{\"name\":\"x\"}"),
                Arguments.of("GET", "/api/projects/1/dashboards/{d}/", "dashboard:read", null),
                Arguments.of("PATCH", "/api/projects/1/dashboards/{d}/", "dashboard:write", "{}"),
                Arguments.of("DELETE", "/api/projects/1/dashboards/{d}/", "dashboard:write", null),
                Arguments.of("POST", "/api/projects/1/dashboards/create_from_template_json/", "dashboard:write",
                        "{\"template\":{\"template_name\":\"t\",\"tiles\":[]}}"),
                Arguments.of("GET", "/api/projects/1/dashboards/{d}/collaborators/", "dashboard:read", null),
                Arguments.of("GET", "/api/projects/1/dashboards/{d}/sharing/", "sharing_configuration:read", null),
                Arguments.of("PATCH", "/api/projects/1/dashboards/{d}/sharing/", "sharing_configuration:write", "{}"),
                Arguments.of("GET", "/api/projects/1/insights/", "insight:read", null),
                Arguments.of("POST", "/api/projects/1/insights/", "insight:write", "{}"),
                Arguments.of("GET", "/api/projects/1/insights/{i}/", "insight:read", null),
                Arguments.of("PATCH", "/api/projects/1/insights/{i}/", "insight:write", "{}"),
                Arguments.of("DELETE", "/api/projects/1/insights/{i}/", "insight:write", null),
                Arguments.of("GET", "/api/projects/1/insights/{i}/activity/", "activity_log:read", null),
                Arguments.of("GET", "/api/projects/1/insights/activity/", "activity_log:read", null),
                Arguments.of("POST", "/api/projects/1/insights/{i}/viewed/", "insight:read", "{}"),
                Arguments.of("GET", "/api/projects/1/insights/my_last_viewed/", "insight:read", null),
                Arguments.of("POST", "/api/projects/1/insights/cancel/", "insight:read", "{\"client_query_id\":\"q1\"}"),
                Arguments.of("POST", "/api/projects/1/insights/timing/", "insight:read", "{}"),
                Arguments.of("GET", "/api/projects/1/groups/find/?group_type_index=0&group_key=x", "person:read", null),

                Arguments.of("GET", "/api/projects/1/insights/{i}/sharing/", "sharing_configuration:read", null),
                Arguments.of("GET", "/api/projects/1/persons/", "person:read", null),
                Arguments.of("GET", "/api/projects/1/event_counts/", "insight:read", null));
    }

    @ParameterizedTest(name = "{0} {1}")
    @org.junit.jupiter.params.provider.CsvSource({"GET,/api/personal_api_keys/,personal_api_key:read", "GET,/api/users/@me/,user:read"})
    void routesOfTheCallersOwnAccountCheckKeyAndScope(final String method, final String path, final String scope) {
        assertThat(eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri(path)).GET().build()).statusCode()).isEqualTo(401);
        final HttpResponse<String> unscoped = eddy.request(noScopes.key(), method, path, null);
        assertThat(unscoped.statusCode()).isEqualTo(403);
        assertThat(TestEddy.json(unscoped).get("detail").asText()).contains(scope);
        assertThat(eddy.request(eddy.personalKey(), method, path, null).statusCode()).isEqualTo(200);
    }

    @org.junit.jupiter.api.Test
    void aKeyScopedToOneProjectNeverSeesAnother() {
        final long other = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/", "{\"name\":\"B\"}")).get("id").asLong();
        final long otherDashboard = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/" + other + "/dashboards/",
                "{\"name\":\"secret of B\"}")).get("id").asLong();
        final String onlyA = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/",
                "{\"label\":\"A only\",\"scopes\":[\"dashboard:read\",\"project:read\"],\"scoped_teams\":[1]}")).get("value").asText();

        assertThat(eddy.request(onlyA, "GET", "/api/projects/" + other + "/dashboards/", null).statusCode()).isEqualTo(404);
        final HttpResponse<String> byId = eddy.request(onlyA, "GET", "/api/projects/" + other + "/dashboards/" + otherDashboard + "/", null);
        assertThat(byId.statusCode()).isEqualTo(404);
        assertThat(byId.body()).doesNotContain("secret of B");
        assertThat(eddy.request(onlyA, "GET", "/api/projects/1/dashboards/" + otherDashboard + "/", null).statusCode())
                .as("B's dashboard id under A's path").isEqualTo(404);
        assertThat(TestEddy.json(eddy.request(onlyA, "GET", "/api/projects/", null)).get("count").asInt()).isEqualTo(1);
        assertThat(eddy.request(onlyA, "GET", "/api/projects/1/dashboards/", null).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("routes")
    void everyRouteChecksKeyScopeAndProject(final String method, final String template, final String scope, final String body) {
        final String path = template.replace("{d}", Long.toString(dashboard)).replace("{i}", Long.toString(insight));

        final HttpResponse<String> anonymous = eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri(path))
                .method(method, body == null ? java.net.http.HttpRequest.BodyPublishers.noBody()
                        : java.net.http.HttpRequest.BodyPublishers.ofString(body)).build());
        assertThat(anonymous.statusCode()).as("no key").isEqualTo(401);

        final HttpResponse<String> unscoped = eddy.request(noScopes.key(), method, path, body);
        assertThat(unscoped.statusCode()).as("without " + scope).isEqualTo(403);
        assertThat(TestEddy.json(unscoped).get("detail").asText()).contains(scope);

        // Routes outside a project (the caller's own user and keys) have no other project to leak.
        final HttpResponse<String> foreign = eddy.request(outsider.key(), method, path, body);
        assertThat(foreign.statusCode()).as("another organization's key").isEqualTo(404);
        assertThat(foreign.body()).doesNotContain("\"name\":\"m\"");

        final HttpResponse<String> allowed = eddy.request(eddy.personalKey(), method, path, body);
        assertThat(allowed.statusCode()).as(allowed.body()).isNotIn(401, 403, 404);
    }
}
