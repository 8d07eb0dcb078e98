package dev.eddy.gateway.cohorts;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.db.FieldValue;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;

/** A project's cohorts and static cohorts' members in PostgreSQL; every write runs in one transaction with its activity log entry. */
public final class CohortRepository {
    public static final String SCOPE = "Cohort";
    /** The most members one static cohort may have: they travel with every query that names it. */
    public static final int MAX_MEMBERS = 100_000;
    private static final String SELECT = "SELECT c.id, c.project_id, c.name, c.description, c.filters, c.is_static, c.deleted, c.created_at, "
            + "c.updated_at, (SELECT count(*) FROM cohort_members m WHERE m.cohort_id = c.id) AS members, " + User.columns("cb")
            + " FROM cohorts c LEFT JOIN users cb ON cb.id = c.created_by ";
    private static final String LIVE = "WHERE c.project_id = $1 AND NOT c.deleted AND ($2::text IS NULL OR c.name ILIKE '%' || $2 || '%') ";
    private static final String COUNT = "SELECT count(*) FROM cohorts c " + LIVE;
    private static final String PAGE = SELECT + LIVE + "ORDER BY c.created_at DESC, c.id DESC LIMIT $3 OFFSET $4";
    private static final String ONE = SELECT + "WHERE c.project_id = $1 AND c.id = $2";
    private static final String SOME = SELECT + "WHERE c.project_id = $1 AND c.id = ANY($2) AND NOT c.deleted";
    private static final String ALL_LIVE = SELECT + "WHERE c.project_id = $1 AND NOT c.deleted";
    private static final String LOCK = "SELECT id FROM cohorts WHERE project_id = $1 AND id = $2 FOR UPDATE";
    private static final String INSERT = "INSERT INTO cohorts (project_id, name, description, filters, is_static, created_by) "
            + "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
    private static final String ADD = "INSERT INTO cohort_members (cohort_id, distinct_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING";
    private static final String REMOVE = "DELETE FROM cohort_members WHERE cohort_id = $1 AND distinct_id = ANY($2)";
    private static final String MEMBERS = "SELECT cohort_id, distinct_id FROM cohort_members WHERE cohort_id = ANY($1)";
    private static final String MEMBERSHIPS = "SELECT DISTINCT m.cohort_id FROM cohort_members m JOIN cohorts c ON c.id = m.cohort_id "
            + "WHERE c.project_id = $1 AND m.cohort_id = ANY($2) AND m.distinct_id = ANY($3)";
    private static final Map<String, String> COLUMNS = Map.of("name", "name", "description", "description", "filters", "filters",
            "deleted", "deleted");

    private final Pool pool;

    public CohortRepository(final Pool pool) {
        this.pool = pool;
    }

    public record Page(long total, List<SavedCohort> cohorts) {
    }

    public Future<Page> list(final long projectId, final String search, final int limit, final int offset) {
        return pool.preparedQuery(COUNT).execute(Tuple.of(projectId, search)).compose(count -> pool.preparedQuery(PAGE)
                .execute(Tuple.of(projectId, search, limit, offset))
                .map(rows -> new Page(count.iterator().next().getLong(0), cohorts(rows))));
    }

    /** The cohort, deleted or not (PostHog still shows a deleted one by its id). */
    public Future<Optional<SavedCohort>> find(final long projectId, final long id) {
        return find(pool, projectId, id);
    }

    /** The project's live cohorts among {@code ids}. */
    public Future<Map<Long, SavedCohort>> some(final long projectId, final Collection<Long> ids) {
        if (ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return pool.preparedQuery(SOME).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(ids.toArray(Long[]::new))).map(rows -> {
            final Map<Long, SavedCohort> found = new HashMap<>();
            cohorts(rows).forEach(c -> found.put(c.id(), c));
            return found;
        });
    }

    /** The project's live cohorts. */
    public Future<List<SavedCohort>> live(final long projectId) {
        return pool.preparedQuery(ALL_LIVE).execute(Tuple.of(projectId)).map(CohortRepository::cohorts);
    }

    /** The members of the static cohorts {@code ids}. */
    public Future<Map<Long, List<String>>> members(final Collection<Long> ids) {
        if (ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return pool.preparedQuery(MEMBERS).execute(Tuple.tuple().addArrayOfLong(ids.toArray(Long[]::new))).map(rows -> {
            final Map<Long, List<String>> members = new HashMap<>();
            rows.forEach(row -> members.computeIfAbsent(row.getLong("cohort_id"), c -> new ArrayList<>()).add(row.getString("distinct_id")));
            return members;
        });
    }

    /** Which of the project's static cohorts {@code ids} hold any of {@code distinctIds}. */
    public Future<Set<Long>> memberships(final long projectId, final Collection<Long> ids, final Collection<String> distinctIds) {
        if (ids.isEmpty() || distinctIds.isEmpty()) {
            return Future.succeededFuture(Set.of());
        }
        return pool.preparedQuery(MEMBERSHIPS).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(ids.toArray(Long[]::new))
                .addArrayOfString(distinctIds.toArray(String[]::new))).map(rows -> {
                    final Set<Long> in = new HashSet<>();
                    rows.forEach(row -> in.add(row.getLong("cohort_id")));
                    return in;
                });
    }

    /** A new cohort, a static one with its first members. */
    public Future<SavedCohort> create(final long projectId, final long userId, final String name, final String description,
                                      final JsonNode filters, final boolean isStatic, final Collection<String> members) {
        return pool.withTransaction(tx -> tx.preparedQuery(INSERT)
                .execute(Tuple.of(projectId, name, description, Jsonb.bind(filters), isStatic, userId))
                .compose(rows -> {
                    final long id = rows.iterator().next().getLong("id");
                    return add(tx, id, members).compose(v -> find(tx, projectId, id)).compose(created -> ActivityLog.record(tx, projectId, userId,
                            SCOPE, id, "created", ActivityLog.detail(SCOPE, id, name, null, List.of())).map(created.get()));
                }));
    }

    /** Applies {@code fields}, adds {@code added} and removes {@code removed} members; empty when the project has no such cohort. */
    public Future<Optional<SavedCohort>> update(final long projectId, final long id, final long userId, final Map<String, FieldValue> fields,
                                                final Collection<String> added, final Collection<String> removed) {
        return pool.<Optional<SavedCohort>>withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.empty());
            }
            return find(tx, projectId, id).compose(before -> {
                final StringJoiner sets = new StringJoiner(", ");
                final List<Object> values = new ArrayList<>(List.of(projectId, id));
                fields.forEach((field, value) -> {
                    values.add(value.bind());
                    sets.add(COLUMNS.get(field) + " = $" + values.size());
                });
                sets.add("updated_at = now()");
                return tx.preparedQuery("UPDATE cohorts SET " + sets + " WHERE project_id = $1 AND id = $2").execute(Tuple.from(values))
                        .compose(done -> add(tx, id, added))
                        .compose(done -> removed.isEmpty() ? Future.<Void>succeededFuture()
                                : tx.preparedQuery(REMOVE).execute(Tuple.tuple().addLong(id).addArrayOfString(removed.toArray(String[]::new))).mapEmpty())
                        .compose(done -> find(tx, projectId, id))
                        .compose(after -> {
                            final List<ActivityLog.Change> changes = ActivityLog.diff(view(before.get()), view(after.get()));
                            final boolean deleted = !before.get().deleted() && after.get().deleted();
                            return ActivityLog.record(tx, projectId, userId, SCOPE, id, deleted ? "deleted" : "updated",
                                    ActivityLog.detail(SCOPE, id, after.get().name(), null, changes)).map(Optional.of(after.get()));
                        });
            });
        }));
    }

    private static Future<Void> add(final SqlClient tx, final long id, final Collection<String> members) {
        if (members.isEmpty()) {
            return Future.succeededFuture();
        }
        return tx.preparedQuery(ADD).execute(Tuple.tuple().addLong(id).addArrayOfString(members.toArray(String[]::new))).mapEmpty();
    }

    private static Future<Optional<SavedCohort>> find(final SqlClient client, final long projectId, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, id)).map(rows -> cohorts(rows).stream().findFirst());
    }

    private static Map<String, JsonNode> view(final SavedCohort c) {
        final Map<String, JsonNode> view = new LinkedHashMap<>();
        view.put("name", Json.mapper().valueToTree(c.name()));
        view.put("description", Json.mapper().valueToTree(c.description()));
        view.put("filters", c.filters());
        view.put("deleted", Json.mapper().valueToTree(c.deleted()));
        view.put("count", Json.mapper().valueToTree(c.count()));
        return view;
    }

    private static List<SavedCohort> cohorts(final RowSet<Row> rows) {
        final List<SavedCohort> cohorts = new ArrayList<>();
        for (final Row row : rows) {
            cohorts.add(new SavedCohort(row.getLong("id"), row.getLong("project_id"), row.getString("name"), row.getString("description"),
                    Jsonb.read(row.getValue("filters")), row.getBoolean("is_static"), row.getBoolean("deleted"), row.getOffsetDateTime("created_at"),
                    User.from(row, "cb"), row.getOffsetDateTime("updated_at"), row.getLong("members"), null));
        }
        return cohorts;
    }
}
