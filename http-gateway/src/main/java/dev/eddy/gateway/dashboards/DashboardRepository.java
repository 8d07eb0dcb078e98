package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.db.FieldValue;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.InsightRepository;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
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

/**
 * Dashboards of a project in PostgreSQL, each read with the caller's privilege: everyone in the project edits a
 * dashboard of restriction level 21; at level 37 only its creator, organization admins and collaborators with
 * level 37 do. Writes run in one transaction with their tiles and activity log entries.
 */
public final class DashboardRepository {
    public static final String SCOPE = "Dashboard";
    /** PostHog's organization admin level; admins edit every dashboard. */
    private static final int ORG_ADMIN = 8;

    /** $1 project, $2 caller. */
    private static final String SELECT = "SELECT d.id, d.name, d.description, d.pinned, d.created_at, d.created_by, d.deleted, "
            + "d.creation_mode, d.restriction_level, d.filters, d.variables, d.tags, " + User.columns("cb") + ", "
            + "(SELECT c.level FROM dashboard_collaborators c WHERE c.dashboard_id = d.id AND c.user_id = $2) AS collaborator_level, "
            + "(SELECT m.level FROM organization_memberships m JOIN projects p ON p.organization_id = m.organization_id "
            + " WHERE p.id = d.project_id AND m.user_id = $2) AS organization_level, "
            + "EXISTS (SELECT 1 FROM sharing_configurations s WHERE s.dashboard_id = d.id AND s.enabled) AS is_shared, "
            + "d.created_by = $2 AS created_by_caller "
            + "FROM dashboards d LEFT JOIN users cb ON cb.id = d.created_by ";
    /** $1 project, $2 dashboard, $3 caller: whether the caller created the dashboard or administers its organization. */
    private static final String CAN_RESTRICT = "SELECT COALESCE(d.created_by = $3, false) OR COALESCE((SELECT m.level "
            + "FROM organization_memberships m JOIN projects p ON p.organization_id = m.organization_id WHERE p.id = d.project_id "
            + "AND m.user_id = $3), 0) >= " + ORG_ADMIN + " FROM dashboards d WHERE d.project_id = $1 AND d.id = $2";
    private static final String COUNT = "SELECT count(*) FROM dashboards d " + filter(2);
    /** PostHog's order: pinned first, then by name. */
    private static final String PAGE = SELECT + filter(3) + "ORDER BY d.pinned DESC, d.name, d.id LIMIT $6 OFFSET $7";
    private static final String ONE = SELECT + "WHERE d.project_id = $1 AND d.id = $3";
    private static final String LOCK = "SELECT id FROM dashboards WHERE project_id = $1 AND id = $2 FOR UPDATE";
    private static final String INSERT = "INSERT INTO dashboards (project_id, created_by, creation_mode) VALUES ($1, $2, $3) RETURNING id";
    /** Insights whose only live tile is on dashboard $1: they go with it when it is deleted with delete_insights. */
    private static final String ONLY_HERE = "SELECT t.insight_id FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id "
            + "WHERE t.dashboard_id = $1 AND NOT t.deleted AND NOT i.deleted AND NOT EXISTS (SELECT 1 FROM dashboard_tiles o "
            + "JOIN dashboards od ON od.id = o.dashboard_id WHERE o.insight_id = t.insight_id AND o.dashboard_id <> $1 "
            + "AND NOT o.deleted AND NOT od.deleted)";
    private static final String DELETE_INSIGHT = "UPDATE insights SET deleted = true, last_modified_at = now(), last_modified_by = $3 "
            + "WHERE project_id = $1 AND id = $2";
    private static final String MOVE_TILE = "UPDATE dashboard_tiles SET dashboard_id = $3 WHERE id = $1 AND dashboard_id = $2 AND NOT deleted";
    private static final String TARGET_HAS_INSIGHT = "SELECT 1 FROM dashboard_tiles t JOIN dashboard_tiles o ON o.insight_id = t.insight_id "
            + "WHERE t.id = $1 AND o.dashboard_id = $2 AND NOT o.deleted";

    private static final Map<String, String> COLUMNS = Map.of("name", "name", "description", "description", "pinned", "pinned",
            "deleted", "deleted", "tags", "tags", "restriction_level", "restriction_level", "filters", "filters",
            "variables", "variables");

    private final Pool pool;

    public DashboardRepository(final Pool pool) {
        this.pool = pool;
    }

    public record Page(long total, List<Dashboard> dashboards) {
    }

    /**
     * The dashboards list's filters, as PostHog's list takes them.
     *
     * @param tags             dashboards with any of these tags (empty: all)
     * @param creationMode     dashboards created this way ({@code default}, {@code template}, {@code duplicate}), or null
     * @param excludeGenerated leave out dashboards whose name starts with PostHog's "Generated Dashboard"
     */
    public record Filter(List<String> tags, String creationMode, boolean excludeGenerated) {
    }

    /** The list's WHERE, its three filter parameters numbered from {@code $first} ($1 is the project). */
    private static String filter(final int first) {
        final String tags = "$" + first;
        final String mode = "$" + (first + 1);
        final String generated = "$" + (first + 2);
        return "WHERE d.project_id = $1 AND NOT d.deleted AND (" + tags + "::text[] IS NULL OR d.tags && " + tags + "::text[]) "
                + "AND (" + mode + "::text IS NULL OR d.creation_mode = " + mode + "::text) "
                + "AND NOT (" + generated + "::boolean AND COALESCE(starts_with(d.name, 'Generated Dashboard'), false)) ";
    }

    public Future<Page> list(final long projectId, final long caller, final Filter filter, final int limit, final int offset) {
        final String[] tags = filter.tags().isEmpty() ? null : filter.tags().toArray(String[]::new);
        // Bound one by one: Tuple.of would spread the array over several parameters.
        final Tuple count = Tuple.tuple().addLong(projectId).addArrayOfString(tags).addString(filter.creationMode())
                .addBoolean(filter.excludeGenerated());
        final Tuple page = Tuple.tuple().addLong(projectId).addLong(caller).addArrayOfString(tags).addString(filter.creationMode())
                .addBoolean(filter.excludeGenerated()).addInteger(limit).addInteger(offset);
        return pool.preparedQuery(COUNT).execute(count).compose(total -> pool.preparedQuery(PAGE).execute(page)
                .map(rows -> new Page(total.iterator().next().getLong(0), dashboards(rows))));
    }

    /** The dashboard with its tiles (deleted dashboards included: the caller decides). */
    public Future<Optional<Dashboard>> find(final long projectId, final long caller, final long id) {
        return find(pool, projectId, caller, id);
    }

    private static Future<Optional<Dashboard>> find(final SqlClient client, final long projectId, final long caller, final long id) {
        return client.preparedQuery(ONE).execute(Tuple.of(projectId, caller, id)).compose(rows -> {
            final List<Dashboard> found = dashboards(rows);
            if (found.isEmpty()) {
                return Future.succeededFuture(Optional.empty());
            }
            return DashboardTiles.live(client, projectId, caller, id).map(tiles -> Optional.of(found.get(0).withTiles(tiles)));
        });
    }

    /**
     * Creates a dashboard; with {@code copyFrom} (use_dashboard) it starts with that dashboard's filters and tiles,
     * showing the same insights and texts, or, with {@code duplicateTiles}, copies of them.
     */
    public Future<Dashboard> create(final long projectId, final long caller, final Map<String, FieldValue> fields,
                                    final Optional<Long> copyFrom, final boolean duplicateTiles) {
        final String mode = copyFrom.isPresent() ? "duplicate" : "default";
        return pool.withTransaction(tx -> tx.preparedQuery(INSERT).execute(Tuple.of(projectId, caller, mode)).compose(rows -> {
            final long id = rows.iterator().next().getLong("id");
            Future<Void> step = set(tx, projectId, id, fields);
            if (copyFrom.isPresent()) {
                step = step.compose(v -> find(tx, projectId, caller, copyFrom.get()))
                        .compose(source -> source.filter(d -> !d.deleted()).isPresent()
                                ? set(tx, projectId, id, inherited(source.get(), fields))
                                        .compose(v -> DashboardTiles.copy(tx, projectId, caller, id, source.get(), duplicateTiles))
                                : Future.failedFuture(ApiError.badRequest("invalid_input",
                                        "'use_dashboard' names a dashboard that does not exist in this project.", "use_dashboard")));
            }
            return step.compose(v -> find(tx, projectId, caller, id)).compose(created -> ActivityLog.record(tx, projectId, caller,
                    SCOPE, id, "created", ActivityLog.detail(SCOPE, id, created.get().name(), null, List.of())).map(created.get()));
        }));
    }

    /**
     * What a duplicate takes from its source, as PostHog's: the source's filters unless the request sent some, and the
     * source's variables when it has any.
     */
    private static Map<String, FieldValue> inherited(final Dashboard source, final Map<String, FieldValue> fields) {
        final Map<String, FieldValue> inherited = new LinkedHashMap<>();
        final FieldValue sent = fields.get("filters");
        if (sent == null || sent.json().isEmpty()) {
            inherited.put("filters", new FieldValue(source.filters(), Jsonb.bind(source.filters())));
        }
        if (source.variables().isObject() && !source.variables().isEmpty()) {
            inherited.put("variables", new FieldValue(source.variables(), Jsonb.bind(source.variables())));
        }
        return inherited;
    }

    /**
     * Applies {@code fields}, then {@code tiles} (PostHog's order); with {@code deleteInsights} and {@code deleted: true},
     * insights shown only on this dashboard are soft-deleted with it. Empty when the project has no such dashboard; 403
     * when the caller may not edit it. The activity log gets one entry: {@code deleted}, {@code restored} or
     * {@code updated} with each changed field, the tiles included.
     */
    public Future<Optional<Dashboard>> update(final long projectId, final long caller, final long id,
                                              final Map<String, FieldValue> fields, final List<TileWrite> tiles,
                                              final boolean deleteInsights) {
        return pool.withTransaction(tx -> tx.preparedQuery(LOCK).execute(Tuple.of(projectId, id)).compose(locked -> {
            if (locked.size() == 0) {
                return Future.succeededFuture(Optional.<Dashboard>empty());
            }
            return find(tx, projectId, caller, id).compose(before -> {
                if (!before.get().canEdit()) {
                    return Future.failedFuture(ApiError.forbidden("permission_denied",
                            "You don't have edit permissions for this dashboard."));
                }
                final boolean deleting = !before.get().deleted() && fields.containsKey("deleted")
                        && fields.get("deleted").json().asBoolean();
                final boolean restoring = before.get().deleted() && fields.containsKey("deleted")
                        && !fields.get("deleted").json().asBoolean();
                Future<Void> step = restrictable(tx, projectId, caller, id, fields).compose(v -> set(tx, projectId, id, fields)).compose(v -> DashboardTiles.apply(tx, projectId, caller, id, tiles));
                if (deleting && deleteInsights) {
                    step = step.compose(v -> deleteOnlyHere(tx, projectId, caller, id));
                }
                return step.compose(v -> find(tx, projectId, caller, id)).compose(after -> {
                    final List<ActivityLog.Change> changes = ActivityLog.diff(view(before.get()), view(after.get()));
                    if (changes.isEmpty()) {
                        return Future.succeededFuture(after);
                    }
                    final String activity = deleting ? "deleted" : restoring ? "restored" : "updated";
                    return ActivityLog.record(tx, projectId, caller, SCOPE, id, activity,
                            ActivityLog.detail(SCOPE, id, after.get().name(), null, changes)).map(after);
                });
            });
        }));
    }

    /**
     * Creates a dashboard from a PostHog dashboard template ({@code template_name}, {@code dashboard_description},
     * {@code dashboard_filters}, {@code tags}, {@code tiles} of type {@code INSIGHT} or {@code TEXT}): a new insight
     * per insight tile, in one transaction.
     */
    public Future<Dashboard> createFromTemplate(final long projectId, final long caller, final Template template) {
        return pool.withTransaction(tx -> tx.preparedQuery(INSERT).execute(Tuple.of(projectId, caller, "template")).compose(rows -> {
            final long id = rows.iterator().next().getLong("id");
            final Map<String, FieldValue> fields = new LinkedHashMap<>();
            fields.put("name", new FieldValue(Json.mapper().valueToTree(template.name()), template.name()));
            fields.put("description", new FieldValue(Json.mapper().valueToTree(template.description()), template.description()));
            fields.put("filters", new FieldValue(template.filters(), Jsonb.bind(template.filters())));
            fields.put("tags", new FieldValue(Json.mapper().valueToTree(template.tags()), template.tags().toArray(String[]::new)));
            Future<Void> step = set(tx, projectId, id, fields);
            for (final Template.Tile tile : template.tiles()) {
                step = step.compose(v -> tile.insight() == null
                        ? DashboardTiles.addText(tx, projectId, caller, id, tile.text().path("body").textValue(), tile.layouts(), tile.color())
                        : InsightRepository.insertForTemplate(tx, projectId, caller, tile.insight())
                                .compose(insight -> DashboardTiles.addInsight(tx, id, insight, tile.layouts(), tile.color())));
            }
            return step.compose(v -> find(tx, projectId, caller, id)).compose(created -> ActivityLog.record(tx, projectId, caller,
                    SCOPE, id, "created", ActivityLog.detail(SCOPE, id, created.get().name(), null, List.of())).map(created.get()));
        }));
    }

    /** Moves a tile to another dashboard of the project; the source dashboard as it is afterwards. */
    public Future<Optional<Dashboard>> moveTile(final long projectId, final long caller, final long id, final long tileId,
                                                final long toDashboard) {
        return pool.withTransaction(tx -> find(tx, projectId, caller, id).compose(source -> {
            if (source.isEmpty() || source.get().deleted()) {
                return Future.succeededFuture(Optional.<Dashboard>empty());
            }
            return find(tx, projectId, caller, toDashboard).compose(target -> {
                if (target.isEmpty() || target.get().deleted()) {
                    return Future.failedFuture(ApiError.badRequest("invalid_input",
                            "'toDashboard' names a dashboard that does not exist in this project.", "toDashboard"));
                }
                if (!source.get().canEdit() || !target.get().canEdit()) {
                    return Future.failedFuture(ApiError.forbidden("permission_denied",
                            "You don't have edit permissions for both dashboards."));
                }
                return tx.preparedQuery(TARGET_HAS_INSIGHT).execute(Tuple.of(tileId, toDashboard)).compose(dup -> dup.size() > 0
                        ? Future.failedFuture(ApiError.badRequest("invalid_input", "The target dashboard already shows this insight.", "tile"))
                        : tx.preparedQuery(MOVE_TILE).execute(Tuple.of(tileId, id, toDashboard)).compose(moved -> moved.rowCount() == 0
                                ? Future.failedFuture(ApiError.badRequest("invalid_input", "The tile is not on this dashboard.", "tile"))
                                : find(tx, projectId, caller, id)));
            });
        }));
    }

    /**
     * PostHog's {@code can_restrict}: only the dashboard's creator and organization admins may set its
     * {@code restriction_level} (even to the level it has), other editors get a 403.
     */
    private static Future<Void> restrictable(final SqlClient tx, final long projectId, final long caller, final long id,
                                             final Map<String, FieldValue> fields) {
        if (!fields.containsKey("restriction_level")) {
            return Future.succeededFuture();
        }
        return tx.preparedQuery(CAN_RESTRICT).execute(Tuple.of(projectId, id, caller)).compose(rows -> rows.iterator().next().getBoolean(0)
                ? Future.<Void>succeededFuture()
                : Future.failedFuture(ApiError.forbidden("permission_denied", "Only the dashboard owner and project admins have the "
                        + "restriction rights required to change the dashboard's restriction level.")));
    }

    private static Future<Void> set(final SqlClient tx, final long projectId, final long id, final Map<String, FieldValue> fields) {
        final StringJoiner sets = new StringJoiner(", ");
        final List<Object> values = new ArrayList<>(List.of(projectId, id));
        fields.forEach((field, value) -> {
            values.add(value.bind());
            sets.add(COLUMNS.get(field) + " = $" + values.size());
        });
        sets.add("last_modified_at = now()");
        return tx.preparedQuery("UPDATE dashboards SET " + sets + " WHERE project_id = $1 AND id = $2")
                .execute(Tuple.from(values)).mapEmpty();
    }

    private static Future<Void> deleteOnlyHere(final SqlClient tx, final long projectId, final long caller, final long id) {
        return tx.preparedQuery(ONLY_HERE).execute(Tuple.of(id)).compose(rows -> {
            Future<Void> chain = Future.succeededFuture();
            for (final Row row : rows) {
                final long insight = row.getLong("insight_id");
                chain = chain.compose(v -> tx.preparedQuery(DELETE_INSIGHT).execute(Tuple.of(projectId, insight, caller)))
                        .compose(v -> ActivityLog.record(tx, projectId, caller, InsightRepository.SCOPE, insight, "deleted",
                                ActivityLog.detail(InsightRepository.SCOPE, insight, null, null, List.of(new ActivityLog.Change(
                                        "changed", "deleted", Json.mapper().valueToTree(false), Json.mapper().valueToTree(true))))));
            }
            return chain;
        });
    }

    private static Map<String, JsonNode> view(final Dashboard d) {
        final Map<String, JsonNode> view = new LinkedHashMap<>();
        view.put("name", Json.mapper().valueToTree(d.name()));
        view.put("description", Json.mapper().valueToTree(d.description()));
        view.put("pinned", Json.mapper().valueToTree(d.pinned()));
        view.put("deleted", Json.mapper().valueToTree(d.deleted()));
        view.put("tags", Json.mapper().valueToTree(d.tags()));
        view.put("restriction_level", Json.mapper().valueToTree(d.restrictionLevel()));
        view.put("filters", d.filters());
        view.put("variables", d.variables());
        view.put("tiles", tiles(d.tiles()));
        return view;
    }

    /** The tiles as the activity log compares them: what each shows and how. */
    private static JsonNode tiles(final List<Dashboard.Tile> tiles) {
        final ArrayNode described = Json.mapper().createArrayNode();
        for (final Dashboard.Tile tile : tiles) {
            final ObjectNode d = described.addObject();
            d.put("id", tile.id());
            if (tile.insight() != null) {
                d.putObject("insight").put("id", tile.insight().id());
            } else {
                d.putObject("text").put("id", tile.text().path("id").asLong()).set("body", tile.text().path("body"));
            }
            d.put("color", tile.color());
            d.set("layouts", tile.layouts());
        }
        return described;
    }

    private static List<Dashboard> dashboards(final RowSet<Row> rows) {
        final List<Dashboard> dashboards = new ArrayList<>();
        for (final Row row : rows) {
            final int restriction = row.getInteger("restriction_level");
            final Integer collaborator = row.getInteger("collaborator_level");
            final Integer organization = row.getInteger("organization_level");
            final User creator = User.from(row, "cb");
            final boolean edits = restriction < Dashboard.CAN_EDIT
                    || (organization != null && organization >= ORG_ADMIN)
                    || (collaborator != null && collaborator >= Dashboard.CAN_EDIT)
                    || creatorIsCaller(row);
            final String[] tags = row.getArrayOfStrings("tags");
            dashboards.add(new Dashboard(row.getLong("id"), row.getString("name"), row.getString("description"),
                    row.getBoolean("pinned"), row.getOffsetDateTime("created_at"), creator, row.getBoolean("is_shared"),
                    row.getBoolean("deleted"), row.getString("creation_mode"), Jsonb.read(row.getValue("filters")),
                    Jsonb.read(row.getValue("variables")), tags == null ? List.of() : List.of(tags), restriction,
                    edits ? Dashboard.CAN_EDIT : Dashboard.CAN_VIEW, List.of()));
        }
        return dashboards;
    }

    private static boolean creatorIsCaller(final Row row) {
        return Boolean.TRUE.equals(row.getBoolean("created_by_caller"));
    }
}
