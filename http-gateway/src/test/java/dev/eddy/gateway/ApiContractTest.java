package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The OpenAPI document at /api/schema/ and request bodies checked against it. */
class ApiContractTest extends RouteTest {

    @Test
    void theSchemaIsServedWithoutAKeyAsYamlAndJson() {
        final HttpResponse<String> yaml = eddy.get("/api/schema/", Map.of());
        assertThat(yaml.statusCode()).isEqualTo(200);
        assertThat(yaml.body()).startsWith("openapi: 3.1.0");
        assertThat(yaml.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).contains("openapi"));

        final JsonNode json = TestEddy.json(eddy.get("/api/schema/?format=json", Map.of()));
        assertThat(json.get("paths").has("/api/projects/{project_id}/dashboards")).isTrue();
        assertThat(json.get("paths").get("/api/projects/{project_id}/insights/{id}").get("patch").get("operationId").asText())
                .isEqualTo("insights_partial_update");
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource(delimiter = '|', value = {
            "POST|/api/projects/1/dashboards/|{\"restriction_level\":30}|restriction_level",
            "POST|/api/projects/1/dashboards/|{\"tags\":[1]}|tags",
            "POST|/api/projects/1/dashboards/|{\"name\":\"" + "x" + "\",\"filters\":[]}|filters",
            "POST|/api/projects/1/insights/|{\"order\":4294967296}|order",
            "POST|/api/projects/1/insights/|{\"dashboards\":[\"a\"]}|dashboards",
            "POST|/api/projects/1/dashboards/create_from_template_json/|{\"template\":{\"tiles\":[]}}|template",
            "POST|/api/projects/1/dashboards/create_from_template_json/|{}|template",
            "POST|/api/personal_api_keys/|{\"label\":\"x\"}|scopes",
            "PATCH|/api/projects/1/|{\"week_start_day\":2}|week_start_day",
            "POST|/api/projects/|{\"timezone\":\"UTC\"}|name"})
    void bodiesThatBreakTheContractAre400NamingTheField(final String method, final String path, final String body,
                                                       final String field) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), method, path, body);

        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        final JsonNode error = TestEddy.json(response);
        assertThat(error.get("attr").asText()).isEqualTo(field);
        assertThat(error.get("type").asText()).isEqualTo("validation_error");
        assertThat(error.get("detail").asText()).as("the contract answered, before the route").startsWith("'" + field + "': ");
    }

    @Test
    void aMissingRequiredBodyAndInvalidJsonAre400() {
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/", null).statusCode()).isEqualTo(400);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"name\":").statusCode()).isEqualTo(400);
    }
}
