package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code GET/POST /api/projects/}, {@code GET/PATCH /api/projects/:id/} (scopes {@code project:read} and
 * {@code project:write}): a new project gets its own project API key ({@code api_token}); {@code name},
 * {@code timezone} (IANA), {@code week_start_day} (0 Sunday, 1 Monday) and {@code test_account_filters} are writable.
 */
public final class ProjectRoutes {
    public static final String READ = "project:read";
    public static final String WRITE = "project:write";

    private final ProjectRepository projects;

    public ProjectRoutes(final ProjectRepository projects) {
        this.projects = projects;
    }

    /** Routes after authentication: the router has run {@link PersonalApiKeyAuth} on /api/*. */
    public void mount(final Router router) {
        router.get("/api/projects").handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.get("/api/projects/:project_id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.post("/api/projects").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.patch("/api/projects/:project_id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::update);
    }

    private void list(final RoutingContext ctx) {
        final Pagination page = Pagination.of(ctx);
        projects.list(PersonalApiKeyAuth.principal(ctx), page.limit(), page.offset())
                .onSuccess(p -> Responses.json(ctx, 200, page.envelope(ctx, p.total(), p.projects())))
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        projects.create(PersonalApiKeyAuth.principal(ctx), ProjectFields.of(Body.of(ctx), true))
                .onSuccess(p -> Responses.json(ctx, 201, p))
                .onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        final long id = Params.pathId(ctx, "project_id");
        projects.update(PersonalApiKeyAuth.principal(ctx), id, ProjectFields.of(Body.of(ctx), false))
                .onSuccess(p -> Responses.json(ctx, 200, p))
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
