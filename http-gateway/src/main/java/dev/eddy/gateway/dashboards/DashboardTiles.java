package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.InsightRepository;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The tiles of a dashboard and the text cards they show, in PostgreSQL, always within the caller's transaction: read
 * (live tiles of live insights), written from a PATCH's {@code tiles} as PostHog's {@code _update_tiles} writes them,
 * and copied when a dashboard is duplicated (sharing its insights and texts, or, with {@code duplicate_tiles}, copying
 * them as PostHog's {@code _deep_duplicate_tiles}).
 */
final class DashboardTiles {
    /** $1 dashboard. */
    private static final String LIVE = "SELECT t.id, t.insight_id, t.layouts, t.color, x.id AS text_id, x.body, x.project_id, "
            + "x.last_modified_at, " + User.columns("xc") + ", " + User.columns("xm") + " FROM dashboard_tiles t "
            + "LEFT JOIN insights i ON i.id = t.insight_id LEFT JOIN dashboard_texts x ON x.id = t.text_id "
            + "LEFT JOIN users xc ON xc.id = x.created_by LEFT JOIN users xm ON xm.id = x.last_modified_by "
            + "WHERE t.dashboard_id = $1 AND NOT t.deleted AND (t.insight_id IS NULL OR NOT i.deleted) ORDER BY t.id";
    private static final String TILE = "SELECT dashboard_id, insight_id FROM dashboard_tiles WHERE id = $1";
    private static final String TEXT_HERE = "SELECT 1 FROM dashboard_tiles WHERE dashboard_id = $1 AND text_id = $2";
    private static final String NEW_TEXT = "INSERT INTO dashboard_texts (project_id, body, created_by) VALUES ($1, $2, $3) RETURNING id";
    private static final String EDIT_TEXT = "UPDATE dashboard_texts SET body = $2, last_modified_by = $3, last_modified_at = now() "
            + "WHERE id = $1";
    private static final String TEXT_TILE = "INSERT INTO dashboard_tiles (dashboard_id, text_id, layouts, color, deleted) "
            + "VALUES ($1, $2, $3, $4, $5)";
    private static final String INSIGHT_TILE = "INSERT INTO dashboard_tiles (dashboard_id, insight_id, layouts, color) VALUES ($1, $2, $3, $4)";
    /** $2 a text to show (null keeps it), $3 layouts (null keeps them), $4 whether $5 is the new colour, $6 deleted (null keeps it). */
    private static final String SHOW = "UPDATE dashboard_tiles SET text_id = COALESCE($2::bigint, text_id), "
            + "layouts = COALESCE($3::jsonb, layouts), color = CASE WHEN $4::boolean THEN $5::text ELSE color END, "
            + "deleted = COALESCE($6::boolean, deleted) WHERE id = $1";
    /** $1 new dashboard, $2 source, $3 project: the same insights and texts on new tiles. */
    private static final String SHARE_TILES = "INSERT INTO dashboard_tiles (dashboard_id, insight_id, text_id, layouts, color) "
            + "SELECT $1, t.insight_id, t.text_id, t.layouts, t.color FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id "
            + "WHERE t.dashboard_id = $2 AND d.project_id = $3 AND NOT t.deleted ORDER BY t.id";

    private DashboardTiles() {
    }

    /** The dashboard's live tiles, each insight tile with its insight, each text tile with its text card. */
    static Future<List<Dashboard.Tile>> live(final SqlClient client, final long projectId, final long caller, final long dashboardId) {
        return client.preparedQuery(LIVE).execute(Tuple.of(dashboardId)).compose(rows -> {
            final List<Row> tileRows = new ArrayList<>();
            rows.forEach(tileRows::add);
            final List<Long> insightIds = tileRows.stream().map(r -> r.getLong("insight_id")).filter(Objects::nonNull).toList();
            return InsightRepository.byIds(client, projectId, caller, insightIds).map(insights -> {
                final List<Dashboard.Tile> tiles = new ArrayList<>();
                for (final Row r : tileRows) {
                    final Long insightId = r.getLong("insight_id");
                    tiles.add(new Dashboard.Tile(r.getLong("id"), r.getString("color"), Jsonb.read(r.getValue("layouts")),
                            insightId == null ? null : insights.get(insightId), text(r), false, false, null));
                }
                return tiles;
            });
        });
    }

    /** PostHog's text card: {@code {id, body, created_by, last_modified_at, last_modified_by, team}}; null for an insight tile. */
    private static JsonNode text(final Row r) {
        final Long id = r.getLong("text_id");
        if (id == null) {
            return null;
        }
        final ObjectNode text = Json.mapper().createObjectNode();
        text.put("id", id);
        text.put("body", r.getString("body"));
        text.set("created_by", Json.mapper().valueToTree(User.from(r, "xc")));
        text.set("last_modified_at", Json.mapper().valueToTree(r.getOffsetDateTime("last_modified_at")));
        text.set("last_modified_by", Json.mapper().valueToTree(User.from(r, "xm")));
        text.put("team", r.getLong("project_id"));
        return text;
    }

    /** Adds a new text card showing {@code body}, written by {@code caller}. */
    static Future<Void> addText(final SqlClient tx, final long projectId, final long caller, final long dashboardId, final String body,
                                final JsonNode layouts, final String color) {
        return newText(tx, projectId, caller, body).compose(text -> tx.preparedQuery(TEXT_TILE)
                .execute(Tuple.of(dashboardId, text, Jsonb.bind(layoutsOrEmpty(layouts)), color, false))).mapEmpty();
    }

    /** Adds a tile showing an insight. */
    static Future<Void> addInsight(final SqlClient tx, final long dashboardId, final long insightId, final JsonNode layouts,
                                   final String color) {
        return tx.preparedQuery(INSIGHT_TILE).execute(Tuple.of(dashboardId, insightId, Jsonb.bind(layoutsOrEmpty(layouts)), color))
                .mapEmpty();
    }

    /**
     * Puts {@code source}'s tiles on the new dashboard {@code dashboardId}: new tiles showing the same insights and texts,
     * or, {@code deep}, showing copies of them (each insight copied as PostHog names a copy, each text rewritten).
     */
    static Future<Void> copy(final SqlClient tx, final long projectId, final long caller, final long dashboardId,
                             final Dashboard source, final boolean deep) {
        if (!deep) {
            return tx.preparedQuery(SHARE_TILES).execute(Tuple.of(dashboardId, source.id(), projectId)).mapEmpty();
        }
        Future<Void> chain = Future.succeededFuture();
        for (final Dashboard.Tile tile : source.tiles()) {
            chain = chain.compose(v -> tile.insight() != null
                    ? InsightRepository.copy(tx, projectId, caller, tile.insight().id())
                            .compose(copy -> addInsight(tx, dashboardId, copy, tile.layouts(), tile.color()))
                    : addText(tx, projectId, caller, dashboardId, tile.text().path("body").textValue(), tile.layouts(), tile.color()));
        }
        return chain;
    }

    /** Applies a PATCH's {@code tiles} in order; tiles it does not name are left as they are. */
    static Future<Void> apply(final SqlClient tx, final long projectId, final long caller, final long dashboardId,
                              final List<TileWrite> writes) {
        Future<Void> chain = Future.succeededFuture();
        for (final TileWrite write : writes) {
            if (write.writes()) {
                chain = chain.compose(v -> write.text() != null ? writeText(tx, projectId, caller, dashboardId, write)
                        : show(tx, dashboardId, write));
            }
        }
        return chain;
    }

    /** Colour, layouts or deleted of a tile of this dashboard (a deleted one included: {@code deleted: false} restores it). */
    private static Future<Void> show(final SqlClient tx, final long dashboardId, final TileWrite write) {
        if (write.id() == null) {
            return Future.failedFuture(ApiError.badRequest("invalid_input",
                    "A tile without 'text' needs the 'id' of a tile on this dashboard.", "tiles"));
        }
        return tx.preparedQuery(TILE).execute(Tuple.of(write.id())).compose(rows -> {
            if (rows.size() == 0 || rows.iterator().next().getLong("dashboard_id") != dashboardId) {
                return Future.failedFuture(notHere(write.id()));
            }
            return update(tx, write, null);
        });
    }

    /**
     * A text card: the text {@code text.id} names (shown on this dashboard) rewritten, or a new text; then shown on the
     * tile {@code id} names, or on a new tile when there is none (PostHog creates a tile for an id it does not know).
     */
    private static Future<Void> writeText(final SqlClient tx, final long projectId, final long caller, final long dashboardId,
                                          final TileWrite write) {
        final TileWrite.Text text = write.text();
        final Future<Long> written = text.id() == null ? newText(tx, projectId, caller, text.body())
                : tx.preparedQuery(TEXT_HERE).execute(Tuple.of(dashboardId, text.id())).compose(rows -> rows.size() == 0
                        ? Future.failedFuture(ApiError.badRequest("invalid_input", "Text tile not found.", "text"))
                        : tx.preparedQuery(EDIT_TEXT).execute(Tuple.of(text.id(), text.body(), caller)).map(text.id()));
        return written.compose(textId -> {
            if (write.id() == null) {
                return newTextTile(tx, dashboardId, textId, write);
            }
            return tx.preparedQuery(TILE).execute(Tuple.of(write.id())).compose(rows -> {
                if (rows.size() == 0) {
                    return newTextTile(tx, dashboardId, textId, write);
                }
                final Row tile = rows.iterator().next();
                if (tile.getLong("dashboard_id") != dashboardId) {
                    return Future.failedFuture(notHere(write.id()));
                }
                if (tile.getLong("insight_id") != null) {
                    return Future.failedFuture(ApiError.badRequest("invalid_input",
                            "Tile " + write.id() + " shows an insight; a text card needs a tile of its own.", "tiles"));
                }
                return update(tx, write, textId);
            });
        });
    }

    private static Future<Void> newTextTile(final SqlClient tx, final long dashboardId, final long textId, final TileWrite write) {
        return tx.preparedQuery(TEXT_TILE).execute(Tuple.of(dashboardId, textId, Jsonb.bind(layoutsOrEmpty(write.layouts())),
                write.color(), Boolean.TRUE.equals(write.deleted()))).mapEmpty();
    }

    private static Future<Void> update(final SqlClient tx, final TileWrite write, final Long textId) {
        return tx.preparedQuery(SHOW).execute(Tuple.of(write.id(), textId, Jsonb.bind(write.layouts()), write.hasColor(), write.color(),
                write.deleted())).mapEmpty();
    }

    private static Future<Long> newText(final SqlClient tx, final long projectId, final long caller, final String body) {
        return tx.preparedQuery(NEW_TEXT).execute(Tuple.of(projectId, body, caller)).map(rows -> rows.iterator().next().getLong("id"));
    }

    private static JsonNode layoutsOrEmpty(final JsonNode layouts) {
        return layouts == null || !layouts.isObject() ? Json.mapper().createObjectNode() : layouts;
    }

    private static ApiError notHere(final long tileId) {
        return ApiError.badRequest("invalid_input", "Tile " + tileId + " is not on this dashboard.", "tiles");
    }
}
