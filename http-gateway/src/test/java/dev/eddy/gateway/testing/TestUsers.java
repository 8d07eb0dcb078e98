package dev.eddy.gateway.testing;

import dev.eddy.config.PostgresConfig;
import dev.eddy.gateway.auth.ApiKeys;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Adds users to an Eddy's database for tests that need more than the bootstrap admin: a member of project 1's
 * organization (or of none) with a personal API key of the given scopes.
 */
public final class TestUsers {
    private TestUsers() {
    }

    /**
     * @param uuid the user's uuid
     * @param key  its personal API key
     */
    public record TestUser(long id, UUID uuid, String email, String key) {
    }

    /** A user of project 1's organization at PostHog's member level (1), or admin (8). */
    public static TestUser member(final PostgresConfig pg, final int level, final String... scopes) throws SQLException {
        return create(pg, true, level, scopes);
    }

    /** A user of no organization: it sees no project. */
    public static TestUser outsider(final PostgresConfig pg, final String... scopes) throws SQLException {
        return create(pg, false, 1, scopes);
    }

    private static TestUser create(final PostgresConfig pg, final boolean member, final int level, final String... scopes)
            throws SQLException {
        final UUID uuid = UUID.randomUUID();
        final String email = "user-" + uuid + "@test.local";
        final String key = ApiKeys.newPersonalKey();
        final long id;
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password())) {
            try (PreparedStatement s = c.prepareStatement(
                    "INSERT INTO users (uuid, distinct_id, email, first_name) VALUES (?, ?, ?, 'Test') RETURNING id")) {
                s.setObject(1, uuid);
                s.setString(2, uuid.toString());
                s.setString(3, email);
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    id = rs.getLong(1);
                }
            }
            if (member) {
                try (PreparedStatement s = c.prepareStatement("INSERT INTO organization_memberships (organization_id, user_id, level) "
                        + "SELECT organization_id, ?, ? FROM projects WHERE id = 1")) {
                    s.setLong(1, id);
                    s.setInt(2, level);
                    s.executeUpdate();
                }
            }
            try (PreparedStatement s = c.prepareStatement("INSERT INTO personal_api_keys (id, user_id, label, secure_value, "
                    + "mask_value, scopes) VALUES (?, ?, 'test', ?, ?, ?)")) {
                s.setString(1, UUID.randomUUID().toString());
                s.setLong(2, id);
                s.setString(3, ApiKeys.hash(key));
                s.setString(4, ApiKeys.mask(key));
                s.setArray(5, c.createArrayOf("text", scopes));
                s.executeUpdate();
            }
        }
        return new TestUser(id, uuid, email, key);
    }
}
