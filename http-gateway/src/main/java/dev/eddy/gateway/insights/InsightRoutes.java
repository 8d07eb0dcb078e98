package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.activity.ActivityPage;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.projects.ProjectScoped;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * PostHog's insights API: list (with PostHog's list parameters, {@link InsightListFilter}), create, retrieve, update
 * (soft delete with {@code deleted}), DELETE refused with 405, the activity log of one insight and of all,
 * {@code ?format=csv} on list, retrieve, create, update and {@code my_last_viewed}. Every insight answered carries
 * what the caller may do with it ({@link InsightAccess}) and its computed fields for the {@code refresh} mode asked
 * ({@link InsightCalculations}; create and update answer what the cache holds), or with {@code ?basic=true} (list and
 * retrieve) PostHog's basic form without results; {@code from_dashboard} shows it with that dashboard's filters;
 * {@code POST cancel} stops a running calculation by its {@code client_query_id}; {@code POST timing} records the
 * web app's time to see data ({@link ClientTiming}).
 */
public final class InsightRoutes {
    public static final String READ = "insight:read";
    public static final String WRITE = "insight:write";
    public static final String ACTIVITY_READ = "activity_log:read";
    private static final String BASE = "/api/projects/:project_id/insights";
    private static final int LAST_VIEWED = 5;
    /** Create and update answer what the cache holds for the insight, as PostHog's default {@code force_cache}. */
    private static final InsightCalculations.Read CACHED = InsightCalculations.Read.of(RefreshMode.FORCE_CACHE);

    private final ProjectRepository projects;
    private final InsightRepository insights;
    private final ActivityLog activity;
    private final BiFunction<Long, Long, Future<JsonNode>> dashboardFilters;
    private final InsightCalculations calculations;
    private final MeterRegistry registry;

    /**
     * @param dashboardFilters the filters of a dashboard of a project ({@code from_dashboard}); empty object when it
     *                         has none or does not exist
     * @param registry         where client timing reports are recorded
     */
    public InsightRoutes(final ProjectRepository projects, final InsightRepository insights, final ActivityLog activity,
                         final BiFunction<Long, Long, Future<JsonNode>> dashboardFilters, final InsightCalculations calculations,
                         final MeterRegistry registry) {
        this.projects = projects;
        this.insights = insights;
        this.activity = activity;
        this.dashboardFilters = dashboardFilters;
        this.calculations = calculations;
        this.registry = registry;
    }

    public void mount(final Router router) {
        router.get(BASE + "/activity").handler(PersonalApiKeyAuth.require(ACTIVITY_READ)).handler(this::allActivity);
        router.get(BASE + "/my_last_viewed").handler(PersonalApiKeyAuth.require(READ)).handler(this::myLastViewed);
        router.post(BASE + "/cancel").handler(PersonalApiKeyAuth.require(READ)).handler(this::cancel);
        router.post(BASE + "/timing").handler(PersonalApiKeyAuth.require(READ)).handler(this::timing);
        router.post(BASE + "/:id/viewed").handler(PersonalApiKeyAuth.require(READ)).handler(this::viewed);
        router.get(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.get(BASE + "/:id/activity").handler(PersonalApiKeyAuth.require(ACTIVITY_READ)).handler(this::activity);
        router.get(BASE + "/:id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.patch(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::update);
        router.delete(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE))
                .handler(ProjectScoped.deleteRefused(projects));
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        final boolean basic = basic(ctx);
        // One insight that cannot be calculated shows its failed status; it does not hide the others.
        final InsightCalculations.Read read = read(ctx).failingAsStatus();
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.list(projectId, principal(ctx).userId(), ctx.queryParams(), zone(p), page.limit(), page.offset())
                        .compose(result -> basic ? Future.succeededFuture(result)
                                : withResults(p, result.insights(), read).map(list -> new InsightRepository.Page(result.total(), list))))
                .onSuccess(result -> {
                    if (csv(ctx)) {
                        writeCsv(ctx, 200, result.insights());
                    } else {
                        Responses.json(ctx, 200, page.envelope(ctx, result.total(), basic
                                ? result.insights().stream().map(Insight::basicForm).toList() : result.insights()));
                    }
                })
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final InsightFields write = InsightFields.of(Body.of(ctx));
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.create(projectId, principal(ctx).userId(), write)
                        .compose(insight -> calculations.withResults(p, insight, CACHED)))
                .onSuccess(insight -> answer(ctx, 201, insight))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Long fromDashboard = optionalLong(ctx, "from_dashboard");
        final boolean basic = basic(ctx);
        final InsightCalculations.Read read = fromDashboard == null ? read(ctx) : read(ctx).onDashboard(fromDashboard);
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.find(projectId, principal(ctx).userId(), id)
                        // A soft-deleted insight is gone for readers; only an update (to restore it) still reaches it.
                        .map(found -> found.filter(i -> !i.deleted()))
                        .compose(ApiError::orNotFound)
                        .compose(insight -> basic || fromDashboard == null ? Future.succeededFuture(insight)
                                : dashboardFilters.apply(projectId, fromDashboard).map(filters -> DashboardOverride.apply(insight, filters)))
                        .compose(insight -> basic ? Future.succeededFuture(insight) : calculations.withResults(p, insight, read)))
                .onSuccess(insight -> {
                    if (basic && !csv(ctx)) {
                        Responses.json(ctx, 200, insight.basicForm());
                    } else {
                        answer(ctx, 200, insight);
                    }
                })
                .onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final InsightFields write = InsightFields.of(Body.of(ctx));
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.update(projectId, id, principal(ctx).userId(), write)
                        .compose(ApiError::orNotFound)
                        .compose(insight -> calculations.withResults(p, insight, CACHED)))
                .onSuccess(insight -> answer(ctx, 200, insight))
                .onFailure(ctx::fail);
    }

    private void viewed(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.find(projectId, id))
                .map(found -> found.filter(i -> !i.deleted())).compose(ApiError::orNotFound)
                .compose(i -> insights.viewed(projectId, id, principal(ctx).userId()))
                .onSuccess(v -> ctx.response().setStatusCode(200).end())
                .onFailure(ctx::fail);
    }

    /**
     * {@code {"client_query_id": id}}: cancels that calculation if it is running (PostHog kills the query whatever
     * its state, and so answers the same whether or not anything was running).
     */
    private void cancel(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Body body = Body.of(ctx);
        final JsonNode id = body.raw("client_query_id");
        if (id == null || id.isNull() || id.isContainerNode() || id.asText().isBlank()) {
            throw ApiError.badRequest("invalid_input", "Field is required.", "client_query_id");
        }
        projects.require(principal(ctx), projectId)
                .compose(p -> calculations.cancel(projectId, id.asText()))
                .onSuccess(cancelled -> ctx.response().setStatusCode(200).end())
                .onFailure(ctx::fail);
    }

    /** The insights with their computed fields, one calculation at a time (a page can ask for many). */
    private Future<List<Insight>> withResults(final Project project, final List<Insight> list, final InsightCalculations.Read read) {
        Future<List<Insight>> done = Future.succeededFuture(new ArrayList<>(list.size()));
        for (final Insight insight : list) {
            done = done.compose(acc -> calculations.withResults(project, insight, read).map(i -> {
                acc.add(i);
                return acc;
            }));
        }
        return done;
    }

    /** The {@code refresh} mode and {@code client_query_id} of a read. */
    private static InsightCalculations.Read read(final RoutingContext ctx) {
        return InsightCalculations.Read.of(ctx.queryParams().get("refresh"), ctx.queryParams().get("client_query_id"));
    }

    /** The web app's time to see data, recorded once the project is the caller's (a body that is no report is a 400). */
    private void timing(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final ClientTiming timing = ClientTiming.of(Body.of(ctx));
        projects.require(principal(ctx), projectId)
                .onSuccess(p -> {
                    timing.record(registry);
                    ctx.response().setStatusCode(200).end();
                })
                .onFailure(ctx::fail);
    }

    /** PostHog's "last 5 insights viewed by the current user, most recent first", in the basic form as PostHog answers. */
    private void myLastViewed(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.lastViewed(projectId, principal(ctx).userId(), LAST_VIEWED))
                .onSuccess(list -> {
                    if (csv(ctx)) {
                        writeCsv(ctx, 200, list);
                    } else {
                        Responses.json(ctx, 200, list.stream().map(Insight::basicForm).toList());
                    }
                })
                .onFailure(ctx::fail);
    }

    private void activity(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final ActivityPage page = ActivityPage.of(ctx);
        projects.require(principal(ctx), projectId)
                .compose(p -> insights.find(projectId, id)).compose(ApiError::orNotFound)
                .compose(i -> activity.find(projectId, ActivityLog.Query.ofItem(InsightRepository.SCOPE, id), page.limit(), page.offset()))
                .map(result -> page.envelope(ctx, result))
                .onSuccess(envelope -> Responses.json(ctx, 200, envelope))
                .onFailure(ctx::fail);
    }

    private void allActivity(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final ActivityPage page = ActivityPage.of(ctx);
        projects.require(principal(ctx), projectId)
                .compose(p -> activity.find(projectId, ActivityLog.Query.ofScope(InsightRepository.SCOPE), page.limit(), page.offset()))
                .map(result -> page.envelope(ctx, result))
                .onSuccess(envelope -> Responses.json(ctx, 200, envelope))
                .onFailure(ctx::fail);
    }

    private static boolean csv(final RoutingContext ctx) {
        return "csv".equalsIgnoreCase(ctx.queryParams().get("format"));
    }

    private static void writeCsv(final RoutingContext ctx, final int status, final List<Insight> rows) {
        ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "text/csv; charset=utf-8").end(InsightCsv.of(rows));
    }

    /** One insight, as CSV when {@code format=csv} asks for it. */
    private static void answer(final RoutingContext ctx, final int status, final Insight insight) {
        if (csv(ctx)) {
            writeCsv(ctx, status, List.of(insight));
        } else {
            Responses.json(ctx, status, insight);
        }
    }

    /** PostHog's {@code basic} parameter, read by its {@code str_to_bool}. */
    private static boolean basic(final RoutingContext ctx) {
        return InsightListFilter.truthy(ctx.queryParams().get("basic"));
    }

    /** The project's zone, for the list's dates; UTC if it names none Java knows. */
    private static ZoneId zone(final Project project) {
        try {
            return ZoneId.of(project.timezone());
        } catch (final DateTimeException e) {
            return ZoneOffset.UTC;
        }
    }

    private static Principal principal(final RoutingContext ctx) {
        return PersonalApiKeyAuth.principal(ctx);
    }

    private static Long optionalLong(final RoutingContext ctx, final String name) {
        final String raw = ctx.queryParams().get(name);
        if (raw == null || raw.isBlank()) {
            return null;
        }
        try {
            return Long.parseLong(raw.trim());
        } catch (final NumberFormatException e) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' must be an integer.", name);
        }
    }
}
