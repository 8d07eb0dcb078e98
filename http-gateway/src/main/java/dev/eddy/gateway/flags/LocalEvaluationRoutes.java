package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.capture.ProjectTokens;
import dev.eddy.gateway.cohorts.CohortDefinitions;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What SDKs with a personal API key download to evaluate flags themselves:
 * {@code GET /api/feature_flag/local_evaluation/?token=...} and {@code GET /flags/definitions?token=...}
 * (scope {@code feature_flag:read}): the project's flags that are not deleted, its group type mapping and cohorts,
 * in PostHog's format. An ETag lets an SDK poll cheaply: {@code If-None-Match} with the current one answers 304.
 */
public final class LocalEvaluationRoutes {
    private final ProjectTokens tokens;
    private final ProjectRepository projects;
    private final FeatureFlagRepository flags;
    private final FlagsService evaluation;
    private final Handler<RoutingContext> auth;
    private final CohortDefinitions cohorts;

    /** @param auth the personal API key authentication, for the path outside {@code /api/} */
    public LocalEvaluationRoutes(final ProjectTokens tokens, final ProjectRepository projects, final FeatureFlagRepository flags,
                                 final FlagsService evaluation, final Handler<RoutingContext> auth, final CohortDefinitions cohorts) {
        this.tokens = tokens;
        this.projects = projects;
        this.flags = flags;
        this.evaluation = evaluation;
        this.cohorts = cohorts;
        this.auth = auth;
    }

    public void mount(final Router router) {
        router.get("/api/feature_flag/local_evaluation").handler(PersonalApiKeyAuth.require(FeatureFlagRoutes.READ))
                .handler(this::definitions);
        router.get("/flags/definitions").handler(auth).handler(PersonalApiKeyAuth.require(FeatureFlagRoutes.READ))
                .handler(this::definitions);
    }

    private void definitions(final RoutingContext ctx) {
        final String token = ctx.queryParams().get("token");
        if (token == null || token.isBlank()) {
            throw ApiError.badRequest("required", "'token' (the project API key) is required.", "token");
        }
        tokens.projectOf(token.trim(), Vertx.currentContext())
                .compose(project -> project.isPresent() ? Future.succeededFuture(project.get())
                        : Future.failedFuture(ApiError.notFound("Not found.")))
                .compose(id -> projects.require(PersonalApiKeyAuth.principal(ctx), id))
                .compose(project -> flags.live(project.id()).compose(list -> evaluation.groupTypes(project.id())
                        .compose(types -> cohortsOf(project.id(), list, ctx.queryParams().contains("send_cohorts")).map(cohorts -> {
                            final Map<String, String> mapping = new TreeMap<>();
                            types.forEach((index, name) -> mapping.put(Integer.toString(index), name));
                            final Map<String, Object> body = new LinkedHashMap<>();
                            body.put("flags", list.stream().map(FeatureFlag::definition).toList());
                            body.put("group_type_mapping", mapping);
                            body.put("cohorts", cohorts);
                            return body;
                        }))))
                .onSuccess(body -> respond(ctx, body))
                .onFailure(ctx::fail);
    }

    /**
     * With {@code send_cohorts}, PostHog's {@code cohorts}: every dynamic cohort the flags name (and those they name),
     * by its id as text, as its {@code properties} group, which SDKs evaluate themselves. Static cohorts are left out,
     * as in PostHog: an SDK asks the server about flags that name them.
     */
    private Future<Map<String, JsonNode>> cohortsOf(final long projectId, final List<FeatureFlag> list, final boolean send) {
        final java.util.Set<Long> ids = new java.util.TreeSet<>();
        list.forEach(f -> ids.addAll(dev.eddy.flags.FlagDefinition.of(f.definition()).cohortIds()));
        if (!send || ids.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        return cohorts.resolve(projectId, ids).map(whole -> {
            final Map<String, JsonNode> payload = new TreeMap<>();
            whole.values().forEach(definition -> addCohort(definition, payload));
            return payload;
        });
    }

    private static void addCohort(final JsonNode definition, final Map<String, JsonNode> payload) {
        if (definition.path("is_static").asBoolean(false)) {
            return;
        }
        final JsonNode properties = definition.path("filters").path("properties").deepCopy();
        final java.util.List<JsonNode> nested = new java.util.ArrayList<>();
        strip(properties, nested);
        payload.put(definition.get("id").asText(), properties.isMissingNode() ? Json.mapper().createObjectNode() : properties);
        nested.forEach(n -> addCohort(n, payload));
    }

    /** Takes the inlined definitions out of a cohort's leaves (SDKs find them by id), into {@code nested}. */
    private static void strip(final JsonNode node, final java.util.List<JsonNode> nested) {
        if (node.isObject()) {
            final JsonNode inlined = ((com.fasterxml.jackson.databind.node.ObjectNode) node).remove(dev.eddy.trends.Cohort.INLINED);
            if (inlined != null) {
                nested.add(inlined);
            }
            node.forEach(child -> strip(child, nested));
        } else if (node.isArray()) {
            node.forEach(child -> strip(child, nested));
        }
    }

    private static void respond(final RoutingContext ctx, final Map<String, Object> body) {
        final byte[] bytes;
        try {
            bytes = Json.mapper().writeValueAsBytes(body);
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            ctx.fail(e);
            return;
        }
        final String etag = "\"" + sha256(bytes) + "\"";
        ctx.response().putHeader(HttpHeaders.ETAG, etag);
        if (etag.equals(ctx.request().getHeader(HttpHeaders.IF_NONE_MATCH))) {
            ctx.response().setStatusCode(304).end();
            return;
        }
        ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(io.vertx.core.buffer.Buffer.buffer(bytes));
    }

    private static String sha256(final byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 32);
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
