package dev.eddy.gateway.activity;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The paging of PostHog's per-resource activity routes ({@code .../insights/activity}, {@code .../insights/:id/activity}):
 * {@code limit} (default 10) entries on 1-based page {@code page}, answered as PostHog's {@code activity_page_response},
 * {@code {results, next, previous, total_count}} with {@code next} and {@code previous} the request's URL at the
 * neighbouring page (null at the ends).
 *
 * @param limit entries per page
 * @param page  the page, from 1
 */
public record ActivityPage(int limit, int page) {
    static final int DEFAULT_LIMIT = 10;
    /** Bounds a page's size as every list of the API is bounded. */
    static final int MAX_LIMIT = Pagination.MAX_LIMIT;
    /** Keeps {@code (page - 1) * limit} an int. */
    private static final int MAX_PAGE = Integer.MAX_VALUE / MAX_LIMIT;

    /** {@code limit} and {@code page} of the request; a value that is not a positive integer is a 400 naming it. */
    public static ActivityPage of(final RoutingContext ctx) {
        return new ActivityPage(Params.intParam(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT), Params.intParam(ctx, "page", 1, 1, MAX_PAGE));
    }

    public int offset() {
        return (page - 1) * limit;
    }

    /** The envelope of {@code found}; a page past the last (but the first) is a 404, as Django's paginator refuses it. */
    public Map<String, Object> envelope(final RoutingContext ctx, final ActivityLog.Page found) {
        if (page > 1 && offset() >= found.total()) {
            throw ApiError.notFound("Invalid page.");
        }
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("results", found.entries());
        body.put("next", (long) page * limit < found.total() ? url(ctx, page + 1) : null);
        body.put("previous", page > 1 ? url(ctx, page - 1) : null);
        body.put("total_count", found.total());
        return body;
    }

    private String url(final RoutingContext ctx, final int to) {
        final Map<String, String> set = new LinkedHashMap<>();
        set.put("page", Integer.toString(to));
        set.put("limit", Integer.toString(limit));
        return Pagination.url(ctx, set);
    }
}
