package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.insights.Insight;
import dev.eddy.gateway.insights.InsightCalculation;
import dev.eddy.gateway.insights.InsightCalculations;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;

/**
 * PostHog's Query API, scope {@code query:read}: {@code POST /api/projects/:project_id/query/} answers a query node,
 * {@code GET .../query/:query_id/} a calculation's status, {@code DELETE .../query/:query_id/} cancels it.
 *
 * <p>The insight nodes ({@code TrendsQuery}, {@code FunnelsQuery}, {@code RetentionQuery}, {@code StickinessQuery},
 * {@code LifecycleQuery}, {@code PathsQuery}, alone or in an {@code InsightVizNode}) are calculated by the engine
 * behind saved insights ({@link InsightCalculations}), with its cache, refresh modes and background calculations:
 * one engine, two front doors. The answer is PostHog's query response ({@code results}, {@code is_cached},
 * {@code last_refresh}, {@code cache_key}, {@code query_status}, ...), {@code 202} while a background calculation
 * it started runs. {@code ActorsQuery} lists persons and {@code EventsQuery} events ({@link ListQueries}). HogQL
 * ({@code HogQLQuery}) is refused with a {@code 400} naming it: Eddy has no SQL engine.
 */
public final class QueryRoutes {
    public static final String READ = "query:read";
    private static final String BASE = "/api/projects/:project_id/query";
    private static final Set<String> HOGQL = Set.of("HogQLQuery", "HogQLMetadata", "HogQLAutocomplete", "HogQLASTQuery");

    private final ProjectRepository projects;
    private final InsightCalculations calculations;
    private final ListQueries lists;

    public QueryRoutes(final ProjectRepository projects, final InsightCalculations calculations, final ListQueries lists) {
        this.projects = projects;
        this.calculations = calculations;
        this.lists = lists;
    }

    public void mount(final Router router) {
        router.post(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::query);
        router.get(BASE + "/:query_id").handler(PersonalApiKeyAuth.require(READ)).handler(this::status);
        router.delete(BASE + "/:query_id").handler(PersonalApiKeyAuth.require(READ)).handler(this::cancel);
    }

    private void query(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final QueryRequest request = QueryRequest.parse(Body.object(ctx.body() == null ? null : ctx.body().asString()));
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> answer(project, request))
                .onSuccess(body -> Responses.json(ctx, running(body) ? 202 : 200, body))
                .onFailure(ctx::fail);
    }

    private Future<ObjectNode> answer(final Project project, final QueryRequest request) {
        final String kind = request.kind();
        if (InsightCalculation.calculates(kind)) {
            final InsightCalculation calculation = InsightCalculation.of(null, request.node());
            return calculations.results(project, null, calculation,
                            new InsightCalculations.Read(request.mode(), null, request.clientQueryId(), false))
                    .map(results -> insightResponse(results, InsightCalculations.cacheKey(project.id(), null, calculation)));
        }
        return switch (kind) {
            case "ActorsQuery" -> lists.actors(project, request.node());
            case "EventsQuery" -> lists.events(project, request.node());
            default -> Future.failedFuture(HOGQL.contains(kind)
                    ? ApiError.badRequest("unsupported_query", kind + " is not supported by Eddy: it has no SQL (HogQL) engine. Ask with "
                    + "a TrendsQuery, FunnelsQuery, RetentionQuery, StickinessQuery, LifecycleQuery, PathsQuery, EventsQuery or "
                    + "ActorsQuery.", "query")
                    : ApiError.badRequest("unsupported_query", "Queries of kind '" + kind + "' are not supported by Eddy.", "query"));
        };
    }

    /** PostHog's {@code GET /query/:id/}: {@code {query_status}}, 202 while running, 200 done, 400 failed. */
    private void status(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final String id = ctx.pathParam("query_id");
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> calculations.status(projectId, id))
                .map(found -> found.orElseThrow(() -> ApiError.notFound("Query " + id + " not found.")))
                .onSuccess(status -> {
                    final ObjectNode body = Json.mapper().createObjectNode();
                    body.set("query_status", status);
                    final int code = status.path("error").asBoolean() ? 400 : status.path("complete").asBoolean() ? 200 : 202;
                    Responses.json(ctx, code, body);
                })
                .onFailure(ctx::fail);
    }

    /** PostHog's {@code DELETE /query/:id/}: cancels a running calculation and forgets its status; 200 with a message. */
    private void cancel(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final String id = ctx.pathParam("query_id");
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> calculations.cancelAndForget(projectId, id))
                .map(cancellation -> switch (cancellation) {
                    case CANCELLED -> "Query cancelled";
                    case ALREADY_COMPLETE -> "Query already complete";
                    case UNKNOWN -> "Query not found";
                })
                .onSuccess(message -> Responses.json(ctx, 200, Json.mapper().createObjectNode().put("message", message)))
                .onFailure(ctx::fail);
    }

    /** PostHog's response of an insight query runner. */
    private static ObjectNode insightResponse(final Insight.Results r, final String cacheKey) {
        final ObjectNode body = Json.mapper().createObjectNode();
        body.set("results", r.result());
        body.put("is_cached", r.isCached());
        body.put("last_refresh", r.lastRefresh());
        body.put("next_allowed_client_refresh", r.nextAllowedClientRefresh());
        body.put("cache_target_age", r.cacheTargetAge());
        body.put("cache_key", cacheKey);
        body.put("timezone", r.timezone());
        body.set("query_status", r.queryStatus());
        body.putNull("hogql");
        body.putNull("columns");
        body.putNull("types");
        body.putNull("error");
        body.putArray("timings");
        return body;
    }

    private static boolean running(final JsonNode body) {
        final JsonNode status = body.get("query_status");
        return status != null && status.isObject() && !status.path("complete").asBoolean(true);
    }
}
