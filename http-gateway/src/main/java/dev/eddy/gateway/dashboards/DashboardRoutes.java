package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.db.FieldValue;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.insights.DashboardOverride;
import dev.eddy.gateway.insights.InsightCalculations;
import dev.eddy.gateway.insights.RefreshMode;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.projects.ProjectScoped;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * PostHog's dashboards API: list (list form; {@code tags}, {@code creation_mode} and {@code exclude_generated}
 * filters), create (201; {@code use_dashboard} duplicates, {@code duplicate_tiles} copies the tiles' insights and texts),
 * retrieve and update (full form with tiles; {@code tiles} writes text cards, colours, layouts and tile removals), soft
 * delete by {@code deleted: true} (with {@code delete_insights}), DELETE refused with 405, and {@code move_tile}. Insight tiles show their insight with the dashboard's filters applied and its computed
 * fields: for the {@code refresh} mode asked on retrieve (PostHog's default {@code force_cache}, the cache only), from
 * the cache after writes. A tile whose calculation fails shows the failure in its insight's {@code query_status}.
 * A dashboard retrieved is told to {@link Viewed} (which keeps it fresh for a while: live dashboards).
 */
public final class DashboardRoutes {
    /** Told of every dashboard retrieved. */
    @FunctionalInterface
    public interface Viewed {
        void viewed(long projectId, long dashboardId);
    }

    public static final String READ = "dashboard:read";
    public static final String WRITE = "dashboard:write";
    /** Writes answer what the cache holds for the tiles, as PostHog's default {@code force_cache}. */
    private static final InsightCalculations.Read CACHED = InsightCalculations.Read.of(RefreshMode.FORCE_CACHE);
    private static final String BASE = "/api/projects/:project_id/dashboards";
    private static final int MAX_NAME = 400;

    private final ProjectRepository projects;
    private final DashboardRepository dashboards;
    private final InsightCalculations calculations;
    private final Viewed viewed;

    public DashboardRoutes(final ProjectRepository projects, final DashboardRepository dashboards, final InsightCalculations calculations,
                           final Viewed viewed) {
        this.projects = projects;
        this.dashboards = dashboards;
        this.calculations = calculations;
        this.viewed = viewed;
    }

    public void mount(final Router router) {
        router.get(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.post(BASE + "/create_from_template_json").handler(PersonalApiKeyAuth.require(WRITE))
                .handler(this::createFromTemplateJson);
        router.patch(BASE + "/:id/move_tile").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::moveTile);
        router.get(BASE + "/:id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.patch(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::update);
        router.delete(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE))
                .handler(ProjectScoped.deleteRefused(projects));
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        final List<String> tags = ctx.queryParams().getAll("tags").stream().filter(t -> !t.isEmpty()).toList();
        final String mode = ctx.queryParams().get("creation_mode");
        final DashboardRepository.Filter filter = new DashboardRepository.Filter(tags, mode == null || mode.isEmpty() ? null : mode,
                "true".equals(ctx.queryParams().get("exclude_generated")));
        projects.require(principal(ctx), projectId)
                .compose(p -> dashboards.list(projectId, principal(ctx).userId(), filter, page.limit(), page.offset()))
                .onSuccess(result -> Responses.json(ctx, 200, page.envelope(ctx, result.total(),
                        result.dashboards().stream().map(Dashboard::listForm).toList())))
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Body body = Body.of(ctx);
        final Map<String, FieldValue> fields = fields(body);
        final Optional<Long> copyFrom = body.has("use_dashboard") ? Optional.ofNullable(body.integer("use_dashboard", true))
                : Optional.empty();
        final boolean duplicateTiles = body.has("duplicate_tiles") && body.bool("duplicate_tiles");
        final String templateName = body.has("use_template") ? body.string("use_template", MAX_NAME) : null;
        final Optional<Template> template = templateName == null || templateName.isEmpty() ? Optional.empty()
                : Optional.of(Template.builtIn(templateName).orElseThrow(() -> ApiError.badRequest("invalid_input",
                        "Unknown dashboard template '" + templateName + "'.", "use_template")));
        projects.require(principal(ctx), projectId)
                .compose(p -> (template.isPresent()
                        ? dashboards.createFromTemplate(projectId, principal(ctx).userId(), template.get())
                                .compose(d -> fields.isEmpty() ? Future.succeededFuture(d)
                                        : dashboards.update(projectId, principal(ctx).userId(), d.id(), fields, List.of(), false)
                                                .map(Optional::get))
                        : dashboards.create(projectId, principal(ctx).userId(), fields, copyFrom, duplicateTiles))
                        .compose(d -> withResults(p, d, CACHED)))
                .onSuccess(d -> Responses.json(ctx, 201, d.fullForm()))
                .onFailure(ctx::fail);
    }

    /** {@code {"template": {template JSON}}}: a dashboard with a new insight per insight tile (200, the dashboard). */
    private void createFromTemplateJson(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Template template = Template.parse(Body.of(ctx).raw("template"), "template");
        projects.require(principal(ctx), projectId)
                .compose(p -> dashboards.createFromTemplate(projectId, principal(ctx).userId(), template)
                        .compose(d -> withResults(p, d, CACHED)))
                .onSuccess(d -> Responses.json(ctx, 200, d.fullForm()))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final InsightCalculations.Read read = InsightCalculations.Read.of(ctx.queryParams().get("refresh"),
                ctx.queryParams().get("client_query_id"));
        projects.require(principal(ctx), projectId)
                .compose(p -> dashboards.find(projectId, principal(ctx).userId(), id)
                        .map(found -> found.filter(d -> !d.deleted()))
                        .compose(ApiError::orNotFound)
                        .compose(d -> withResults(p, d, read)))
                .onSuccess(d -> {
                    Responses.json(ctx, 200, d.fullForm());
                    viewed.viewed(projectId, id);
                })
                .onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Body body = Body.of(ctx);
        final Map<String, FieldValue> fields = fields(body);
        final boolean deleteInsights = body.has("delete_insights") && body.bool("delete_insights");
        final List<TileWrite> tiles = body.has("tiles") ? TileWrite.parse(body.raw("tiles")) : List.of();
        projects.require(principal(ctx), projectId)
                .compose(p -> dashboards.update(projectId, principal(ctx).userId(), id, fields, tiles, deleteInsights)
                        .compose(ApiError::orNotFound)
                        .compose(d -> withResults(p, d, CACHED)))
                .onSuccess(d -> Responses.json(ctx, 200, d.fullForm()))
                .onFailure(ctx::fail);
    }

    /** {@code {"tile": {"id": N}, "toDashboard": M}}. */
    private void moveTile(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Body body = Body.of(ctx);
        final JsonNode tile = body.object("tile", false);
        if (!tile.path("id").isIntegralNumber()) {
            throw ApiError.badRequest("invalid_input", "'tile.id' must be an integer.", "tile");
        }
        final long to = body.integer("toDashboard", false);
        projects.require(principal(ctx), projectId)
                .compose(p -> dashboards.moveTile(projectId, principal(ctx).userId(), id, tile.get("id").asLong(), to)
                        .compose(ApiError::orNotFound)
                        .compose(d -> withResults(p, d, CACHED)))
                .onSuccess(d -> Responses.json(ctx, 200, d.fullForm()))
                .onFailure(ctx::fail);
    }

    /**
     * The dashboard with each insight tile's insight as shown on it: the dashboard's filters applied, with its computed
     * fields; one tile at a time (a dashboard can hold many).
     */
    private Future<Dashboard> withResults(final Project project, final Dashboard dashboard, final InsightCalculations.Read read) {
        final InsightCalculations.Read onIt = read.onDashboard(dashboard.id()).failingAsStatus();
        return TileCalculations.each(dashboard.tiles(), tile -> tile.insight() == null ? Future.succeededFuture(tile)
                : calculations.withResults(project, DashboardOverride.apply(tile.insight(), dashboard.filters()), onIt).map(tile::showing))
                .map(dashboard::withTiles);
    }

    /** The writable fields of a create or update body, checked. */
    static Map<String, FieldValue> fields(final Body body) {
        final Map<String, FieldValue> fields = new LinkedHashMap<>();
        if (body.has("name")) {
            final String name = body.string("name", MAX_NAME);
            fields.put("name", new FieldValue(Json.mapper().valueToTree(name), name));
        }
        if (body.has("description")) {
            final String description = Optional.ofNullable(body.string("description", 10_000)).orElse("");
            fields.put("description", new FieldValue(Json.mapper().valueToTree(description), description));
        }
        for (final String flag : List.of("pinned", "deleted")) {
            if (body.has(flag)) {
                final boolean value = body.bool(flag);
                fields.put(flag, new FieldValue(Json.mapper().valueToTree(value), value));
            }
        }
        if (body.has("tags")) {
            final List<String> tags = body.strings("tags").stream().map(String::trim).filter(t -> !t.isEmpty()).distinct().toList();
            fields.put("tags", new FieldValue(Json.mapper().valueToTree(tags), tags.toArray(String[]::new)));
        }
        if (body.has("restriction_level")) {
            final Long level = body.integer("restriction_level", false);
            if (level != Dashboard.CAN_VIEW && level != Dashboard.CAN_EDIT) {
                throw ApiError.badRequest("invalid_choice", "'restriction_level' must be 21 or 37.", "restriction_level");
            }
            fields.put("restriction_level", new FieldValue(Json.mapper().valueToTree(level), level.shortValue()));
        }
        for (final String object : List.of("filters", "variables")) {
            if (body.has(object)) {
                final JsonNode value = Optional.ofNullable(body.object(object, true)).orElse(Json.mapper().createObjectNode());
                fields.put(object, new FieldValue(value, Jsonb.bind(value)));
            }
        }
        return fields;
    }

    private static Principal principal(final RoutingContext ctx) {
        return PersonalApiKeyAuth.principal(ctx);
    }
}
