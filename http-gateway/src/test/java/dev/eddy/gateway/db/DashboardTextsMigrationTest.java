package dev.eddy.gateway.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.testing.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/** V8 on a database that has text tiles: each body becomes a text with the tile's id, and new texts come after them. */
class DashboardTextsMigrationTest {

    @Test
    void textTilesBecomeTextsWithTheirTilesIds() throws SQLException {
        final TestPostgres pg = TestPostgres.shared();
        final String url = "jdbc:" + pg.newEmptyDatabase("v8_texts");
        migrate(url, "7");
        try (Connection c = DriverManager.getConnection(url, pg.user(), pg.password()); Statement s = c.createStatement()) {
            s.execute("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'o')");
            s.execute("INSERT INTO projects (id, uuid, organization_id, name, api_token) VALUES (1, "
                    + "'00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'p', 'phc_v8')");
            s.execute("INSERT INTO users (id, uuid, distinct_id, email) VALUES (7, '00000000-0000-0000-0000-000000000003', 'u', 'u@x')");
            s.execute("INSERT INTO dashboards (id, project_id, created_by) VALUES (1, 1, 7)");
            s.execute("INSERT INTO insights (id, project_id, short_id) VALUES (1, 1, 'abcdefgh')");
            s.execute("INSERT INTO dashboard_tiles (id, dashboard_id, insight_id) VALUES (4, 1, 1)");
            s.execute("INSERT INTO dashboard_tiles (id, dashboard_id, text, color) VALUES (5, 1, '{\"body\": \"hello\"}', 'red')");
        }

        migrate(url, "latest");

        try (Connection c = DriverManager.getConnection(url, pg.user(), pg.password()); Statement s = c.createStatement()) {
            try (ResultSet r = s.executeQuery("SELECT t.id, t.text_id, t.color, x.body, x.project_id, x.created_by, x.last_modified_by "
                    + "FROM dashboard_tiles t LEFT JOIN dashboard_texts x ON x.id = t.text_id ORDER BY t.id")) {
                assertThat(r.next()).isTrue();
                assertThat(r.getObject("text_id")).as("an insight tile shows no text").isNull();
                assertThat(r.next()).isTrue();
                assertThat(r.getLong("text_id")).isEqualTo(5);
                assertThat(r.getString("body")).isEqualTo("hello");
                assertThat(r.getString("color")).isEqualTo("red");
                assertThat(r.getLong("project_id")).isEqualTo(1);
                assertThat(r.getLong("created_by")).as("the dashboard's creator wrote it").isEqualTo(7);
                assertThat(r.getObject("last_modified_by")).isNull();
            }
            try (ResultSet r = s.executeQuery("INSERT INTO dashboard_texts (project_id, body) VALUES (1, 'new') RETURNING id")) {
                assertThat(r.next()).isTrue();
                assertThat(r.getLong(1)).isEqualTo(6);
            }
            assertThatThrownBy(() -> s.execute("INSERT INTO dashboard_tiles (dashboard_id) VALUES (1)"))
                    .as("a tile shows an insight or a text").hasMessageContaining("dashboard_tiles_shows_one");
        }
    }

    private static void migrate(final String url, final String target) {
        final TestPostgres pg = TestPostgres.shared();
        Flyway.configure().dataSource(url, pg.user(), pg.password()).locations("classpath:db/migration").target(target).load().migrate();
    }
}
