package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Creating and updating projects: own project API key, settings, scopes, isolation. */
class ProjectWritesTest extends RouteTest {
    private static TestUsers.TestUser readOnly;

    @BeforeAll
    static void setUp() throws Exception {
        readOnly = TestUsers.member(eddy.config().pg(), 1, "project:read");
    }

    @Test
    void aNewProjectHasItsOwnKeyWhichCaptureAccepts() {
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/",
                "{\"name\":\"Mobile app\",\"timezone\":\"Europe/Berlin\",\"week_start_day\":1}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode project = TestEddy.json(created);
        assertThat(project.get("name").asText()).isEqualTo("Mobile app");
        assertThat(project.get("timezone").asText()).isEqualTo("Europe/Berlin");
        assertThat(project.get("week_start_day").asInt()).isEqualTo(1);
        assertThat(project.get("test_account_filters")).isEmpty();
        final String token = project.get("api_token").asText();
        assertThat(token).startsWith("phc_").isNotEqualTo(eddy.projectToken());
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + token + "\",\"event\":\"e\",\"distinct_id\":\"d\"}").statusCode())
                .isEqualTo(200);
        assertThat(eddy.getAuthorized("/api/projects/" + project.get("id").asLong() + "/").statusCode()).isEqualTo(200);
    }

    @Test
    void patchChangesOnlyTheGivenSettings() {
        final HttpResponse<String> patched = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/",
                "{\"timezone\":\"America/New_York\",\"test_account_filters\":[{\"key\":\"email\",\"value\":\"@eddy.local\","
                        + "\"operator\":\"not_icontains\",\"type\":\"person\"}]}");

        assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
        final JsonNode project = TestEddy.json(patched);
        assertThat(project.get("timezone").asText()).isEqualTo("America/New_York");
        assertThat(project.get("test_account_filters").get(0).get("operator").asText()).isEqualTo("not_icontains");
        assertThat(project.get("name").asText()).isEqualTo("Default project");
    }

    @Test
    void badSettingsAre400AndScopesAndProjectsAreEnforced() {
        assertThat(TestEddy.json(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/", "{\"timezone\":\"Mars/Olympus\"}"))
                .get("attr").asText()).isEqualTo("timezone");
        assertThat(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/", "{\"week_start_day\":3}").statusCode()).isEqualTo(400);
        assertThat(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/", "{\"test_account_filters\":{}}").statusCode())
                .isEqualTo(400);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/", "{}").statusCode()).isEqualTo(400);
        assertThat(eddy.request(readOnly.key(), "PATCH", "/api/projects/1/", "{\"name\":\"x\"}").statusCode()).isEqualTo(403);
        assertThat(eddy.request(readOnly.key(), "POST", "/api/projects/", "{\"name\":\"x\"}").statusCode()).isEqualTo(403);
        assertThat(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/987654/", "{\"name\":\"x\"}").statusCode()).isEqualTo(404);
    }
}
