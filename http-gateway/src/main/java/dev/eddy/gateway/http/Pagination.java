package dev.eddy.gateway.http;

import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code limit}/{@code offset} paging with PostHog's envelope {@code {count, next, previous, results}}.
 *
 * @param limit  page size
 * @param offset index of the first result
 */
public record Pagination(int limit, int offset) {
    public static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1000;

    public static Pagination of(final RoutingContext ctx) {
        return new Pagination(
                Params.intParam(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
                Params.intParam(ctx, "offset", 0, 0, Integer.MAX_VALUE));
    }

    public Map<String, Object> envelope(final RoutingContext ctx, final long count, final List<?> results) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("count", count);
        body.put("next", offset + results.size() < count ? pageUrl(ctx, offset + limit) : null);
        body.put("previous", offset > 0 ? pageUrl(ctx, Math.max(0, offset - limit)) : null);
        body.put("results", results);
        return body;
    }

    private String pageUrl(final RoutingContext ctx, final int newOffset) {
        final Map<String, String> set = new LinkedHashMap<>();
        set.put("limit", Integer.toString(limit));
        set.put("offset", Integer.toString(newOffset));
        return url(ctx, set);
    }

    /** The request's absolute URL with the parameters in {@code set} (first, in their order) in place of the request's. */
    public static String url(final RoutingContext ctx, final Map<String, String> set) {
        final StringBuilder url = new StringBuilder(ctx.request().scheme()).append("://")
                .append(ctx.request().authority()).append(ctx.request().path());
        char separator = '?';
        for (final Map.Entry<String, String> param : set.entrySet()) {
            url.append(separator).append(Params.urlEncode(param.getKey())).append('=').append(Params.urlEncode(param.getValue()));
            separator = '&';
        }
        for (final Map.Entry<String, String> param : ctx.queryParams()) {
            if (!set.containsKey(param.getKey())) {
                url.append(separator).append(Params.urlEncode(param.getKey())).append('=').append(Params.urlEncode(param.getValue()));
                separator = '&';
            }
        }
        return url.toString();
    }
}
