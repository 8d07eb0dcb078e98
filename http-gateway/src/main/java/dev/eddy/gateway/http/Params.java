package dev.eddy.gateway.http;

import io.vertx.ext.web.RoutingContext;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Typed reading of path and query parameters; a bad value is a 400 naming the parameter. */
public final class Params {
    private Params() {
    }

    public static int intParam(final RoutingContext ctx, final String name, final int fallback, final int min, final int max) {
        final String raw = ctx.queryParams().get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            final int value = Integer.parseInt(raw.trim());
            if (value < min || value > max) {
                throw ApiError.badRequest("invalid_input", "'" + name + "' must be between " + min + " and " + max + ".", name);
            }
            return value;
        } catch (final NumberFormatException e) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' must be an integer.", name);
        }
    }

    /** Where the project {@code @current} names for this request is kept, once resolved ({@code ProjectAddressing}). */
    public static final String CURRENT_PROJECT = "eddy.current-project";

    /**
     * A positive 64-bit id from the path; anything else is 404, as if the resource did not exist. A {@code project_id}
     * of {@code @current} (PostHog's) is the caller's current project, as resolved for the request.
     */
    public static long pathId(final RoutingContext ctx, final String name) {
        final String raw = ctx.pathParam(name);
        if ("@current".equals(raw) && "project_id".equals(name) && ctx.get(CURRENT_PROJECT) instanceof Long current) {
            return current;
        }
        try {
            final long id = Long.parseLong(raw);
            if (id > 0) {
                return id;
            }
        } catch (final NumberFormatException e) {
            // fall through
        }
        throw ApiError.notFound("Not found.");
    }

    static String urlEncode(final String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** A list's {@code search} parameter, or null when absent or blank. */
    public static String search(final RoutingContext ctx) {
        final String search = ctx.queryParams().get("search");
        return search == null || search.isBlank() ? null : search;
    }
}
