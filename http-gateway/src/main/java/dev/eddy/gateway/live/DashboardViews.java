package dev.eddy.gateway.live;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.dashboards.Dashboard;
import dev.eddy.gateway.dashboards.DashboardRepository;
import dev.eddy.gateway.dashboards.TileCalculations;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.DashboardOverride;
import dev.eddy.gateway.insights.Insight;
import dev.eddy.gateway.insights.InsightCalculation;
import dev.eddy.gateway.insights.InsightCalculations;
import dev.eddy.gateway.insights.RefreshMode;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What live dashboards push, read afresh every time: the dashboard and its tiles from PostgreSQL, each insight tile
 * calculated exactly as the dashboard API shows it ({@link DashboardOverride} applied, {@link InsightCalculations} with
 * {@code force_blocking}, whose result then also serves cached reads), and the project's change version from the
 * stores ({@link ProjectChanges}).
 *
 * <p>A tile whose calculation is refused (a query Eddy cannot answer) is pushed with its {@code error}; one that
 * fails because the stores cannot answer now (503 during a rebalance) fails the whole view, which the poller retries.
 */
public final class DashboardViews implements LiveDashboards.Source {
    /** How long one reading of a version may wait for a rebalance to end before the tick gives up (the next retries). */
    private static final Duration VERSION_TIMEOUT = Duration.ofSeconds(5);
    private static final InsightCalculations.Read FRESH = InsightCalculations.Read.of(RefreshMode.FORCE_BLOCKING);
    /** Dashboards are read as a viewer with no user: tiles look the same to everyone. */
    private static final long ANONYMOUS = 0;

    private final ProjectChanges changes;
    private final ProjectRepository projects;
    private final DashboardRepository dashboards;
    private final InsightCalculations calculations;

    public DashboardViews(final ProjectChanges changes, final ProjectRepository projects, final DashboardRepository dashboards,
                          final InsightCalculations calculations) {
        this.changes = changes;
        this.projects = projects;
        this.dashboards = dashboards;
        this.calculations = calculations;
    }

    @Override
    public Future<Long> version(final long projectId) {
        return changes.version(projectId, QueryControl.within(VERSION_TIMEOUT));
    }

    @Override
    public Future<Optional<LiveDashboards.View>> view(final long projectId, final long dashboardId) {
        return projects.byId(projectId).compose(project -> project.isEmpty() ? Future.succeededFuture(Optional.empty())
                : dashboards.find(projectId, ANONYMOUS, dashboardId).compose(found -> found.filter(d -> !d.deleted())
                        .map(d -> tiles(project.get(), d).map(Optional::of))
                        .orElseGet(() -> Future.succeededFuture(Optional.empty()))));
    }

    /** The dashboard's tiles, calculated side by side ({@link TileCalculations}: a few at a time). */
    private Future<LiveDashboards.View> tiles(final Project project, final Dashboard dashboard) {
        final InsightCalculations.Read read = FRESH.onDashboard(dashboard.id());
        return TileCalculations.each(dashboard.tiles(), tile -> tile(project, dashboard, tile, read))
                .map(tiles -> new LiveDashboards.View(dashboard.id(), dashboard.name(), List.copyOf(tiles)));
    }

    private Future<LiveDashboards.Tile> tile(final Project project, final Dashboard dashboard, final Dashboard.Tile tile,
                                              final InsightCalculations.Read read) {
        if (tile.insight() == null) {
            final ObjectNode data = base(dashboard, tile);
            data.put("kind", "text");
            data.put("text", tile.text() == null ? "" : tile.text().path("body").asText(""));
            return Future.succeededFuture(LiveDashboards.Tile.of(tile.id(), data));
        }
        final Insight shown = DashboardOverride.apply(tile.insight(), dashboard.filters());
        return calculations.withResults(project, shown, read)
                .map(calculated -> LiveDashboards.Tile.of(tile.id(), data(dashboard, tile, calculated, null)))
                .recover(e -> {
                    if (e instanceof ApiError error && error.status() != 503) {
                        return Future.succeededFuture(LiveDashboards.Tile.of(tile.id(), data(dashboard, tile, shown, error.detail())));
                    }
                    return Future.failedFuture(e);
                });
    }

    /**
     * A tile's event data: what a page needs to draw it ({@code kind} trend or funnel, the {@code display} and funnel
     * viz type of its effective query) and PostHog's {@code result} and {@code last_refresh} as the API shows them.
     */
    private static ObjectNode data(final Dashboard dashboard, final Dashboard.Tile tile, final Insight insight, final String failure) {
        final ObjectNode data = base(dashboard, tile);
        final InsightCalculation calculation = InsightCalculation.of(insight.filters(), insight.query());
        final boolean funnel = calculation.kind() == InsightCalculation.Kind.FUNNEL;
        data.put("insight_id", insight.id());
        data.put("short_id", insight.shortId());
        data.put("name", insight.name() != null && !insight.name().isBlank() ? insight.name() : insight.derivedName());
        data.put("kind", calculation.kind().name().toLowerCase(Locale.ROOT));
        data.put("display", calculation.filter() == null ? null
                : calculation.filter().path("display").asText(funnel ? "FunnelViz" : "ActionsLineGraph"));
        if (funnel) {
            data.put("funnel_viz_type", calculation.filter().path("funnel_viz_type").asText("steps"));
        }
        data.set("result", failure == null ? insight.result() : null);
        data.put("last_refresh", failure == null ? insight.lastRefresh() : null);
        final String error = failure != null ? failure
                : insight.queryStatus() != null && insight.queryStatus().path("error").asBoolean(false)
                        ? insight.queryStatus().path("error_message").asText(null) : null;
        data.put("error", error);
        return data;
    }

    private static ObjectNode base(final Dashboard dashboard, final Dashboard.Tile tile) {
        final ObjectNode data = Json.mapper().createObjectNode();
        data.put("dashboard_id", dashboard.id());
        data.put("tile_id", tile.id());
        data.putNull("insight_id");
        return data;
    }
}
