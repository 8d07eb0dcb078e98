package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.Params;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

/** Route steps shared by the resources that live inside a project. */
public final class ProjectScoped {
    private ProjectScoped() {
    }

    /**
     * Hard delete refused with 405 and no body (soft delete is {@code PATCH deleted=true}), once the path's project is
     * the caller's: another project's resources stay a 404.
     */
    public static Handler<RoutingContext> deleteRefused(final ProjectRepository projects) {
        return ctx -> projects.require(PersonalApiKeyAuth.principal(ctx), Params.pathId(ctx, "project_id"))
                .onSuccess(p -> ctx.response().setStatusCode(405).end())
                .onFailure(ctx::fail);
    }
}
