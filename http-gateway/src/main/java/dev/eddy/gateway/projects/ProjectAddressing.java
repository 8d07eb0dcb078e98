package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Params;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * PostHog's other ways to name a project in a management path: {@code /api/environments/:id/...} (its newer name for
 * the same resources, answered as {@code /api/projects/:id/...}) and {@code @current} for the id. PostHog's
 * {@code @current} is the user's current team, a setting of its app; Eddy keeps none, so it is the first project (lowest
 * id) the key may see: the bootstrap project for the bootstrap key, the one project of a key scoped to one.
 */
public final class ProjectAddressing {
    private static final String ENVIRONMENTS = "/api/environments";
    private static final String PROJECTS = "/api/projects";

    private final ProjectRepository projects;

    public ProjectAddressing(final ProjectRepository projects) {
        this.projects = projects;
    }

    /** Mount first among the management routes: an environment's path is its project's from the start. */
    public static void mountEnvironments(final Router router) {
        router.routeWithRegex("^" + ENVIRONMENTS + "(/.*)?$").handler(ProjectAddressing::asProject);
    }

    /** Mount after authentication: {@code @current} resolved for the caller before any route reads the id. */
    public void mountCurrent(final Router router) {
        router.routeWithRegex("^" + PROJECTS + "/@current(/.*)?$").handler(this::resolveCurrent);
    }

    private static void asProject(final RoutingContext ctx) {
        final String query = ctx.request().query();
        ctx.reroute(PROJECTS + ctx.request().path().substring(ENVIRONMENTS.length()) + (query == null ? "" : "?" + query));
    }

    private void resolveCurrent(final RoutingContext ctx) {
        projects.firstVisible(PersonalApiKeyAuth.principal(ctx)).onSuccess(first -> {
            if (first.isEmpty()) {
                ctx.fail(ApiError.notFound("Not found."));
                return;
            }
            ctx.put(Params.CURRENT_PROJECT, first.get());
            ctx.next();
        }).onFailure(ctx::fail);
    }
}
