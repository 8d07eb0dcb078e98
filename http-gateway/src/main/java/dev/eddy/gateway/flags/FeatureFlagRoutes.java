package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.cohorts.CohortRepository;
import dev.eddy.gateway.db.FieldValue;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * PostHog's feature flags API: list, create (201), retrieve, PATCH (each change bumps {@code version}), DELETE as a
 * soft delete (204); scopes {@code feature_flag:read}/{@code :write}. Every change is published to
 * {@code flags.definitions}.
 */
public final class FeatureFlagRoutes {
    public static final String READ = "feature_flag:read";
    public static final String WRITE = "feature_flag:write";
    private static final String BASE = "/api/projects/:project_id/feature_flags";

    private final ProjectRepository projects;
    private final FeatureFlagRepository flags;
    private final FlagPublisher publisher;
    private final CohortRepository cohorts;

    public FeatureFlagRoutes(final ProjectRepository projects, final FeatureFlagRepository flags, final FlagPublisher publisher,
                             final CohortRepository cohorts) {
        this.projects = projects;
        this.flags = flags;
        this.publisher = publisher;
        this.cohorts = cohorts;
    }

    /** PostHog's check: every cohort the filters name is one of the project's live cohorts. */
    private Future<Void> cohortsExist(final long projectId, final JsonNode filters) {
        final java.util.Set<Long> ids = FlagDefinition.of(Json.mapper().createObjectNode().put("id", 0).put("key", "check")
                .set("filters", filters)).cohortIds();
        return ids.isEmpty() ? Future.succeededFuture() : cohorts.some(projectId, ids).compose(found -> {
            for (final Long id : ids) {
                if (!found.containsKey(id)) {
                    return Future.failedFuture(ApiError.badRequest("cohort_does_not_exist", "Cohort with id " + id + " does not exist", "filters"));
                }
            }
            return Future.succeededFuture();
        });
    }

    public void mount(final Router router) {
        router.get(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.get(BASE + "/:id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.patch(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::update);
        router.delete(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::delete);
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        projects.require(principal(ctx), projectId)
                .compose(p -> flags.list(projectId, page.limit(), page.offset()))
                .onSuccess(result -> Responses.json(ctx, 200, page.envelope(ctx, result.total(), result.flags())))
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Body body = Body.of(ctx);
        final String key = FlagFilters.key(body.string("key", 400));
        final String name = Optional.ofNullable(body.has("name") ? body.string("name", 10_000) : null).orElse("");
        final JsonNode filters = body.has("filters") ? Optional.ofNullable(body.object("filters", true))
                .orElse(Json.mapper().createObjectNode()) : Json.mapper().createObjectNode();
        FlagFilters.check(filters);
        final boolean active = !body.has("active") || body.bool("active");
        final boolean continuity = body.has("ensure_experience_continuity") && body.bool("ensure_experience_continuity");
        projects.require(principal(ctx), projectId)
                .compose(p -> cohortsExist(projectId, filters))
                .compose(p -> flags.create(projectId, principal(ctx).userId(), key, name, filters, active, continuity))
                .compose(change -> publisher.published(change).map(change.after()))
                .onSuccess(flag -> Responses.json(ctx, 201, flag))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        projects.require(principal(ctx), projectId)
                .compose(p -> flags.find(projectId, id))
                .map(found -> found.filter(f -> !f.deleted())).compose(ApiError::orNotFound)
                .onSuccess(flag -> Responses.json(ctx, 200, flag))
                .onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Map<String, FieldValue> fields = fields(Body.of(ctx));
        change(ctx, projectId, id, fields, 200);
    }

    /** PostHog keeps deleted flags: DELETE is the soft delete {@code deleted: true}. */
    private void delete(final RoutingContext ctx) {
        final Map<String, FieldValue> fields = new LinkedHashMap<>();
        fields.put("deleted", new FieldValue(Json.mapper().valueToTree(true), true));
        change(ctx, Params.pathId(ctx, "project_id"), Params.pathId(ctx, "id"), fields, 204);
    }

    private void change(final RoutingContext ctx, final long projectId, final long id,
                        final Map<String, FieldValue> fields, final int status) {
        projects.require(principal(ctx), projectId)
                .compose(p -> fields.containsKey("filters") ? cohortsExist(projectId, fields.get("filters").json()) : Future.<Void>succeededFuture())
                .compose(p -> flags.find(projectId, id))
                .map(found -> found.filter(f -> !f.deleted() || fields.containsKey("deleted"))).compose(ApiError::orNotFound)
                .compose(f -> flags.update(projectId, id, principal(ctx).userId(), fields)).compose(ApiError::orNotFound)
                .compose(change -> publisher.published(change).map(change.after()))
                .onSuccess(flag -> {
                    if (status == 204) {
                        ctx.response().setStatusCode(204).end();
                    } else {
                        Responses.json(ctx, status, flag);
                    }
                })
                .onFailure(ctx::fail);
    }

    static Map<String, FieldValue> fields(final Body body) {
        final Map<String, FieldValue> fields = new LinkedHashMap<>();
        if (body.has("key")) {
            final String key = FlagFilters.key(body.string("key", 400));
            fields.put("key", new FieldValue(Json.mapper().valueToTree(key), key));
        }
        if (body.has("name")) {
            final String name = Optional.ofNullable(body.string("name", 10_000)).orElse("");
            fields.put("name", new FieldValue(Json.mapper().valueToTree(name), name));
        }
        if (body.has("filters")) {
            final JsonNode filters = Optional.ofNullable(body.object("filters", true)).orElse(Json.mapper().createObjectNode());
            FlagFilters.check(filters);
            fields.put("filters", new FieldValue(filters, Jsonb.bind(filters)));
        }
        for (final String flag : new String[] {"active", "deleted", "ensure_experience_continuity"}) {
            if (body.has(flag)) {
                final boolean value = body.bool(flag);
                fields.put(flag, new FieldValue(Json.mapper().valueToTree(value), value));
            }
        }
        return fields;
    }

    private static Principal principal(final RoutingContext ctx) {
        return PersonalApiKeyAuth.principal(ctx);
    }
}
