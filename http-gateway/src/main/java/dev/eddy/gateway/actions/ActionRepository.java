package dev.eddy.gateway.actions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.db.FieldValue;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/** A project's actions in PostgreSQL; every write runs in one transaction with its activity log entry. */
public final class ActionRepository {
    public static final String SCOPE = "Action";
    private static final String UNIQUE_VIOLATION = "23505";
    private static final String SELECT = "SELECT a.id, a.project_id, a.name, a.description, a.tags, a.post_to_slack, a.slack_message_format, "
            + "a.steps, a.deleted, a.pinned_at, a.created_at, a.updated_at, " + User.columns("cb")
            + " FROM actions a LEFT JOIN users cb ON cb.id = a.created_by ";
    private static final String LIVE = "WHERE a.project_id = $1 AND NOT a.deleted AND ($2::text IS NULL OR a.name ILIKE '%' || $2 || '%') ";
    private static final String COUNT = "SELECT count(*) FROM actions a " + LIVE;
    private static final String PAGE = SELECT + LIVE + "ORDER BY a.name NULLS LAST, a.id LIMIT $3 OFFSET $4";
    private static final String ONE = SELECT + "WHERE a.project_id = $1 AND a.id = $2";
    private static final String SOME = SELECT + "WHERE a.project_id = $1 AND a.id = ANY($2)";
    private static final String LOCK = "SELECT id FROM actions WHERE project_id = $1 AND id = $2 FOR UPDATE";
    private static final String NAMED = "SELECT id FROM actions WHERE project_id = $1 AND name = $2 AND NOT deleted AND id <> $3 LIMIT 1";
    private static final String INSERT = "INSERT INTO actions (project_id, name, description, tags, post_to_slack, slack_message_format, "
            + "steps, pinned_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8 THEN now() END, $9) RETURNING id";
    private static final Map<String, String> COLUMNS = Map.of("name", "name", "description", "description", "tags", "tags",
            "post_to_slack", "post_to_slack", "slack_message_format", "slack_message_format", "steps", "steps", "deleted", "deleted");

    private final Pool pool;

    public ActionRepository(final Pool pool) {
        this.pool = pool;
    }

    public record Page(long total, List<SavedAction> actions) {
    }


    /** A new action's fields. */
    public record Create(String name, String description, List<String> tags, boolean postToSlack, String slackMessageFormat,
                         JsonNode steps, boolean pinned) {
    }

    /** The project's live actions whose name contains {@code search} (any without it). */
    public Future<Page> list(final long projectId, final String search, final int limit, final int offset) {
        return pool.preparedQuery(COUNT).execute(Tuple.of(projectId, search)).compose(count -> pool.preparedQuery(PAGE)
                .execute(Tuple.of(projectId, search, limit, offset))
                .map(rows -> new Page(count.iterator().next().getLong(0), actions(rows))));
    }

    /** The action, deleted or not (PostHog still shows a deleted one by its id). */
    public Future<Optional<SavedAction>> find(final long projectId, final long id) {
        return find(pool, projectId, id);
    }

    /** The actions among {@code ids} the project has, deleted ones included (queries still name them). */
    public Future<Map<Long, SavedAction>> some(final long projectId, final Collection<Long> ids) {
        if (ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return pool.preparedQuery(SOME).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(ids.toArray(Long[]::new))).map(rows -> {
            final Map<Long, SavedAction> found = new HashMap<>();
            actions(rows).forEach(a -> found.put(a.id(), a));
            return found;
        });
    }

    public Future<SavedAction> create(final long projectId, final long userId, final Create a) {
        return pool.<SavedAction>withTransaction(tx -> unique(tx, projectId, a.name(), 0)
                .compose(v -> tx.preparedQuery(INSERT).execute(Tuple.from(new Object[] {projectId, a.name(), a.description(),
                        a.tags().toArray(String[]::new), a.postToSlack(), a.slackMessageFormat(), Jsonb.bind(a.steps()), a.pinned(), userId})))
                .compose(rows -> {
                    final long id = rows.iterator().next().getLong("id");
                    return find(tx, projectId, id).compose(created -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                            ActivityLog.detail(SCOPE, id, a.name(), null, List.of())).map(created.get()));
                })).recover(ActionRepository::duplicateName);
    }

    /**
     * Applies {@code fields} ({@code pinned}: pin when not pinned yet, or unpin); empty when the project has no such
     * action.
     */
    public Future<Optional<SavedAction>> update(final long projectId, final long id, final long userId, final Map<String, FieldValue> fields,
                                                final Optional<Boolean> pinned) {
        return pool.<Optional<SavedAction>>withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.empty());
            }
            final Future<Void> named = fields.containsKey("name") && fields.get("name").bind() != null
                    ? unique(tx, projectId, (String) fields.get("name").bind(), id) : Future.succeededFuture();
            return named.compose(v -> find(tx, projectId, id)).compose(before -> {
                final StringJoiner sets = new StringJoiner(", ");
                final List<Object> values = new ArrayList<>(List.of(projectId, id));
                fields.forEach((field, value) -> {
                    values.add(value.bind());
                    sets.add(COLUMNS.get(field) + " = $" + values.size());
                });
                pinned.ifPresent(pin -> sets.add(pin ? "pinned_at = coalesce(pinned_at, now())" : "pinned_at = NULL"));
                sets.add("updated_at = now()");
                return tx.preparedQuery("UPDATE actions SET " + sets + " WHERE project_id = $1 AND id = $2").execute(Tuple.from(values))
                        .compose(done -> find(tx, projectId, id))
                        .compose(after -> {
                            final List<ActivityLog.Change> changes = ActivityLog.diff(view(before.get()), view(after.get()));
                            final boolean deleted = !before.get().deleted() && after.get().deleted();
                            return ActivityLog.record(tx, projectId, userId, SCOPE, id, deleted ? "deleted" : "updated",
                                    ActivityLog.detail(SCOPE, id, after.get().name(), null, changes)).map(Optional.of(after.get()));
                        });
            });
        })).recover(ActionRepository::duplicateName);
    }

    /** PostHog's check: no other live action of the project has the name. */
    private static Future<Void> unique(final SqlClient tx, final long projectId, final String name, final long exceptId) {
        if (name == null) {
            return Future.succeededFuture();
        }
        return tx.preparedQuery(NAMED).execute(Tuple.of(projectId, name, exceptId)).compose(rows -> rows.size() == 0 ? Future.succeededFuture()
                : Future.failedFuture(ApiError.badRequest("unique", "This project already has an action with this name, ID "
                        + rows.iterator().next().getLong("id"), "name")));
    }

    private static <T> Future<T> duplicateName(final Throwable e) {
        if (e instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState())) {
            return Future.failedFuture(ApiError.badRequest("unique", "This project already has an action with this name.", "name"));
        }
        return Future.failedFuture(e);
    }

    private static Future<Optional<SavedAction>> find(final SqlClient client, final long projectId, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, id)).map(rows -> actions(rows).stream().findFirst());
    }

    private static Map<String, JsonNode> view(final SavedAction a) {
        final Map<String, JsonNode> view = new LinkedHashMap<>();
        view.put("name", Json.mapper().valueToTree(a.name()));
        view.put("description", Json.mapper().valueToTree(a.description()));
        view.put("tags", Json.mapper().valueToTree(a.tags()));
        view.put("steps", a.storedSteps());
        view.put("deleted", Json.mapper().valueToTree(a.deleted()));
        view.put("pinned_at", Json.mapper().valueToTree(a.pinnedAt() == null ? null : a.pinnedAt().toString()));
        return view;
    }

    private static List<SavedAction> actions(final RowSet<Row> rows) {
        final List<SavedAction> actions = new ArrayList<>();
        for (final Row row : rows) {
            actions.add(new SavedAction(row.getLong("id"), row.getLong("project_id"), row.getString("name"), row.getString("description"),
                    List.of(row.getArrayOfStrings("tags")), row.getBoolean("post_to_slack"), row.getString("slack_message_format"),
                    Jsonb.read(row.getValue("steps")), row.getBoolean("deleted"), row.getOffsetDateTime("pinned_at"),
                    row.getOffsetDateTime("created_at"), User.from(row, "cb"), row.getOffsetDateTime("updated_at")));
        }
        return actions;
    }
}
