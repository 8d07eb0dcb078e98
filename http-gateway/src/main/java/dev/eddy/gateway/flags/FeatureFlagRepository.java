package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.cohorts.CohortUsers;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/** Feature flags of a project in PostgreSQL; every write runs in one transaction with its activity log entry. */
public final class FeatureFlagRepository implements CohortUsers {
    public static final String SCOPE = "FeatureFlag";
    private static final String UNIQUE_VIOLATION = "23505";
    private static final String SELECT = "SELECT f.id, f.project_id, f.key, f.name, f.filters, f.active, f.deleted, "
            + "f.ensure_experience_continuity, f.version, f.created_at, f.updated_at, " + User.columns("cb") + ", "
            + User.columns("lm") + " FROM feature_flags f LEFT JOIN users cb ON cb.id = f.created_by "
            + "LEFT JOIN users lm ON lm.id = f.last_modified_by ";
    private static final String COUNT = "SELECT count(*) FROM feature_flags f WHERE f.project_id = $1 AND NOT f.deleted";
    private static final String PAGE = SELECT + "WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.id DESC LIMIT $2 OFFSET $3";
    private static final String ONE = SELECT + "WHERE f.project_id = $1 AND f.id = $2";
    private static final String LIVE = SELECT + "WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.id";
    private static final String EVERY_LIVE = SELECT + "WHERE NOT f.deleted ORDER BY f.id";
    private static final String LOCK = "SELECT id FROM feature_flags WHERE project_id = $1 AND id = $2 FOR UPDATE";
    private static final String INSERT = "INSERT INTO feature_flags (project_id, key, name, filters, active, "
            + "ensure_experience_continuity, created_by, last_modified_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id";
    private static final Map<String, String> COLUMNS = Map.of("key", "key", "name", "name", "filters", "filters",
            "active", "active", "deleted", "deleted", "ensure_experience_continuity", "ensure_experience_continuity");

    private final Pool pool;

    public FeatureFlagRepository(final Pool pool) {
        this.pool = pool;
    }

    public record Page(long total, List<FeatureFlag> flags) {
    }


    /**
     * A change and the flag before it.
     *
     * @param before the flag before the change (empty for a creation)
     */
    public record Change(Optional<FeatureFlag> before, FeatureFlag after) {
    }

    public Future<Page> list(final long projectId, final int limit, final int offset) {
        return pool.preparedQuery(COUNT).execute(Tuple.of(projectId)).compose(count -> pool.preparedQuery(PAGE)
                .execute(Tuple.of(projectId, limit, offset)).map(rows -> new Page(count.iterator().next().getLong(0), flags(rows))));
    }

    public Future<Optional<FeatureFlag>> find(final long projectId, final long id) {
        return pool.preparedQuery(ONE).execute(Tuple.of(projectId, id)).map(rows -> flags(rows).stream().findFirst());
    }

    /** The project's live flags (active or not), for local evaluation. */
    public Future<List<FeatureFlag>> live(final long projectId) {
        return pool.preparedQuery(LIVE).execute(Tuple.of(projectId)).map(FeatureFlagRepository::flags);
    }

    @Override
    public Future<List<String>> activeFlagsUsing(final long projectId, final long cohortId) {
        return live(projectId).map(live -> live.stream()
                .filter(f -> f.active() && FlagDefinition.of(f.definition()).cohortIds().contains(cohortId))
                .map(FeatureFlag::key).toList());
    }

    /** Every project's live flags, to publish at start-up. */
    public Future<List<FeatureFlag>> everyLive() {
        return pool.preparedQuery(EVERY_LIVE).execute().map(FeatureFlagRepository::flags);
    }

    public Future<Change> create(final long projectId, final long userId, final String key, final String name,
                                 final JsonNode filters, final boolean active, final boolean continuity) {
        return pool.<Change>withTransaction(tx -> tx.preparedQuery(INSERT)
                .execute(Tuple.of(projectId, key, name, Jsonb.bind(filters), active, continuity, userId))
                .compose(rows -> {
                    final long id = rows.iterator().next().getLong("id");
                    return find(tx, projectId, id).compose(created -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                            ActivityLog.detail(SCOPE, id, key, null, List.of())).map(new Change(Optional.empty(), created.get())));
                })).recover(FeatureFlagRepository::duplicateKey);
    }

    /** Applies {@code fields} and bumps the version; empty when the project has no such flag. */
    public Future<Optional<Change>> update(final long projectId, final long id, final long userId, final Map<String, FieldValue> fields) {
        return pool.<Optional<Change>>withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.empty());
            }
            return find(tx, projectId, id).compose(before -> {
                final StringJoiner sets = new StringJoiner(", ");
                final List<Object> values = new ArrayList<>(List.of(projectId, id, userId));
                fields.forEach((field, value) -> {
                    values.add(value.bind());
                    sets.add(COLUMNS.get(field) + " = $" + values.size());
                });
                sets.add("version = version + 1").add("last_modified_by = $3").add("updated_at = now()");
                return tx.preparedQuery("UPDATE feature_flags SET " + sets + " WHERE project_id = $1 AND id = $2")
                        .execute(Tuple.from(values))
                        .compose(v -> find(tx, projectId, id))
                        .compose(after -> {
                            final List<ActivityLog.Change> changes = ActivityLog.diff(view(before.get()), view(after.get()));
                            final boolean deleted = !before.get().deleted() && after.get().deleted();
                            return ActivityLog.record(tx, projectId, userId, SCOPE, id, deleted ? "deleted" : "updated",
                                    ActivityLog.detail(SCOPE, id, after.get().key(), null, changes))
                                    .map(Optional.of(new Change(before, after.get())));
                        });
            });
        })).recover(FeatureFlagRepository::duplicateKey);
    }

    private static <T> Future<T> duplicateKey(final Throwable e) {
        if (e instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState())) {
            return Future.failedFuture(ApiError.badRequest("unique", "There is already a feature flag with this key.", "key"));
        }
        return Future.failedFuture(e);
    }

    private static Future<Optional<FeatureFlag>> find(final SqlClient client, final long projectId, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, id)).map(rows -> flags(rows).stream().findFirst());
    }

    private static Map<String, JsonNode> view(final FeatureFlag f) {
        final Map<String, JsonNode> view = new LinkedHashMap<>();
        view.put("key", Json.mapper().valueToTree(f.key()));
        view.put("name", Json.mapper().valueToTree(f.name()));
        view.put("filters", f.filters());
        view.put("active", Json.mapper().valueToTree(f.active()));
        view.put("deleted", Json.mapper().valueToTree(f.deleted()));
        view.put("ensure_experience_continuity", Json.mapper().valueToTree(f.ensureExperienceContinuity()));
        return view;
    }

    private static List<FeatureFlag> flags(final RowSet<Row> rows) {
        final List<FeatureFlag> flags = new ArrayList<>();
        for (final Row row : rows) {
            flags.add(new FeatureFlag(row.getLong("id"), row.getLong("project_id"), row.getString("key"), row.getString("name"),
                    Jsonb.read(row.getValue("filters")), row.getBoolean("active"), row.getBoolean("deleted"),
                    row.getBoolean("ensure_experience_continuity"), row.getInteger("version"), row.getOffsetDateTime("created_at"),
                    User.from(row, "cb"), row.getOffsetDateTime("updated_at"), User.from(row, "lm")));
        }
        return flags;
    }
}
