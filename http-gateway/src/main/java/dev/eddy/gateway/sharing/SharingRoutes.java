package dev.eddy.gateway.sharing;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.dashboards.Dashboard;
import dev.eddy.gateway.dashboards.DashboardRepository;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.insights.DashboardOverride;
import dev.eddy.gateway.insights.InsightCalculations;
import dev.eddy.gateway.insights.InsightRepository;
import dev.eddy.gateway.projects.ProjectRepository;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;

/**
 * Sharing of dashboards and insights: {@code GET/PATCH .../sharing/} (the configuration, created disabled on first
 * read; PATCH {@code enabled}), {@code POST .../sharing/refresh/} (a new access token), and the public
 * {@code GET /shared/:access_token} (the shared dashboard or insight, read-only, only while enabled). A public viewer
 * sees the results the cache holds (a dashboard's tiles with its filters applied) and never starts a calculation; a
 * browser opening a shared dashboard gets the page that draws it with fresh results, live ({@link SharedPage}, fed by
 * {@code /shared/:access_token/stream}).
 */
public final class SharingRoutes {
    public static final String READ = "sharing_configuration:read";
    public static final String WRITE = "sharing_configuration:write";
    private static final String DASHBOARD = "/api/projects/:project_id/dashboards/:id/sharing";
    private static final String INSIGHT = "/api/projects/:project_id/insights/:id/sharing";

    private final ProjectRepository projects;
    private final DashboardRepository dashboards;
    private final InsightRepository insights;
    private final SharingRepository sharing;
    private final InsightCalculations calculations;
    private final SharedLinks links;
    private final SharedPage page;

    public SharingRoutes(final ProjectRepository projects, final DashboardRepository dashboards, final InsightRepository insights,
                         final SharingRepository sharing, final InsightCalculations calculations, final SharedPage page) {
        this.projects = projects;
        this.dashboards = dashboards;
        this.insights = insights;
        this.sharing = sharing;
        this.calculations = calculations;
        this.links = new SharedLinks(sharing, dashboards, insights);
        this.page = page;
    }

    public void mount(final Router router) {
        router.get(DASHBOARD).handler(PersonalApiKeyAuth.require(READ)).handler(ctx -> respond(ctx, dashboardSharing(ctx, false)));
        router.patch(DASHBOARD).handler(PersonalApiKeyAuth.require(WRITE))
                .handler(ctx -> respond(ctx, enabled(ctx, dashboardSharing(ctx, true))));
        router.post(DASHBOARD + "/refresh").handler(PersonalApiKeyAuth.require(WRITE))
                .handler(ctx -> respond(ctx, dashboardSharing(ctx, true).compose(sharing::refresh)));
        router.get(INSIGHT).handler(PersonalApiKeyAuth.require(READ)).handler(ctx -> respond(ctx, insightSharing(ctx)));
        router.patch(INSIGHT).handler(PersonalApiKeyAuth.require(WRITE)).handler(ctx -> respond(ctx, enabled(ctx, insightSharing(ctx))));
        router.post(INSIGHT + "/refresh").handler(PersonalApiKeyAuth.require(WRITE))
                .handler(ctx -> respond(ctx, insightSharing(ctx).compose(sharing::refresh)));
        page.mountAssets(router);
        router.get("/shared/:access_token").handler(this::shared);
    }

    private void respond(final RoutingContext ctx, final Future<SharingRepository.Sharing> result) {
        result.onSuccess(s -> Responses.json(ctx, 200, s)).onFailure(ctx::fail);
    }

    private Future<SharingRepository.Sharing> enabled(final RoutingContext ctx, final Future<SharingRepository.Sharing> config) {
        final Body body = Body.of(ctx);
        if (!body.has("enabled")) {
            return config;
        }
        final boolean enabled = body.bool("enabled");
        return config.compose(s -> sharing.setEnabled(s, enabled));
    }

    private Future<SharingRepository.Sharing> dashboardSharing(final RoutingContext ctx, final boolean write) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Principal who = PersonalApiKeyAuth.principal(ctx);
        return projects.require(who, projectId)
                .compose(p -> dashboards.find(projectId, who.userId(), id))
                .map(found -> found.filter(d -> !d.deleted())).compose(ApiError::orNotFound)
                .compose(d -> write && !d.canEdit()
                        ? Future.failedFuture(ApiError.forbidden("permission_denied", "You don't have edit permissions for this dashboard."))
                        : sharing.ofDashboard(projectId, d.id()));
    }

    private Future<SharingRepository.Sharing> insightSharing(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        return projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(p -> insights.find(projectId, id))
                .map(found -> found.filter(i -> !i.deleted())).compose(ApiError::orNotFound)
                .compose(i -> sharing.ofInsight(projectId, i.id()));
    }

    /**
     * The shared object as JSON; for a dashboard opened by a browser (its {@code Accept} prefers HTML), the page that
     * draws it live ({@link SharedPage}).
     */
    private void shared(final RoutingContext ctx) {
        final boolean html = SharedPage.prefersHtml(ctx.request().getHeader(HttpHeaders.ACCEPT));
        ctx.response().putHeader(HttpHeaders.VARY, HttpHeaders.ACCEPT);
        links.open(ctx.pathParam("access_token")).onSuccess(opened -> {
            if (opened.dashboard() != null && html) {
                page.send(ctx);
            } else if (opened.dashboard() != null) {
                Responses.json(ctx, 200, Map.of("dashboard", publicForm(withCachedResults(opened.sharing().projectId(), opened.dashboard()))));
            } else {
                Responses.json(ctx, 200, Map.of("insight", calculations.cachedOnly(opened.sharing().projectId(), opened.insight())));
            }
        }).onFailure(ctx::fail);
    }

    private Dashboard withCachedResults(final long projectId, final Dashboard d) {
        return d.withTiles(d.tiles().stream().map(t -> t.insight() == null ? t
                : t.showing(calculations.cachedOnly(projectId, DashboardOverride.apply(t.insight(), d.filters())))).toList());
    }

    /** What a public viewer sees of a dashboard: its full form without who made it. */
    private static Map<String, Object> publicForm(final Dashboard d) {
        final Map<String, Object> form = d.fullForm();
        form.put("created_by", null);
        return form;
    }
}
