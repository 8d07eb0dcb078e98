package dev.eddy.gateway.activity;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * PostHog's project activity log, {@code GET /api/projects/:id/activity_log/}: where PostHog's clients read a
 * dashboard's history (PostHog has no {@code /dashboards/:id/activity} route), or any scope's. Filters {@code scope},
 * {@code scopes} (comma-separated), {@code item_id} and {@code user} (a uuid), newest first. With {@code page}, DRF's
 * page-number paging ({@code {count, next, previous, results}}); without, DRF's cursor paging ({@code {next, previous,
 * results}}, the next page at {@code next}); {@code page_size} 100 by default, at most 1,000, in both.
 */
public final class ActivityRoutes {
    public static final String READ = "activity_log:read";
    private static final String PATH = "/api/projects/:project_id/activity_log";
    private static final int DEFAULT_PAGE_SIZE = 100;
    private static final int MAX_PAGE_SIZE = 1000;
    /** Keeps an offset an int. */
    private static final int MAX_PAGE = Integer.MAX_VALUE / MAX_PAGE_SIZE;
    private static final String CURSOR_PREFIX = "o=";

    private final ProjectRepository projects;
    private final ActivityLog activity;

    public ActivityRoutes(final ProjectRepository projects, final ActivityLog activity) {
        this.projects = projects;
        this.activity = activity;
    }

    public void mount(final Router router) {
        router.get(PATH).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final ActivityLog.Query query = query(ctx);
        final int size = Params.intParam(ctx, "page_size", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
        final boolean numbered = ctx.queryParams().contains("page");
        final int page = Params.intParam(ctx, "page", 1, 1, MAX_PAGE);
        final int offset = numbered ? (page - 1) * size : cursor(ctx);
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(p -> activity.find(projectId, query, size, offset))
                .map(found -> numbered ? numbered(ctx, found, page, size) : cursored(ctx, found, offset, size))
                .onSuccess(body -> Responses.json(ctx, 200, body))
                .onFailure(ctx::fail);
    }

    private static ActivityLog.Query query(final RoutingContext ctx) {
        final String scope = blankToNull(ctx.queryParams().get("scope"));
        final String scopes = blankToNull(ctx.queryParams().get("scopes"));
        final String user = blankToNull(ctx.queryParams().get("user"));
        final UUID userId;
        try {
            userId = user == null ? null : UUID.fromString(user);
        } catch (final IllegalArgumentException e) {
            throw ApiError.badRequest("invalid", "Must be a valid UUID.", "user");
        }
        return new ActivityLog.Query(scope, scopes == null ? List.of()
                : Arrays.stream(scopes.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList(),
                blankToNull(ctx.queryParams().get("item_id")), userId);
    }

    /** DRF's page-number paging; a page past the last (but the first) is its 404. */
    private static Map<String, Object> numbered(final RoutingContext ctx, final ActivityLog.Page found, final int page, final int size) {
        if (page > 1 && (long) (page - 1) * size >= found.total()) {
            throw ApiError.notFound("Invalid page.");
        }
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("count", found.total());
        body.put("next", (long) page * size < found.total() ? link(ctx, "page", Integer.toString(page + 1), size) : null);
        body.put("previous", page > 1 ? link(ctx, "page", Integer.toString(page - 1), size) : null);
        body.put("results", found.entries());
        return body;
    }

    /** Cursor paging: the same entries on the same pages as DRF's, the position kept in an opaque {@code cursor}. */
    private static Map<String, Object> cursored(final RoutingContext ctx, final ActivityLog.Page found, final int offset,
                                                final int size) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("next", (long) offset + size < found.total() ? link(ctx, "cursor", encode(offset + size), size) : null);
        body.put("previous", offset > 0 ? link(ctx, "cursor", encode(Math.max(0, offset - size)), size) : null);
        body.put("results", found.entries());
        return body;
    }

    private static String link(final RoutingContext ctx, final String name, final String value, final int size) {
        final Map<String, String> set = new LinkedHashMap<>();
        set.put(name, value);
        set.put("page_size", Integer.toString(size));
        return Pagination.url(ctx, set);
    }

    private static String encode(final int offset) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString((CURSOR_PREFIX + offset).getBytes(StandardCharsets.US_ASCII));
    }

    /** The offset a {@code cursor} names (0 without one); one Eddy did not hand out is DRF's 404. */
    private static int cursor(final RoutingContext ctx) {
        final String cursor = blankToNull(ctx.queryParams().get("cursor"));
        if (cursor == null) {
            return 0;
        }
        try {
            final String decoded = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.US_ASCII);
            if (decoded.startsWith(CURSOR_PREFIX)) {
                final int offset = Integer.parseInt(decoded.substring(CURSOR_PREFIX.length()));
                if (offset >= 0) {
                    return offset;
                }
            }
        } catch (final IllegalArgumentException e) {
            // not one of ours: refused below
        }
        throw ApiError.notFound("Invalid cursor");
    }

    private static String blankToNull(final String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
