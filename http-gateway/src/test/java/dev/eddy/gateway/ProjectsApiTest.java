package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.auth.ApiKeys;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code /api/projects/} with and without a personal API key, scopes and project isolation. */
class ProjectsApiTest {
    private static final String FIXED_KEY = "phx_fixedPersonalKeyForProjectsApiIT0001";
    private static final String FIXED_TOKEN = "phc_fixedProjectTokenForProjectsApiIT";

    private static RouteTier eddy;

    @BeforeAll
    static void start() throws Exception {
        eddy = RouteTier.start(Map.of(
                "EDDY_BOOTSTRAP_PERSONAL_API_KEY", FIXED_KEY,
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", FIXED_TOKEN));
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void listsTheBootstrapProjectInAPaginatedEnvelope() {
        final HttpResponse<String> response = eddy.get("/api/projects/", bearer(FIXED_KEY));

        assertThat(response.statusCode()).isEqualTo(200);
        final JsonNode body = RouteTier.json(response);
        assertThat(body.get("count").asLong()).isEqualTo(1);
        assertThat(body.get("next").isNull()).isTrue();
        assertThat(body.get("previous").isNull()).isTrue();
        assertThat(body.get("results").get(0).get("id").asLong()).isEqualTo(1);
        assertThat(body.get("results").get(0).get("api_token").asText()).isEqualTo(FIXED_TOKEN);
        assertThat(body.get("results").get(0).get("timezone").asText()).isEqualTo("UTC");
    }

    @Test
    void retrievesOneProjectWithOrWithoutTrailingSlash() {
        for (final String path : new String[] {"/api/projects/1/", "/api/projects/1"}) {
            final HttpResponse<String> response = eddy.get(path, bearer(FIXED_KEY));
            assertThat(response.statusCode()).as(path).isEqualTo(200);
            assertThat(RouteTier.json(response).get("name").asText()).isEqualTo("Default project");
        }
    }

    @Test
    void unknownOrMalformedProjectIdsAre404() {
        assertThat(eddy.get("/api/projects/999/", bearer(FIXED_KEY)).statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/projects/abc/", bearer(FIXED_KEY)).statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/projects/-1/", bearer(FIXED_KEY)).statusCode()).isEqualTo(404);
    }

    @Test
    void missingOrWrongKeyIs401WithAJsonError() {
        final HttpResponse<String> none = eddy.get("/api/projects/", Map.of());
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(RouteTier.json(none).get("code").asText()).isEqualTo("not_authenticated");

        final HttpResponse<String> wrong = eddy.get("/api/projects/", bearer("phx_" + "x".repeat(40)));
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(RouteTier.json(wrong).get("code").asText()).isEqualTo("authentication_failed");
        assertThat(wrong.body()).doesNotContain("Default project");

        assertThat(eddy.get("/api/projects/", Map.of("Authorization", "Basic abc")).statusCode()).isEqualTo(401);
        assertThat(eddy.get("/api/projects/", bearer(FIXED_TOKEN)).statusCode()).as("a project key is no personal key")
                .isEqualTo(401);
    }

    @Test
    void keyWithoutTheScopeIs403AndRevokedKeyIs401() throws Exception {
        final String unscoped = "phx_" + UUID.randomUUID().toString().replace("-", "");
        final String revoked = "phx_" + UUID.randomUUID().toString().replace("-", "");
        insertKey(unscoped, "{dashboard:read}", false);
        insertKey(revoked, "{*}", true);

        final HttpResponse<String> forbidden = eddy.get("/api/projects/", bearer(unscoped));
        assertThat(forbidden.statusCode()).isEqualTo(403);
        assertThat(RouteTier.json(forbidden).get("detail").asText()).contains("project:read");
        assertThat(eddy.get("/api/projects/", bearer(revoked)).statusCode()).isEqualTo(401);
    }

    @Test
    void personalKeysAreStoredOnlyAsHashes() throws Exception {
        try (Connection c = connect();
             PreparedStatement s = c.prepareStatement("SELECT secure_value, mask_value FROM personal_api_keys WHERE label LIKE 'bootstrap%'")) {
            final var rows = s.executeQuery();
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo(ApiKeys.hash(FIXED_KEY)).doesNotContain(FIXED_KEY.substring(4));
            assertThat(rows.getString(2)).isEqualTo("phx_...0001");
        }
    }

    @Test
    void eventCountsNeedAStreamsInstance() {
        final HttpResponse<String> response = eddy.get("/api/projects/1/event_counts/", bearer(FIXED_KEY));
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("Retry-After")).isPresent();
    }

    private static Map<String, String> bearer(final String key) {
        return Map.of("Authorization", "Bearer " + key);
    }

    private static void insertKey(final String key, final String scopes, final boolean revokedKey) throws Exception {
        try (Connection c = connect();
             PreparedStatement s = c.prepareStatement("INSERT INTO personal_api_keys (id, user_id, label, secure_value, "
                     + "mask_value, scopes, revoked_at) VALUES (?, 1, 'test', ?, ?, ?::text[], "
                     + (revokedKey ? "now()" : "NULL") + ")")) {
            s.setString(1, UUID.randomUUID().toString());
            s.setString(2, ApiKeys.hash(key));
            s.setString(3, ApiKeys.mask(key));
            s.setString(4, scopes);
            s.executeUpdate();
        }
    }

    private static Connection connect() throws Exception {
        return DriverManager.getConnection(eddy.config().pg().jdbcUrl(), eddy.config().pg().user(), eddy.config().pg().password());
    }
}
