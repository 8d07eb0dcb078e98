package dev.eddy.gateway.activity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * The activity log: one entry per create, update or soft delete of a dashboard or an insight, written in the same
 * transaction as the change, with PostHog's entry shape ({@code detail.changes} lists each changed field's
 * before and after).
 */
public final class ActivityLog {
    private static final String INSERT = "INSERT INTO activity_log (id, project_id, user_id, scope, item_id, activity, detail) "
            + "VALUES ($1, $2, $3, $4, $5, $6, $7)";
    private static final String SELECT = "SELECT a.id, a.scope, a.item_id, a.activity, a.detail, a.created_at, "
            + User.columns("u") + " FROM activity_log a LEFT JOIN users u ON u.id = a.user_id ";
    private static final String COUNT_ITEM = "SELECT count(*) FROM activity_log WHERE project_id = $1 AND scope = $2 AND item_id = $3";
    private static final String PAGE_ITEM = SELECT + "WHERE a.project_id = $1 AND a.scope = $2 AND a.item_id = $3 "
            + "ORDER BY a.created_at DESC, a.id LIMIT $4 OFFSET $5";
    private static final String COUNT_SCOPE = "SELECT count(*) FROM activity_log WHERE project_id = $1 AND scope = $2";
    private static final String PAGE_SCOPE = SELECT + "WHERE a.project_id = $1 AND a.scope = $2 "
            + "ORDER BY a.created_at DESC, a.id LIMIT $3 OFFSET $4";

    private final Pool pool;

    public ActivityLog(final Pool pool) {
        this.pool = pool;
    }

    /** One entry as the API shows it. */
    @com.fasterxml.jackson.databind.annotation.JsonNaming(com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Entry(UUID id, User user, String activity, String scope, String itemId, JsonNode detail,
                        OffsetDateTime createdAt) {
    }

    /**
     * A page of entries.
     *
     * @param total entries in all
     */
    public record Page(long total, List<Entry> entries) {
    }

    /** Writes an entry within {@code tx}. */
    public static Future<Void> record(final SqlClient tx, final long projectId, final long userId, final String scope,
                                      final long itemId, final String activity, final ObjectNode detail) {
        return tx.preparedQuery(INSERT).execute(Tuple.of(UUID.randomUUID(), projectId, userId, scope, Long.toString(itemId),
                activity, Jsonb.bind(detail))).mapEmpty();
    }

    /** PostHog's detail object: the item's name, its short id when it has one, and the changes. */
    public static ObjectNode detail(final String scope, final long id, final String name, final String shortId,
                                    final List<Change> changes) {
        final ObjectNode detail = Json.mapper().createObjectNode();
        detail.put("id", id);
        detail.put("name", name);
        if (shortId != null) {
            detail.put("short_id", shortId);
        }
        detail.putNull("merge");
        detail.putNull("trigger");
        detail.put("type", scope.toLowerCase(java.util.Locale.ROOT));
        final ArrayNode list = detail.putArray("changes");
        for (final Change change : changes) {
            final ObjectNode c = list.addObject();
            c.put("type", scope);
            c.put("action", change.action());
            c.put("field", change.field());
            c.set("before", change.before());
            c.set("after", change.after());
        }
        return detail;
    }

    /**
     * One field's change.
     *
     * @param action {@code created}, {@code changed} or {@code deleted}
     */
    public record Change(String action, String field, JsonNode before, JsonNode after) {
    }

    /** The fields of {@code after} whose values differ from {@code before}'s, as changes. */
    public static List<Change> diff(final Map<String, JsonNode> before, final Map<String, JsonNode> after) {
        final List<Change> changes = new ArrayList<>();
        after.forEach((field, value) -> {
            final JsonNode old = before.get(field);
            if (!Objects.equals(old, value)) {
                changes.add(new Change("changed", field, old, value));
            }
        });
        return changes;
    }

    public Future<Page> forItem(final long projectId, final String scope, final long itemId, final int limit, final int offset) {
        final String item = Long.toString(itemId);
        return pool.preparedQuery(COUNT_ITEM).execute(Tuple.of(projectId, scope, item))
                .compose(count -> pool.preparedQuery(PAGE_ITEM).execute(Tuple.of(projectId, scope, item, limit, offset))
                        .map(rows -> new Page(count.iterator().next().getLong(0), entries(rows))));
    }

    public Future<Page> forScope(final long projectId, final String scope, final int limit, final int offset) {
        return pool.preparedQuery(COUNT_SCOPE).execute(Tuple.of(projectId, scope))
                .compose(count -> pool.preparedQuery(PAGE_SCOPE).execute(Tuple.of(projectId, scope, limit, offset))
                        .map(rows -> new Page(count.iterator().next().getLong(0), entries(rows))));
    }

    private static List<Entry> entries(final Iterable<Row> rows) {
        final List<Entry> entries = new ArrayList<>();
        for (final Row row : rows) {
            entries.add(new Entry(row.getUUID("id"), User.from(row, "u"), row.getString("activity"), row.getString("scope"),
                    row.getString("item_id"), Jsonb.read(row.getValue("detail")), row.getOffsetDateTime("created_at")));
        }
        return entries;
    }
}
