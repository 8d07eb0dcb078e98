package dev.eddy.gateway.projects;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;

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
        final Map<String, Object> fields = fields(Body.of(ctx));
        if (fields.get("name") == null) {
            throw ApiError.badRequest("required", "'name' is required.", "name");
        }
        projects.create(PersonalApiKeyAuth.principal(ctx), fields)
                .onSuccess(p -> Responses.json(ctx, 201, p))
                .onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        final long id = Params.pathId(ctx, "project_id");
        final Map<String, Object> fields = fields(Body.of(ctx));
        if (fields.containsKey("name") && fields.get("name") == null) {
            throw ApiError.badRequest("invalid_input", "'name' may not be null.", "name");
        }
        projects.update(PersonalApiKeyAuth.principal(ctx), id, fields)
                .onSuccess(p -> Responses.json(ctx, 200, p))
                .onFailure(ctx::fail);
    }

    /** The writable fields of a project body, checked, as column to bind value. */
    static Map<String, Object> fields(final Body body) {
        final Map<String, Object> fields = new LinkedHashMap<>();
        if (body.has("name")) {
            final String name = body.string("name", 200);
            fields.put("name", name == null || name.isBlank() ? null : name.trim());
        }
        if (body.has("timezone")) {
            final String zone = body.string("timezone", 64);
            try {
                fields.put("timezone", ZoneId.of(zone == null ? "" : zone).getId());
            } catch (final DateTimeException e) {
                throw ApiError.badRequest("invalid_choice", "'timezone' must be an IANA time zone such as Europe/Berlin.", "timezone");
            }
        }
        if (body.has("week_start_day")) {
            final Long day = body.integer("week_start_day", false);
            if (day != 0 && day != 1) {
                throw ApiError.badRequest("invalid_choice", "'week_start_day' must be 0 (Sunday) or 1 (Monday).", "week_start_day");
            }
            fields.put("week_start_day", day.shortValue());
        }
        if (body.has("test_account_filters")) {
            final JsonNode filters = body.raw("test_account_filters");
            if (!filters.isArray()) {
                throw ApiError.badRequest("invalid_input", "'test_account_filters' must be a list of property filters.",
                        "test_account_filters");
            }
            fields.put("test_account_filters", Jsonb.bind(filters));
        }
        return fields;
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
