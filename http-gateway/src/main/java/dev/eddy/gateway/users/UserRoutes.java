package dev.eddy.gateway.users;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Responses;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** {@code GET /api/users/@me/}: the user behind the personal API key (scope {@code user:read}). */
public final class UserRoutes {
    public static final String READ = "user:read";

    private final UserRepository users;

    public UserRoutes(final UserRepository users) {
        this.users = users;
    }

    public void mount(final Router router) {
        router.get("/api/users/@me").handler(PersonalApiKeyAuth.require(READ)).handler(this::me);
    }

    private void me(final RoutingContext ctx) {
        users.byId(PersonalApiKeyAuth.principal(ctx).userId())
                .onSuccess(user -> user.ifPresentOrElse(u -> Responses.json(ctx, 200, u),
                        () -> ctx.fail(ApiError.notFound("Not found."))))
                .onFailure(ctx::fail);
    }
}
