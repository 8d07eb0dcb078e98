package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** {@code GET /api/projects/} and {@code GET /api/projects/:id/}, scope {@code project:read}. */
public final class ProjectRoutes {
    public static final String READ = "project:read";

    private final ProjectRepository projects;

    public ProjectRoutes(final ProjectRepository projects) {
        this.projects = projects;
    }

    /** Routes after authentication: the router has run {@link PersonalApiKeyAuth} on /api/*. */
    public void mount(final Router router) {
        router.get("/api/projects").handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.get("/api/projects/:project_id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
    }

    private void list(final RoutingContext ctx) {
        final Pagination page = Pagination.of(ctx);
        projects.list(PersonalApiKeyAuth.principal(ctx), page.limit(), page.offset())
                .onSuccess(p -> Responses.json(ctx, 200, page.envelope(ctx, p.total(), p.projects())))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        final long id = Params.pathId(ctx, "project_id");
        projects.find(PersonalApiKeyAuth.principal(ctx), id)
                .onSuccess(p -> p.ifPresentOrElse(
                        project -> Responses.json(ctx, 200, project),
                        () -> ctx.fail(ApiError.notFound("Not found."))))
                .onFailure(ctx::fail);
    }
}
