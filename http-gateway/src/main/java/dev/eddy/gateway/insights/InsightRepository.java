package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * Insights of a project in PostgreSQL. Every statement filters by project; writes run in one transaction with
 * their tiles and their activity log entry.
 */
public final class InsightRepository {
    public static final String SCOPE = "Insight";
    private static final String SHORT_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    private static final SecureRandom RANDOM = new SecureRandom();

    private static final String SELECT = "SELECT i.id, i.short_id, i.name, i.derived_name, i.description, i.filters, i.query, "
            + "i.\"order\", i.deleted, i.saved, i.favorited, i.tags, i.created_at, i.updated_at, i.last_modified_at, p.timezone, "
            + User.columns("cb") + ", " + User.columns("lm") + ", "
            + "COALESCE((SELECT json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id, 'deleted', t.deleted) "
            + "ORDER BY t.id) FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id AND NOT d.deleted "
            + "WHERE t.insight_id = i.id), '[]'::json) AS tiles "
            + "FROM insights i JOIN projects p ON p.id = i.project_id "
            + "LEFT JOIN users cb ON cb.id = i.created_by LEFT JOIN users lm ON lm.id = i.last_modified_by ";
    private static final String FILTER = "WHERE i.project_id = $1 AND NOT i.deleted "
            + "AND ($2::bigint IS NULL OR i.created_by = $2) AND ($3::text IS NULL OR i.short_id = $3) "
            + "AND ($4::boolean IS NULL OR i.saved = $4) AND ($5::boolean IS NULL OR i.favorited = $5) ";
    private static final String COUNT = "SELECT count(*) FROM insights i " + FILTER;
    private static final String PAGE = SELECT + FILTER + "ORDER BY i.last_modified_at DESC, i.id DESC LIMIT $6 OFFSET $7";
    private static final String ONE = SELECT + "WHERE i.project_id = $1 AND i.id = $2";
    private static final String MANY = SELECT + "WHERE i.project_id = $1 AND i.id = ANY($2)";
    private static final String VIEW = "INSERT INTO insight_views (project_id, insight_id, user_id) VALUES ($1, $2, $3) "
            + "ON CONFLICT (insight_id, user_id) DO UPDATE SET last_viewed_at = now()";
    /** Microsecond timestamps can tie; the id keeps the order stable. */
    private static final String LAST_VIEWED = SELECT + "JOIN insight_views v ON v.insight_id = i.id AND v.user_id = $2 "
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
    private static final String LIVE_DASHBOARDS = "SELECT id FROM dashboards WHERE project_id = $1 AND NOT deleted AND id = ANY($2)";
    private static final String DROP_TILES = "UPDATE dashboard_tiles SET deleted = true "
            + "WHERE insight_id = $1 AND NOT deleted AND NOT (dashboard_id = ANY($2))";
    private static final String ADD_TILES = "INSERT INTO dashboard_tiles (dashboard_id, insight_id) SELECT unnest($2::bigint[]), $1 "
            + "ON CONFLICT (dashboard_id, insight_id) WHERE insight_id IS NOT NULL DO UPDATE SET deleted = false";

    private final Pool pool;

    public InsightRepository(final Pool pool) {
        this.pool = pool;
    }

    /** List filters of the insights API. */
    public record Filter(Long createdBy, String shortId, Boolean saved, Boolean favorited) {
    }

    public record Page(long total, List<Insight> insights) {
    }

    public Future<Page> list(final long projectId, final Filter f, final int limit, final int offset) {
        final Tuple filter = Tuple.of(projectId, f.createdBy(), f.shortId(), f.saved(), f.favorited());
        return pool.preparedQuery(COUNT).execute(filter).compose(count -> pool.preparedQuery(PAGE)
                .execute(Tuple.of(projectId, f.createdBy(), f.shortId(), f.saved(), f.favorited(), limit, offset))
                .map(rows -> new Page(count.iterator().next().getLong(0), insights(rows))));
    }

    public Future<Optional<Insight>> find(final long projectId, final long id) {
        return find(pool, projectId, id);
    }

    /** The project's insights with these ids (deleted ones included), by id. */
    public static Future<Map<Long, Insight>> byIds(final SqlClient client, final long projectId, final List<Long> ids) {
        if (ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return client.preparedQuery(MANY).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(ids.toArray(Long[]::new)))
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
            return apply(tx, projectId, id, userId, write).compose(v -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
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

    static Future<Optional<Insight>> find(final SqlClient client, final long projectId, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, id)).map(rows -> insights(rows).stream().findFirst());
    }

    public Future<Insight> create(final long projectId, final long userId, final InsightFields write) {
        return pool.withTransaction(tx -> tx.preparedQuery(INSERT).execute(Tuple.of(projectId, shortId(), userId))
                .compose(rows -> {
                    final long id = rows.iterator().next().getLong("id");
                    return apply(tx, projectId, id, userId, write)
                            .compose(v -> find(tx, projectId, id))
                            .compose(created -> ActivityLog.record(tx, projectId, userId, SCOPE, id, "created",
                                    ActivityLog.detail(SCOPE, id, displayName(created.get()), created.get().shortId(), List.of()))
                                    .map(created.get()));
                }));
    }

    /** Applies {@code write}; empty when the project has no such insight. */
    public Future<Optional<Insight>> update(final long projectId, final long id, final long userId, final InsightFields write) {
        return pool.withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.<Insight>empty());
            }
            return find(tx, projectId, id).compose(before -> apply(tx, projectId, id, userId, write)
                    .compose(v -> find(tx, projectId, id))
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

    private static Future<Void> apply(final SqlClient tx, final long projectId, final long id, final long userId, final InsightFields write) {
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
        // Bound with addArrayOfLong: Tuple.of would spread the array over several parameters.
        final Long[] wanted = write.dashboards().get().toArray(Long[]::new);
        return updated.compose(v -> tx.preparedQuery(LIVE_DASHBOARDS).execute(Tuple.tuple().addLong(projectId).addArrayOfLong(wanted))).compose(found -> {
            if (found.size() != java.util.Set.of(wanted).size()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input",
                        "'dashboards' names a dashboard that does not exist in this project.", "dashboards"));
            }
            return tx.preparedQuery(DROP_TILES).execute(Tuple.tuple().addLong(id).addArrayOfLong(wanted))
                    .compose(x -> tx.preparedQuery(ADD_TILES).execute(Tuple.tuple().addLong(id).addArrayOfLong(wanted))).mapEmpty();
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
            insights.add(new Insight(row.getLong("id"), row.getString("short_id"), row.getString("name"),
                    row.getString("derived_name"), Jsonb.read(row.getValue("filters")), query.isNull() ? null : query,
                    row.getInteger("order"), row.getBoolean("deleted"), dashboards, tiles, null, null, null, null, null, null,
                    row.getOffsetDateTime("created_at"), User.from(row, "cb"), row.getString("description"),
                    row.getOffsetDateTime("updated_at"), tags == null ? List.of() : List.of(tags), row.getBoolean("favorited"),
                    row.getBoolean("saved"), row.getOffsetDateTime("last_modified_at"), User.from(row, "lm"), false,
                    21, 37, "editor", row.getString("timezone"), false, null, null, null));
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
