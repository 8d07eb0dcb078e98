package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.users.User;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Explicit collaborators of a dashboard: users of the project's organization given view (21) or edit (37) level.
 * They matter on dashboards of restriction level 37, where only editors (and the creator and admins) may change
 * the dashboard; PostHog refuses collaborators on the lowest restriction level.
 */
public final class Collaborators {
    private static final String SELECT = "SELECT c.id, c.dashboard_id, c.level, c.added_at, c.updated_at, " + User.columns("u")
            + " FROM dashboard_collaborators c JOIN users u ON u.id = c.user_id ";
    private static final String LIST = SELECT + "WHERE c.dashboard_id = $1 ORDER BY c.added_at, c.id";
    private static final String ONE = SELECT + "WHERE c.id = $1";
    private static final String UPSERT = "INSERT INTO dashboard_collaborators (id, dashboard_id, user_id, level) VALUES ($1, $2, $3, $4) "
            + "ON CONFLICT (dashboard_id, user_id) DO UPDATE SET level = EXCLUDED.level, updated_at = now() RETURNING id";
    private static final String REMOVE = "DELETE FROM dashboard_collaborators c USING users u "
            + "WHERE c.user_id = u.id AND c.dashboard_id = $1 AND u.uuid = $2";

    private final Pool pool;

    public Collaborators(final Pool pool) {
        this.pool = pool;
    }

    /** One collaborator as the API shows it. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Collaborator(UUID id, long dashboardId, User user, int level, OffsetDateTime addedAt, OffsetDateTime updatedAt) {
    }

    public Future<List<Collaborator>> list(final long dashboardId) {
        return pool.preparedQuery(LIST).execute(Tuple.of(dashboardId)).map(rows -> {
            final List<Collaborator> found = new ArrayList<>();
            rows.forEach(row -> found.add(collaborator(row)));
            return found;
        });
    }

    /** Adds (or re-levels) {@code user} on a dashboard the caller may edit. */
    public Future<Collaborator> add(final Dashboard dashboard, final User user, final int level) {
        if (!dashboard.canEdit()) {
            return Future.failedFuture(ApiError.forbidden("permission_denied", "You don't have edit permissions for this dashboard."));
        }
        if (dashboard.restrictionLevel() < Dashboard.CAN_EDIT) {
            return Future.failedFuture(ApiError.badRequest("invalid_input",
                    "Cannot add collaborators to a dashboard on the lowest restriction level.", "level"));
        }
        if (dashboard.createdBy() != null && dashboard.createdBy().id() == user.id()) {
            return Future.failedFuture(ApiError.badRequest("invalid_input",
                    "Cannot add the dashboard's creator as a collaborator: they can always edit it.", "user_uuid"));
        }
        return pool.preparedQuery(UPSERT).execute(Tuple.of(UUID.randomUUID(), dashboard.id(), user.id(), (short) level))
                .compose(rows -> pool.preparedQuery(ONE).execute(Tuple.of(rows.iterator().next().getUUID("id"))))
                .map(rows -> collaborator(rows.iterator().next()));
    }

    /** Removes a collaborator by user uuid; false when there was none. */
    public Future<Boolean> remove(final Dashboard dashboard, final UUID userUuid) {
        if (!dashboard.canEdit()) {
            return Future.failedFuture(ApiError.forbidden("permission_denied", "You don't have edit permissions for this dashboard."));
        }
        return pool.preparedQuery(REMOVE).execute(Tuple.of(dashboard.id(), userUuid)).map(rows -> rows.rowCount() > 0);
    }

    private static Collaborator collaborator(final Row row) {
        return new Collaborator(row.getUUID("id"), row.getLong("dashboard_id"), User.from(row, "u"), row.getInteger("level"),
                row.getOffsetDateTime("added_at"), row.getOffsetDateTime("updated_at"));
    }
}
