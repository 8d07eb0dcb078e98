package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** PostHog's other names for a project in a path: {@code @current} and {@code /api/environments/:id/}. */
class ProjectAddressingTest extends RouteTest {

    @Test
    void atCurrentIsTheFirstProjectTheKeyMaySee() {
        final JsonNode current = RouteTier.json(eddy.getAuthorized("/api/projects/@current/"));
        assertThat(current.get("id").asLong()).isEqualTo(1);
        assertThat(current.get("api_token").asText()).isEqualTo(eddy.projectToken());

        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/@current/dashboards/", "{\"name\":\"via current\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final long dashboard = RouteTier.json(created).get("id").asLong();
        assertThat(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/").statusCode()).as("made in project 1").isEqualTo(200);
        assertThat(eddy.getAuthorized("/api/projects/@current/dashboards/" + dashboard).statusCode()).isEqualTo(200);

        // A key scoped to another project: that project is its current one.
        final long other = RouteTier.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/", "{\"name\":\"B\"}")).get("id").asLong();
        final String onlyB = RouteTier.json(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/",
                "{\"label\":\"B only\",\"scopes\":[\"*\"],\"scoped_teams\":[" + other + "]}")).get("value").asText();
        assertThat(RouteTier.json(eddy.request(onlyB, "GET", "/api/projects/@current/", null)).get("id").asLong()).isEqualTo(other);
        assertThat(eddy.request(onlyB, "GET", "/api/projects/@current/dashboards/" + dashboard + "/", null).statusCode())
                .as("project 1's dashboard is not in B").isEqualTo(404);
    }

    @Test
    void aUserWithoutProjectsHasNoCurrentOneAndScopesStillHold() throws Exception {
        final TestUsers.TestUser outsider = TestUsers.outsider(eddy.config().pg(), "*");
        final HttpResponse<String> none = eddy.request(outsider.key(), "GET", "/api/projects/@current/dashboards/", null);
        assertThat(none.statusCode()).isEqualTo(404);
        assertThat(RouteTier.json(none).get("code").asText()).isEqualTo("not_found");

        final TestUsers.TestUser reader = TestUsers.member(eddy.config().pg(), 1, "project:read");
        final HttpResponse<String> refused = eddy.request(reader.key(), "GET", "/api/projects/@current/dashboards/", null);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(RouteTier.json(refused).get("detail").asText()).contains("dashboard:read");
        assertThat(eddy.get("/api/projects/@current/", java.util.Map.of()).statusCode()).as("no key").isEqualTo(401);
    }

    @Test
    void environmentsAreTheirProjects() {
        final long dashboard = RouteTier.json(eddy.request(eddy.personalKey(), "POST", "/api/environments/1/dashboards/",
                "{\"name\":\"via environments\"}")).get("id").asLong();
        final JsonNode viaProjects = RouteTier.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/"));
        final JsonNode viaEnvironments = RouteTier.json(eddy.getAuthorized("/api/environments/1/dashboards/" + dashboard + "/"));
        assertThat(viaEnvironments.get("name").asText()).isEqualTo("via environments");
        assertThat(viaEnvironments.get("id")).isEqualTo(viaProjects.get("id"));

        final JsonNode page = RouteTier.json(eddy.getAuthorized("/api/environments/1/dashboards/?limit=1"));
        assertThat(page.get("results")).as("the query string kept").hasSize(1);
        assertThat(RouteTier.json(eddy.getAuthorized("/api/environments/@current/")).get("id").asLong()).isEqualTo(1);
        assertThat(eddy.getAuthorized("/api/environments/999999/dashboards/").statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/environments/1/dashboards/", java.util.Map.of()).statusCode()).as("no key").isEqualTo(401);
    }
}
