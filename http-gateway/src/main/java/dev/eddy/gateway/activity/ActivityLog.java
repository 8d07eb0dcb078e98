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
    /** $1 project, then a {@link Query}'s filters, each null for any. */
    private static final String WHERE = "WHERE a.project_id = $1 AND ($2::text IS NULL OR a.scope = $2::text) "
            + "AND ($3::text[] IS NULL OR a.scope = ANY($3::text[])) AND ($4::text IS NULL OR a.item_id = $4::text) "
            + "AND ($5::uuid IS NULL OR u.uuid = $5::uuid) ";
    private static final String COUNT = "SELECT count(*) FROM activity_log a LEFT JOIN users u ON u.id = a.user_id " + WHERE;
    /** Newest first, as PostHog's. */
    private static final String PAGE = SELECT + WHERE + "ORDER BY a.created_at DESC, a.id LIMIT $6 OFFSET $7";

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
     * Which entries of a project: PostHog's activity log filters.
     *
     * @param scope  one scope ({@code Insight}, {@code Dashboard}), or null
     * @param scopes any of these scopes (empty: any)
     * @param itemId one item's entries, or null
     * @param user   entries of the user with this uuid, or null
     */
    public record Query(String scope, List<String> scopes, String itemId, UUID user) {
        public static Query ofScope(final String scope) {
            return new Query(scope, List.of(), null, null);
        }

        public static Query ofItem(final String scope, final long itemId) {
            return new Query(scope, List.of(), Long.toString(itemId), null);
        }
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

    /** The entries {@code query} selects, newest first: {@code limit} of them from {@code offset}, and how many in all. */
    public Future<Page> find(final long projectId, final Query query, final int limit, final int offset) {
        final Tuple filters = Tuple.tuple().addLong(projectId).addString(query.scope())
                .addArrayOfString(query.scopes().isEmpty() ? null : query.scopes().toArray(String[]::new))
                .addString(query.itemId()).addUUID(query.user());
        final Tuple page = Tuple.tuple();
        for (int i = 0; i < filters.size(); i++) {
            page.addValue(filters.getValue(i));
        }
        page.addInteger(limit).addInteger(offset);
        return pool.preparedQuery(COUNT).execute(filters).compose(count -> pool.preparedQuery(PAGE).execute(page)
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
