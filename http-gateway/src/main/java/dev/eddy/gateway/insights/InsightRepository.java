package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Insights of a project in PostgreSQL, each read with what its reader may do with it ({@link InsightAccess}). Every
 * statement filters by project; writes run in one transaction with their tiles and their activity log entry.
 */
public final class InsightRepository {
    public static final String SCOPE = "Insight";
    private static final String SHORT_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Reads insights with their access for the caller bound to {@code caller} (a placeholder), and the last view by anyone. */
    private static String select(final String caller) {
        return "SELECT i.id, i.short_id, i.name, i.derived_name, i.description, i.filters, i.query, "
                + "i.\"order\", i.deleted, i.saved, i.favorited, i.tags, i.created_at, i.updated_at, i.last_modified_at, p.timezone, "
                + User.columns("cb") + ", " + User.columns("lm") + ", lv.last_viewed_at, " + InsightAccess.columns(caller) + ", "
                + "COALESCE((SELECT json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id, 'deleted', t.deleted) "
                + "ORDER BY t.id) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id AND NOT d.deleted "
                + "WHERE t.insight_id = i.id), '[]'::json) AS tiles" + FROM;
    }

    private static final String FROM = " FROM insights i JOIN projects p ON p.id = i.project_id "
            + "LEFT JOIN users cb ON cb.id = i.created_by LEFT JOIN users lm ON lm.id = i.last_modified_by "
            + "LEFT JOIN LATERAL (SELECT max(v.last_viewed_at) AS last_viewed_at FROM insight_views v WHERE v.insight_id = i.id) lv ON true ";
    private static final String LISTED = "WHERE i.project_id = $1 AND NOT i.deleted";
    private static final String ONE = select("$3") + "WHERE i.project_id = $1 AND i.id = $2";
    private static final String MANY = select("$3") + "WHERE i.project_id = $1 AND i.id = ANY($2)";
    private static final String VIEW = "INSERT INTO insight_views (project_id, insight_id, user_id) VALUES ($1, $2, $3) "
            + "ON CONFLICT (insight_id, user_id) DO UPDATE SET last_viewed_at = now()";
    /** Microsecond timestamps can tie; the id keeps the order stable. */
    private static final String LAST_VIEWED = select("$2") + "JOIN insight_views v ON v.insight_id = i.id AND v.user_id = $2 "
            + "WHERE i.project_id = $1 AND NOT i.deleted ORDER BY v.last_viewed_at DESC, i.id DESC LIMIT $3";
    private static final String LOCK = "SELECT id FROM insights WHERE project_id = $1 AND id = $2 FOR UPDATE";
    private static final String INSERT = "INSERT INTO insights (project_id, short_id, created_by, last_modified_by) "
            + "VALUES ($1, $2, $3, $3) RETURNING id";
    /** $1 project, $2 source, $3 new short id, $4 caller: PostHog's copy of an insight, named "<name> (Copy)". */
    private static final String COPY = "INSERT INTO insights (project_id, short_id, name, derived_name, description, filters, query, "
            + "\"order\", saved, favorited, tags, created_by, last_modified_by) SELECT project_id, $3, "
            + "CASE WHEN name IS NULL OR name = '' THEN NULL ELSE left(name || ' (Copy)', 400) END, derived_name, description, filters, "
            + "query, \"order\", saved, favorited, tags, $4, $4 FROM insights WHERE project_id = $1 AND id = $2 "
            + "RETURNING id, name, derived_name, short_id";
    /** The live dashboards among $2 and whether user $3 may edit each. */
    private static final String DASHBOARDS = "SELECT d.id, " + InsightAccess.editsDashboard("$3") + " OR "
            + InsightAccess.adminOf("$3", "$1") + " AS editable FROM dashboards d WHERE d.project_id = $1 AND NOT d.deleted AND d.id = ANY($2)";
    private static final String DROP_TILES = "UPDATE dashboard_tiles SET deleted = true "
            + "WHERE insight_id = $1 AND NOT deleted AND NOT (dashboard_id = ANY($2))";
    private static final String ADD_TILES = "INSERT INTO dashboard_tiles (dashboard_id, insight_id) SELECT unnest($2::bigint[]), $1 "
            + "ON CONFLICT (dashboard_id, insight_id) WHERE insight_id IS NOT NULL DO UPDATE SET deleted = false";
    /** Who reads without being a user (a shared link): no user has id 0. */
    private static final long NOBODY = 0;

    private final Pool pool;

    public InsightRepository(final Pool pool) {
        this.pool = pool;
    }

    public record Page(long total, List<Insight> insights) {
    }

    /**
     * The project's live insights that {@code filter} keeps, seen by {@code caller}: list parameters as PostHog reads
     * them ({@link InsightListFilter}), dates in {@code zone}.
     */
    public Future<Page> list(final long projectId, final long caller, final MultiMap params, final ZoneId zone, final int limit,
                             final int offset) {
        final InsightListFilter filter = InsightListFilter.of(params, caller, zone, ZonedDateTime.now(zone));
        final int n = filter.binds().size();
        final List<Object> binds = new ArrayList<>(List.of(projectId));
        binds.addAll(filter.binds());
        final String count = "SELECT count(*)" + FROM + LISTED + filter.where();
        final String page = select("$" + (n + 2)) + LISTED + filter.where() + " ORDER BY " + filter.orderBy()
                + " LIMIT $" + (n + 3) + " OFFSET $" + (n + 4);
        final List<Object> pageBinds = new ArrayList<>(binds);
        pageBinds.addAll(List.of(caller, limit, offset));
        return pool.preparedQuery(count).execute(Tuple.from(binds)).compose(total -> pool.preparedQuery(page)
                .execute(Tuple.from(pageBinds))
                .map(rows -> new Page(total.iterator().next().getLong(0), insights(rows))));
    }

    /** The insight (deleted ones included) as a reader who is no user sees it. */
    public Future<Optional<Insight>> find(final long projectId, final long id) {
        return find(pool, projectId, NOBODY, id);
    }

    /** The insight (deleted ones included) as {@code caller} sees it. */
    public Future<Optional<Insight>> find(final long projectId, final long caller, final long id) {
        return find(pool, projectId, caller, id);
    }

    /** The project's insights with these ids (deleted ones included), by id, as {@code caller} sees them. */
    public static Future<Map<Long, Insight>> byIds(final SqlClient client, final long projectId, final long caller, final List<Long> ids) {
        if (ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return client.preparedQuery(MANY).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(ids.toArray(Long[]::new)).addLong(caller))
                .map(rows -> {
                    final Map<Long, Insight> found = new LinkedHashMap<>();
                    insights(rows).forEach(i -> found.put(i.id(), i));
                    return found;
                });
    }

    /** Inserts an insight of a dashboard template within {@code tx}; its id. */
    public static Future<Long> insertForTemplate(final SqlClient tx, final long projectId, final long userId, final InsightFields write) {
        return tx.preparedQuery(INSERT).execute(Tuple.of(projectId, shortId(), userId)).compose(rows -> {
            final long id = rows.iterator().next().getLong("id");
            return apply(tx, projectId, id, userId, write, List.of()).compose(v -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                    ActivityLog.detail(SCOPE, id, write.nameSet().orElse(null), null, List.of()))).map(id);
        });
    }

    /**
     * Inserts a copy of insight {@code sourceId} within {@code tx}, as PostHog's dashboard duplication with
     * {@code duplicate_tiles} makes one (a new short id, {@code "<name> (Copy)"}, on no dashboard yet); its id.
     */
    public static Future<Long> copy(final SqlClient tx, final long projectId, final long userId, final long sourceId) {
        return tx.preparedQuery(COPY).execute(Tuple.of(projectId, sourceId, shortId(), userId)).compose(rows -> {
            final Row row = rows.iterator().next();
            final long id = row.getLong("id");
            final String name = row.getString("name") != null ? row.getString("name") : row.getString("derived_name");
            return ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                    ActivityLog.detail(SCOPE, id, name, row.getString("short_id"), List.of())).map(id);
        });
    }

    /** Records that {@code userId} viewed the insight now. */
    public Future<Void> viewed(final long projectId, final long id, final long userId) {
        return pool.preparedQuery(VIEW).execute(Tuple.of(projectId, id, userId)).mapEmpty();
    }

    /** The {@code limit} insights {@code userId} viewed last, most recent first. */
    public Future<List<Insight>> lastViewed(final long projectId, final long userId, final int limit) {
        return pool.preparedQuery(LAST_VIEWED).execute(Tuple.of(projectId, userId, limit)).map(InsightRepository::insights);
    }

    static Future<Optional<Insight>> find(final SqlClient client, final long projectId, final long caller, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, id, caller)).map(rows -> insights(rows).stream().findFirst());
    }

    public Future<Insight> create(final long projectId, final long userId, final InsightFields write) {
        return pool.withTransaction(tx -> tx.preparedQuery(INSERT).execute(Tuple.of(projectId, shortId(), userId))
                .compose(rows -> {
                    final long id = rows.iterator().next().getLong("id");
                    return apply(tx, projectId, id, userId, write, List.of())
                            .compose(v -> find(tx, projectId, userId, id))
                            .compose(created -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                                    ActivityLog.detail(SCOPE, id, displayName(created.get()), created.get().shortId(), List.of()))
                                    .map(created.get()));
                }));
    }

    /**
     * Applies {@code write}; empty when the project has no such insight. Refused (403) when the insight is on
     * dashboards none of which {@code userId} may edit, as PostHog's {@code CanEditInsight} refuses it.
     */
    public Future<Optional<Insight>> update(final long projectId, final long id, final long userId, final InsightFields write) {
        return pool.withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.<Insight>empty());
            }
            return find(tx, projectId, userId, id).compose(before -> before.get().effectivePrivilegeLevel() < InsightAccess.CAN_EDIT
                    ? Future.failedFuture(InsightAccess.refused())
                    : apply(tx, projectId, id, userId, write, before.get().dashboards())
                    .compose(v -> find(tx, projectId, userId, id))
                    .compose(after -> {
                        final List<ActivityLog.Change> changes = ActivityLog.diff(view(before.get()), view(after.get()));
                        if (changes.isEmpty()) {
                            return Future.succeededFuture(after);
                        }
                        final boolean deleted = !before.get().deleted() && after.get().deleted();
                        return ActivityLog.record(tx, projectId, userId, SCOPE, id, deleted ? "deleted" : "updated",
                                ActivityLog.detail(SCOPE, id, displayName(after.get()), after.get().shortId(), changes)).map(after);
                    }));
        }));
    }

    /**
     * Writes the fields {@code write} sets and, when it names dashboards, puts the insight on exactly those (it is on
     * {@code current} now): each must be a live dashboard of the project (400), and {@code userId} must be allowed to
     * edit every dashboard it joins or leaves (403, as PostHog refuses it).
     */
    private static Future<Void> apply(final SqlClient tx, final long projectId, final long id, final long userId, final InsightFields write,
                                      final List<Long> current) {
        final StringJoiner sets = new StringJoiner(", ");
        final List<Object> values = new ArrayList<>(List.of(projectId, id, userId));
        for (final InsightFields.Column column : write.columns()) {
            values.add(column.bind());
            sets.add(column.name() + " = $" + values.size());
        }
        sets.add("last_modified_by = $3").add("last_modified_at = now()").add("updated_at = now()");
        final Future<Void> updated = tx.preparedQuery("UPDATE insights SET " + sets + " WHERE project_id = $1 AND id = $2")
                .execute(Tuple.from(values)).mapEmpty();
        if (write.dashboards().isEmpty()) {
            return updated;
        }
        final Set<Long> wanted = new LinkedHashSet<>(write.dashboards().get());
        final Set<Long> asked = new LinkedHashSet<>(wanted);
        asked.addAll(current);
        // Bound with addArrayOfLong: Tuple.of would spread the array over several parameters.
        return updated.compose(v -> tx.preparedQuery(DASHBOARDS).execute(Tuple.tuple().addLong(projectId)
                .addArrayOfLong(asked.toArray(Long[]::new)).addLong(userId))).compose(found -> {
                    final Map<Long, Boolean> editable = new HashMap<>();
                    found.forEach(row -> editable.put(row.getLong("id"), row.getBoolean("editable")));
                    if (!editable.keySet().containsAll(wanted)) {
                        return Future.failedFuture(ApiError.badRequest("invalid_input",
                                "'dashboards' names a dashboard that does not exist in this project.", "dashboards"));
                    }
                    for (final long dashboard : wanted) {
                        if (!current.contains(dashboard) && !editable.get(dashboard)) {
                            return Future.failedFuture(InsightAccess.refusedDashboard(true, dashboard));
                        }
                    }
                    for (final long dashboard : current) {
                        if (!wanted.contains(dashboard) && !editable.getOrDefault(dashboard, true)) {
                            return Future.failedFuture(InsightAccess.refusedDashboard(false, dashboard));
                        }
                    }
                    final Long[] ids = wanted.toArray(Long[]::new);
                    return tx.preparedQuery(DROP_TILES).execute(Tuple.tuple().addLong(id).addArrayOfLong(ids))
                            .compose(x -> tx.preparedQuery(ADD_TILES).execute(Tuple.tuple().addLong(id).addArrayOfLong(ids))).mapEmpty();
                });
    }

    /** The fields the activity log compares. */
    private static Map<String, JsonNode> view(final Insight insight) {
        final Map<String, JsonNode> view = new LinkedHashMap<>();
        view.put("name", json(insight.name()));
        view.put("derived_name", json(insight.derivedName()));
        view.put("description", json(insight.description()));
        view.put("filters", insight.filters());
        view.put("query", insight.query());
        view.put("order", Json.mapper().valueToTree(insight.order()));
        view.put("deleted", Json.mapper().valueToTree(insight.deleted()));
        view.put("saved", Json.mapper().valueToTree(insight.saved()));
        view.put("favorited", Json.mapper().valueToTree(insight.favorited()));
        view.put("tags", Json.mapper().valueToTree(insight.tags()));
        view.put("dashboards", Json.mapper().valueToTree(insight.dashboards()));
        return view;
    }

    private static JsonNode json(final String text) {
        return text == null ? com.fasterxml.jackson.databind.node.NullNode.getInstance() : TextNode.valueOf(text);
    }

    static String displayName(final Insight insight) {
        return insight.name() != null ? insight.name() : insight.derivedName();
    }

    private static List<Insight> insights(final RowSet<Row> rows) {
        final List<Insight> insights = new ArrayList<>();
        for (final Row row : rows) {
            final List<Insight.Tile> tiles = new ArrayList<>();
            Jsonb.read(row.getValue("tiles")).forEach(t -> tiles.add(new Insight.Tile(t.get("id").asLong(),
                    t.get("dashboard_id").asLong(), t.get("deleted").asBoolean())));
            final List<Long> dashboards = tiles.stream().filter(t -> !t.deleted()).map(Insight.Tile::dashboardId).toList();
            final String[] tags = row.getArrayOfStrings("tags");
            final JsonNode query = Jsonb.read(row.getValue("query"));
            final InsightAccess access = InsightAccess.of(row);
            insights.add(new Insight(row.getLong("id"), row.getString("short_id"), row.getString("name"),
                    row.getString("derived_name"), Jsonb.read(row.getValue("filters")), query.isNull() ? null : query,
                    row.getInteger("order"), row.getBoolean("deleted"), dashboards, tiles, null, null, null, null, null, null,
                    row.getOffsetDateTime("created_at"), User.from(row, "cb"), row.getString("description"),
                    row.getOffsetDateTime("updated_at"), tags == null ? List.of() : List.of(tags), row.getBoolean("favorited"),
                    row.getBoolean("saved"), row.getOffsetDateTime("last_modified_at"), User.from(row, "lm"), false,
                    access.restrictionLevel(), access.privilegeLevel(), access.userAccessLevel(), row.getString("timezone"), false, null,
                    null, null, row.getOffsetDateTime("last_viewed_at")));
        }
        return insights;
    }

    private static String shortId() {
        final StringBuilder id = new StringBuilder(8);
        for (int i = 0; i < 8; i++) {
            id.append(SHORT_ID_ALPHABET.charAt(RANDOM.nextInt(SHORT_ID_ALPHABET.length())));
        }
        return id.toString();
    }
}
