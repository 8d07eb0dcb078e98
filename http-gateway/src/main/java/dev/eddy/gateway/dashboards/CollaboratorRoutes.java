package dev.eddy.gateway.dashboards;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.users.UserRepository;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;

/**
 * {@code /api/projects/:project_id/dashboards/:dashboard_id/collaborators/}: list (an array), add
 * ({@code user_uuid}, {@code level} 21 or 37; 201), remove by user uuid (204).
 */
public final class CollaboratorRoutes {
    private static final String BASE = "/api/projects/:project_id/dashboards/:dashboard_id/collaborators";

    private final ProjectRepository projects;
    private final DashboardRepository dashboards;
    private final Collaborators collaborators;
    private final UserRepository users;

    public CollaboratorRoutes(final ProjectRepository projects, final DashboardRepository dashboards,
                              final Collaborators collaborators, final UserRepository users) {
        this.projects = projects;
        this.dashboards = dashboards;
        this.collaborators = collaborators;
        this.users = users;
    }

    public void mount(final Router router) {
        router.get(BASE).handler(PersonalApiKeyAuth.require(DashboardRoutes.READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(DashboardRoutes.WRITE)).handler(this::add);
        router.delete(BASE + "/:user_uuid").handler(PersonalApiKeyAuth.require(DashboardRoutes.WRITE)).handler(this::remove);
    }

    private void list(final RoutingContext ctx) {
        dashboard(ctx).compose(d -> collaborators.list(d.id()))
                .onSuccess(list -> Responses.json(ctx, 200, list))
                .onFailure(ctx::fail);
    }

    private void add(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Body body = Body.of(ctx);
        final String rawUuid = body.string("user_uuid", 64);
        final UUID userUuid = uuid(rawUuid, "user_uuid");
        final Long level = body.integer("level", false);
        if (level != Dashboard.CAN_VIEW && level != Dashboard.CAN_EDIT) {
            throw ApiError.badRequest("invalid_choice", "'level' must be 21 (view) or 37 (edit).", "level");
        }
        dashboard(ctx).compose(d -> users.inProject(projectId, userUuid).compose(user -> user.isPresent()
                        ? collaborators.add(d, user.get(), level.intValue())
                        : Future.failedFuture(ApiError.badRequest("invalid_input", "No user with this uuid in the project.", "user_uuid"))))
                .onSuccess(c -> Responses.json(ctx, 201, c))
                .onFailure(ctx::fail);
    }

    private void remove(final RoutingContext ctx) {
        final UUID userUuid;
        try {
            userUuid = UUID.fromString(ctx.pathParam("user_uuid"));
        } catch (final IllegalArgumentException e) {
            throw ApiError.notFound("Not found.");
        }
        dashboard(ctx).compose(d -> collaborators.remove(d, userUuid))
                .onSuccess(removed -> {
                    if (removed) {
                        ctx.response().setStatusCode(204).end();
                    } else {
                        ctx.fail(ApiError.notFound("Not found."));
                    }
                })
                .onFailure(ctx::fail);
    }

    /** The path's dashboard as the caller sees it; 404 when it is not the caller's project's or is deleted. */
    private Future<Dashboard> dashboard(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "dashboard_id");
        final Principal who = PersonalApiKeyAuth.principal(ctx);
        return projects.require(who, projectId).compose(p -> dashboards.find(projectId, who.userId(), id))
                .map(found -> found.filter(d -> !d.deleted())).compose(ApiError::orNotFound);
    }

    private static UUID uuid(final String raw, final String field) {
        try {
            if (raw != null) {
                return UUID.fromString(raw);
            }
        } catch (final IllegalArgumentException e) {
            // reported below
        }
        throw ApiError.badRequest("invalid_input", "'" + field + "' must be a user's uuid.", field);
    }
}
