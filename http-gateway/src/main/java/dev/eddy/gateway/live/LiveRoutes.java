package dev.eddy.gateway.live;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.dashboards.DashboardRepository;
import dev.eddy.gateway.dashboards.DashboardRoutes;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.sharing.SharedLinks;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The live dashboard streams (Server-Sent Events, see {@link LiveDashboards}): {@code GET
 * /api/projects/:project_id/dashboards/:id/stream} with a personal API key allowed {@code dashboard:read} on the
 * project, and {@code GET /shared/:access_token/stream} for a dashboard shared publicly, only while its sharing is
 * enabled. Both answer errors as the dashboard routes do (401, 403, 404) before the stream starts, 503 when this
 * instance serves as many streams as it may; a stream whose key is revoked or whose sharing is disabled ends within
 * {@link LiveDashboards#KEEP_ALIVE}.
 */
public final class LiveRoutes {
    private static final String API = "/api/projects/:project_id/dashboards/:id/stream";
    private static final String SHARED = "/shared/:access_token/stream";

    private final ProjectRepository projects;
    private final DashboardRepository dashboards;
    private final SharedLinks links;
    private final PersonalApiKeyAuth auth;
    private final LiveDashboards live;

    public LiveRoutes(final ProjectRepository projects, final DashboardRepository dashboards, final SharedLinks links,
                      final PersonalApiKeyAuth auth, final LiveDashboards live) {
        this.projects = projects;
        this.dashboards = dashboards;
        this.links = links;
        this.auth = auth;
        this.live = live;
    }

    public void mount(final Router router) {
        router.get(API).handler(PersonalApiKeyAuth.require(DashboardRoutes.READ)).handler(this::dashboard);
        router.get(SHARED).handler(this::shared);
    }

    private void dashboard(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Principal who = PersonalApiKeyAuth.principal(ctx);
        final Supplier<Future<Optional<Principal>>> again = auth.recheck(ctx);
        projects.require(who, projectId)
                .compose(p -> dashboards.find(projectId, who.userId(), id))
                .map(found -> found.filter(d -> !d.deleted())).compose(ApiError::orNotFound)
                .onSuccess(d -> open(ctx, projectId, id, () -> again.get().compose(key -> key.isPresent() && key.get().allows(DashboardRoutes.READ)
                        ? projects.find(key.get(), projectId).map(Optional::isPresent) : Future.succeededFuture(false))))
                .onFailure(ctx::fail);
    }

    private void shared(final RoutingContext ctx) {
        final String token = ctx.pathParam("access_token");
        links.openDashboard(token)
                .onSuccess(o -> open(ctx, o.sharing().projectId(), o.dashboard().id(), () -> links.openDashboard(token)
                        .map(now -> now.dashboard().id() == o.dashboard().id())
                        // Only a definite "not shared" ends the stream; a database hiccup leaves it open.
                        .recover(e -> e instanceof ApiError error && error.status() == 404
                                ? Future.succeededFuture(false) : Future.failedFuture(e))))
                .onFailure(ctx::fail);
    }

    private void open(final RoutingContext ctx, final long projectId, final long dashboardId, final Supplier<Future<Boolean>> allowed) {
        final EventStream stream = new EventStream(ctx.response(), ctx.vertx().getOrCreateContext());
        final Optional<LiveDashboards.Subscription> subscription = live.subscribe(projectId, dashboardId, stream, allowed);
        if (subscription.isEmpty()) {
            ctx.fail(ApiError.unavailable("too_many_streams", "This instance serves as many live dashboards as it may; retry shortly.", 5));
            return;
        }
        ctx.response().closeHandler(v -> subscription.get().cancel());
        ctx.response().endHandler(v -> subscription.get().cancel());
        if (ctx.response().closed()) {
            // Gone while its dashboard was looked up: no close event will come.
            subscription.get().cancel();
            return;
        }
        stream.start();
    }
}
