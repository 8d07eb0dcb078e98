package dev.eddy.gateway.sharing;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.auth.Secrets;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.Optional;

/**
 * Sharing configurations: one per dashboard or insight, created disabled on first read (as PostHog does), with a
 * random access token that {@code refresh} replaces (the old link stops working at once).
 */
public final class SharingRepository {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String COLUMNS = "id, project_id, dashboard_id, insight_id, enabled, access_token, created_at";
    private static final String ENSURE_DASHBOARD = "INSERT INTO sharing_configurations (project_id, dashboard_id, access_token) "
            + "VALUES ($1, $2, $3) ON CONFLICT (dashboard_id) WHERE dashboard_id IS NOT NULL DO NOTHING";
    private static final String ENSURE_INSIGHT = "INSERT INTO sharing_configurations (project_id, insight_id, access_token) "
            + "VALUES ($1, $2, $3) ON CONFLICT (insight_id) WHERE insight_id IS NOT NULL DO NOTHING";
    private static final String OF_DASHBOARD = "SELECT " + COLUMNS + " FROM sharing_configurations WHERE project_id = $1 AND dashboard_id = $2";
    private static final String OF_INSIGHT = "SELECT " + COLUMNS + " FROM sharing_configurations WHERE project_id = $1 AND insight_id = $2";
    private static final String SET_ENABLED = "UPDATE sharing_configurations SET enabled = $2 WHERE id = $1 RETURNING " + COLUMNS;
    private static final String SET_TOKEN = "UPDATE sharing_configurations SET access_token = $2 WHERE id = $1 RETURNING " + COLUMNS;
    /**
     * By the token's SHA-256, not the token: PostgreSQL compares hashes the caller cannot steer byte by byte, so the
     * time an answer takes says nothing about how much of a guess was right. (A scan of the configurations, one per
     * shared object: few enough.)
     */
    private static final String BY_TOKEN = "SELECT " + COLUMNS + " FROM sharing_configurations "
            + "WHERE sha256(convert_to(access_token, 'UTF8')) = $1 AND enabled";

    private final Pool pool;

    public SharingRepository(final Pool pool) {
        this.pool = pool;
    }

    /** A sharing configuration; the API shows {@code created_at}, {@code enabled} and {@code access_token}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Sharing(OffsetDateTime createdAt, boolean enabled, String accessToken,
                          @com.fasterxml.jackson.annotation.JsonIgnore long id,
                          @com.fasterxml.jackson.annotation.JsonIgnore long projectId,
                          @com.fasterxml.jackson.annotation.JsonIgnore Long dashboardId,
                          @com.fasterxml.jackson.annotation.JsonIgnore Long insightId) {
    }

    public Future<Sharing> ofDashboard(final long projectId, final long dashboardId) {
        return pool.preparedQuery(ENSURE_DASHBOARD).execute(Tuple.of(projectId, dashboardId, newToken()))
                .compose(v -> pool.preparedQuery(OF_DASHBOARD).execute(Tuple.of(projectId, dashboardId)))
                .map(rows -> sharing(rows.iterator().next()));
    }

    public Future<Sharing> ofInsight(final long projectId, final long insightId) {
        return pool.preparedQuery(ENSURE_INSIGHT).execute(Tuple.of(projectId, insightId, newToken()))
                .compose(v -> pool.preparedQuery(OF_INSIGHT).execute(Tuple.of(projectId, insightId)))
                .map(rows -> sharing(rows.iterator().next()));
    }

    public Future<Sharing> setEnabled(final Sharing sharing, final boolean enabled) {
        return pool.preparedQuery(SET_ENABLED).execute(Tuple.of(sharing.id(), enabled)).map(rows -> sharing(rows.iterator().next()));
    }

    public Future<Sharing> refresh(final Sharing sharing) {
        return pool.preparedQuery(SET_TOKEN).execute(Tuple.of(sharing.id(), newToken())).map(rows -> sharing(rows.iterator().next()));
    }

    /** The enabled configuration with this token, if any. */
    public Future<Optional<Sharing>> enabledByToken(final String token) {
        return pool.preparedQuery(BY_TOKEN).execute(Tuple.of(io.vertx.core.buffer.Buffer.buffer(Secrets.sha256(token))))
                .map(rows -> rows.size() == 0 ? Optional.<Sharing>empty() : Optional.of(sharing(rows.iterator().next())))
                // The hash matched; the token itself is compared in constant time too.
                .map(found -> found.filter(s -> Secrets.equal(s.accessToken(), token)));
    }


    private static Sharing sharing(final Row row) {
        return new Sharing(row.getOffsetDateTime("created_at"), row.getBoolean("enabled"), row.getString("access_token"),
                row.getLong("id"), row.getLong("project_id"), row.getLong("dashboard_id"), row.getLong("insight_id"));
    }

    /** 32 random bytes, URL-safe: unguessable and fit for a path segment. */
    private static String newToken() {
        final byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
