package dev.eddy.gateway.flags;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.capture.ProjectTokens;
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

    /** @param auth the personal API key authentication, for the path outside {@code /api/} */
    public LocalEvaluationRoutes(final ProjectTokens tokens, final ProjectRepository projects, final FeatureFlagRepository flags,
                                 final FlagsService evaluation, final Handler<RoutingContext> auth) {
        this.tokens = tokens;
        this.projects = projects;
        this.flags = flags;
        this.evaluation = evaluation;
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
                .compose(project -> flags.live(project.id()).compose(list -> evaluation.groupTypes(project.id()).map(types -> {
                    final Map<String, String> mapping = new TreeMap<>();
                    types.forEach((index, name) -> mapping.put(Integer.toString(index), name));
                    final Map<String, Object> body = new LinkedHashMap<>();
                    body.put("flags", list.stream().map(FeatureFlag::definition).toList());
                    body.put("group_type_mapping", mapping);
                    body.put("cohorts", Map.of());
                    return body;
                })))
                .onSuccess(body -> respond(ctx, body))
                .onFailure(ctx::fail);
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
