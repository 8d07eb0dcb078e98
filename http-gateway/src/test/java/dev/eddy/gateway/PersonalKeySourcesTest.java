package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.auth.ApiKeys;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A personal API key where PostHog also reads one: a {@code personal_api_key} field of the body, then a
 * {@code personal_api_key} query parameter, after the {@code Authorization} header; the same scopes either way.
 */
class PersonalKeySourcesTest extends RouteTest {

    @Test
    void aKeyInTheQueryOrTheBodyIsTheKey() {
        final String key = eddy.personalKey();
        assertThat(eddy.get("/api/projects/1/dashboards/?personal_api_key=" + key, Map.of()).statusCode()).isEqualTo(200);
        final HttpResponse<String> created = send("POST", "/api/projects/1/dashboards/",
                "{\"name\":\"keyed in the body\",\"personal_api_key\":\"" + key + "\"}", null);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(RouteTier.json(created).get("name").asText()).isEqualTo("keyed in the body");
    }

    @Test
    void theHeaderComesFirstThenTheBodyThenTheQuery() {
        final String wrong = ApiKeys.newPersonalKey();
        final String right = eddy.personalKey();
        assertThat(send("GET", "/api/projects/1/dashboards/?personal_api_key=" + wrong, null, right).statusCode()).isEqualTo(200);
        assertThat(send("GET", "/api/projects/1/dashboards/?personal_api_key=" + right, null, wrong).statusCode()).isEqualTo(401);
        assertThat(send("POST", "/api/projects/1/dashboards/?personal_api_key=" + wrong,
                "{\"name\":\"b\",\"personal_api_key\":\"" + right + "\"}", null).statusCode()).isEqualTo(201);
    }

    @Test
    void scopesAndRefusalsAreTheHeaders() throws Exception {
        final TestUsers.TestUser reader = TestUsers.member(eddy.config().pg(), 1, "project:read");
        final HttpResponse<String> unscoped = eddy.get("/api/projects/1/dashboards/?personal_api_key=" + reader.key(), Map.of());
        assertThat(unscoped.statusCode()).isEqualTo(403);
        assertThat(RouteTier.json(unscoped).get("detail").asText()).contains("dashboard:read");
        assertThat(eddy.get("/api/projects/1/?personal_api_key=" + reader.key(), Map.of()).statusCode()).isEqualTo(200);

        final HttpResponse<String> unknown = eddy.get("/api/projects/1/?personal_api_key=" + ApiKeys.newPersonalKey(), Map.of());
        assertThat(unknown.statusCode()).isEqualTo(401);
        assertThat(RouteTier.json(unknown).get("code").asText()).isEqualTo("authentication_failed");
        assertThat(eddy.get("/api/projects/1/?personal_api_key=" + eddy.projectToken(), Map.of()).statusCode())
                .as("a project API key is no personal one").isEqualTo(401);
        assertThat(eddy.get("/api/projects/1/", Map.of()).statusCode()).isEqualTo(401);
    }

    private static HttpResponse<String> send(final String method, final String path, final String body, final String bearer) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(eddy.uri(path)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            request.header("Authorization", "Bearer " + bearer);
        }
        return eddy.send(request.build());
    }
}
