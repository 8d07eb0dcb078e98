package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.PostgresConfig;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * Keys and projects are kept between requests, yet a change made anywhere in PostgreSQL (here: by SQL, as another
 * gateway or an operator would) is seen within a moment, not after the 30 s a kept lookup may live: each change is
 * announced on {@code eddy_access} and drops what the gateway kept.
 */
class AccessChangesTest extends RouteTest {
    /** Far under {@code AccessChanges.MAX_AGE} (30 s): only the change's notice can explain an answer this soon. */
    private static final Duration SOON = Duration.ofSeconds(5);

    @Test
    void aKeyRevokedInTheDatabaseStopsWorkingAtOnce() throws Exception {
        final PostgresConfig pg = eddy.config().pg();
        final TestUsers.TestUser user = TestUsers.member(pg, 1, "*");
        eddy.waitUntil(() -> metric("eddy.access.listening") == 1, SOON, "the gateway listening for changes");
        assertThat(status(user.key(), "/api/projects/1/")).isEqualTo(200);
        assertThat(status(user.key(), "/api/projects/1/")).as("asked again: now from what was kept").isEqualTo(200);
        assertThat(metric("eddy.access.kept")).as("the key and the project kept").isGreaterThanOrEqualTo(2);

        sql(pg, "UPDATE personal_api_keys SET revoked_at = now() WHERE user_id = ?", user.id());
        within(() -> status(user.key(), "/api/projects/1/"), 401);
    }

    @Test
    void aMemberRemovedInTheDatabaseNoLongerSeesTheProject() throws Exception {
        final PostgresConfig pg = eddy.config().pg();
        final TestUsers.TestUser user = TestUsers.member(pg, 1, "*");
        assertThat(status(user.key(), "/api/projects/1/")).isEqualTo(200);
        assertThat(status(user.key(), "/api/projects/1/")).isEqualTo(200);

        sql(pg, "DELETE FROM organization_memberships WHERE user_id = ?", user.id());
        within(() -> status(user.key(), "/api/projects/1/"), 404);
    }

    @Test
    void aProjectChangedInTheDatabaseIsReadAnew() throws Exception {
        final PostgresConfig pg = eddy.config().pg();
        final String before = TestEddy.json(eddy.getAuthorized("/api/projects/1/")).path("name").asText();
        TestEddy.json(eddy.getAuthorized("/api/projects/1/"));
        try {
            sql(pg, "UPDATE projects SET name = 'renamed by SQL' WHERE id = ?", 1L);
            eddy.waitUntil(() -> "renamed by SQL".equals(TestEddy.json(eddy.getAuthorized("/api/projects/1/")).path("name").asText()),
                    SOON, "the new name");
        } finally {
            sql(pg, "UPDATE projects SET name = ? WHERE id = 1", before);
        }
    }

    @Test
    void aChangeMadeThroughTheApiIsSeenByTheVeryNextRequest() {
        final String created = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/",
                "{\"label\":\"short-lived\",\"scopes\":[\"project:read\"]}")).path("value").asText();
        final String id = TestEddy.json(eddy.getAuthorized("/api/personal_api_keys/")).findParents("label").stream()
                .filter(k -> "short-lived".equals(k.path("label").asText())).findFirst().orElseThrow().path("id").asText();
        for (int i = 0; i < 3; i++) {
            assertThat(status(created, "/api/projects/1/")).isEqualTo(200);
        }
        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/personal_api_keys/" + id + "/", null).statusCode()).isEqualTo(204);
        assertThat(status(created, "/api/projects/1/")).isEqualTo(401);

        final HttpResponse<String> renamed = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/", "{\"timezone\":\"Europe/Paris\"}");
        assertThat(TestEddy.json(renamed).path("timezone").asText()).isEqualTo("Europe/Paris");
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/")).path("timezone").asText()).isEqualTo("Europe/Paris");
        eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/", "{\"timezone\":\"UTC\"}");
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/")).path("timezone").asText()).isEqualTo("UTC");
    }

    /** A gauge's value on /metrics. */
    private static double metric(final String name) {
        return eddy.meter(name);
    }

    private static int status(final String key, final String path) {
        return eddy.request(key, "GET", path, null).statusCode();
    }

    private static void within(final IntSupplier status, final int expected) throws InterruptedException {
        final int[] last = new int[1];
        eddy.waitUntil(() -> (last[0] = status.getAsInt()) == expected, SOON, () -> expected + " (last answered " + last[0] + ")");
    }

    private static void sql(final PostgresConfig pg, final String statement, final Object parameter) throws SQLException {
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password());
             PreparedStatement s = c.prepareStatement(statement)) {
            s.setObject(1, parameter);
            s.executeUpdate();
        }
    }
}
