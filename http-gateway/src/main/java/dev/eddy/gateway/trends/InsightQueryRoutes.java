package dev.eddy.gateway.trends;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.util.Map;

/**
 * {@code POST /api/projects/:project_id/insights/trend}, {@code /insights/funnel}, {@code /insights/retention}, {@code /insights/path}
 * and {@code /insights/funnel/correlation} (a funnel's correlation with events and properties) (the query as a JSON body) and
 * {@code GET} (the same fields as query parameters, lists and objects JSON-encoded), scope {@code insight:read}:
 * PostHog's legacy query endpoints (the trend one also answers stickiness and lifecycles: {@code insight: STICKINESS} or
 * {@code LIFECYCLE}), answered {@code {result, timezone, last_refresh, is_cached, query_method, timings}}
 * (and {@code next} for trends), or with {@code format=csv} the result as PostHog's CSV export writes it.
 */
public final class InsightQueryRoutes {
    public static final String READ = "insight:read";

    private final ProjectRepository projects;
    private final InsightQueryService queries;

    public InsightQueryRoutes(final ProjectRepository projects, final InsightQueryService queries) {
        this.projects = projects;
        this.queries = queries;
    }

    public void mount(final Router router) {
        for (final String insight : new String[] {"trend", "funnel", "retention", "path", "funnel/correlation"}) {
            final String path = "/api/projects/:project_id/insights/" + insight;
            router.post(path).handler(PersonalApiKeyAuth.require(READ)).handler(ctx -> run(ctx, body(ctx), insight));
            router.get(path).handler(PersonalApiKeyAuth.require(READ)).handler(ctx -> run(ctx, fromParams(ctx.queryParams()), insight));
        }
    }

    private void run(final RoutingContext ctx, final JsonNode query, final String insight) {
        final long projectId = Params.pathId(ctx, "project_id");
        final boolean trend = "trend".equals(insight);
        final InsightEngine.Kind kind = switch (insight) {
            case "funnel" -> InsightEngine.Kind.FUNNEL;
            case "funnel/correlation" -> InsightEngine.Kind.FUNNEL_CORRELATION;
            case "retention" -> InsightEngine.Kind.RETENTION;
            case "path" -> InsightEngine.Kind.PATHS;
            default -> shownAs(query, "STICKINESS") ? InsightEngine.Kind.STICKINESS
                    : shownAs(query, "LIFECYCLE") ? InsightEngine.Kind.LIFECYCLE : InsightEngine.Kind.TREND;
        };
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> queries.calculate(kind, project, query).map(result -> {
                    final ObjectNode body = Json.mapper().createObjectNode();
                    body.set("result", result);
                    body.put("timezone", project.timezone());
                    body.put("last_refresh", IsoInstants.format(Instant.now()));
                    body.put("is_cached", false);
                    body.put("query_method", "hogql");
                    body.putArray("timings");
                    if (trend) {
                        body.putNull("next");
                    }
                    return body;
                }))
                .onSuccess(body -> {
                    if ("csv".equalsIgnoreCase(ctx.queryParams().get("format"))) {
                        // PostHog's CSV export of the result (InsightResultCsv), rather than the JSON envelope.
                        ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, "text/csv; charset=utf-8")
                                .end(InsightResultCsv.of(body.get("result"), query));
                    } else {
                        Responses.json(ctx, 200, body);
                    }
                })
                .onFailure(ctx::fail);
    }

    /**
     * Whether a query of the trend route asks for another insight ({@code STICKINESS}, {@code LIFECYCLE}): by its
     * {@code insight}, or PostHog's older way, a trend {@code shown_as} it ({@code Stickiness}, {@code Lifecycle}).
     */
    public static boolean shownAs(final JsonNode query, final String insight) {
        return insight.equalsIgnoreCase(query.path("insight").asText()) || insight.equalsIgnoreCase(query.path("shown_as").asText());
    }

    /** The request's JSON object body ({@code {}} when empty). */
    static ObjectNode body(final RoutingContext ctx) {
        return Body.object(ctx.body() == null ? null : ctx.body().asString());
    }

    /** Query parameters as PostHog's filter: JSON lists and objects parsed, other values as text. */
    static ObjectNode fromParams(final MultiMap params) {
        final ObjectNode query = Json.mapper().createObjectNode();
        for (final Map.Entry<String, String> param : params) {
            final String value = param.getValue().trim();
            if (value.startsWith("[") || value.startsWith("{")) {
                try {
                    query.set(param.getKey(), Json.mapper().readTree(value));
                } catch (final JacksonException e) {
                    throw ApiError.badRequest("invalid_input", "'" + param.getKey() + "' is not valid JSON.", param.getKey());
                }
            } else {
                query.put(param.getKey(), value);
            }
        }
        return query;
    }
}
