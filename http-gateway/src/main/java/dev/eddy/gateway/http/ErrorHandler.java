package dev.eddy.gateway.http;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.DecodeException;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place failures become HTTP answers: {@link ApiError}s as they say, routing failures by their
 * status (404, 405, 413), PostgreSQL out of reach as a 503 to retry, anything else as a 500 that is logged and tells the
 * client nothing internal.
 */
public final class ErrorHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorHandler.class);
    private static final int DATABASE_RETRY_SECONDS = 5;

    private ErrorHandler() {
    }

    public static void handle(final RoutingContext ctx) {
        if (ctx.response().ended()) {
            return;
        }
        final ApiError error = toApiError(ctx);
        if (error.retryAfterSeconds() != null) {
            ctx.response().putHeader(HttpHeaders.RETRY_AFTER, String.valueOf(error.retryAfterSeconds()));
        }
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", error.type());
        body.put("code", error.code());
        body.put("detail", error.detail());
        body.put("attr", error.attr());
        Responses.json(ctx, error.status(), body);
    }

    private static ApiError toApiError(final RoutingContext ctx) {
        final Throwable failure = ctx.failure();
        if (failure instanceof ApiError api) {
            return api;
        }
        if (failure instanceof DecodeException) {
            return ApiError.badRequest("parse_error", "Malformed request body: not valid JSON.", null);
        }
        return switch (ctx.statusCode()) {
            case 400 -> ApiError.badRequest("invalid_input", "Malformed request.", null);
            case 401 -> ApiError.unauthenticated("not_authenticated", "Authentication credentials were not provided.");
            case 404 -> ApiError.notFound("Not found.");
            case 405 -> ApiError.methodNotAllowed("Method \"" + ctx.request().method() + "\" not allowed.");
            case 413 -> ApiError.payloadTooLarge();
            default -> {
                if (dev.eddy.gateway.db.Database.unavailable(failure)) {
                    LOG.warn("{} {}: PostgreSQL unavailable ({})", ctx.request().method(), ctx.request().path(), failure.toString());
                    yield ApiError.unavailable("database_unavailable", "The database is unavailable; retry shortly.", DATABASE_RETRY_SECONDS);
                }
                LOG.error("unhandled failure on {} {}", ctx.request().method(), ctx.request().path(), failure);
                yield ApiError.internal();
            }
        };
    }
}
