package dev.eddy.gateway.actions;

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
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.serde.Json;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * PostHog's actions API: list (live ones; {@code search} by name), create (201), retrieve (deleted ones too), PATCH;
 * {@code DELETE} is 405, as in PostHog: an action is deleted with {@code PATCH {"deleted": true}}. Scopes
 * {@code action:read}/{@code :write}. Names are unique among a project's live actions.
 */
public final class ActionRoutes {
    public static final String READ = "action:read";
    public static final String WRITE = "action:write";
    private static final String BASE = "/api/projects/:project_id/actions";
    private static final int MAX_NAME = 400;
    private static final int MAX_DESCRIPTION = 10_000;
    private static final int MAX_SLACK_FORMAT = 1_200;

    private final ProjectRepository projects;
    private final ActionRepository actions;

    public ActionRoutes(final ProjectRepository projects, final ActionRepository actions) {
        this.projects = projects;
        this.actions = actions;
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
        final String search = Params.search(ctx);
        projects.require(principal(ctx), projectId)
                .compose(p -> actions.list(projectId, search, page.limit(), page.offset()))
                .onSuccess(result -> Responses.json(ctx, 200, page.envelope(ctx, result.total(), result.actions())))
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Body body = Body.of(ctx);
        final ActionRepository.Create create = new ActionRepository.Create(name(body),
                Optional.ofNullable(body.string("description", MAX_DESCRIPTION)).orElse(""), tags(body),
                body.has("post_to_slack") && body.bool("post_to_slack"),
                Optional.ofNullable(body.string("slack_message_format", MAX_SLACK_FORMAT)).orElse(""),
                ActionSteps.normalize(body.raw("steps")), pinned(body).orElse(false));
        projects.require(principal(ctx), projectId)
                .compose(p -> actions.create(projectId, principal(ctx).userId(), create))
                .onSuccess(action -> Responses.json(ctx, 201, action))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        found(ctx).onSuccess(action -> Responses.json(ctx, 200, action)).onFailure(ctx::fail);
    }

    /** PostHog keeps actions: a DELETE of one the key may see is 405, pointing at the soft delete. */
    private void delete(final RoutingContext ctx) {
        found(ctx).onSuccess(action -> ctx.fail(ApiError.hardDeleteNotAllowed())).onFailure(ctx::fail);
    }

    /** The action of the path, deleted or not, if the key may see its project (404 otherwise). */
    private io.vertx.core.Future<SavedAction> found(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        return projects.require(principal(ctx), projectId).compose(p -> actions.find(projectId, id)).compose(ApiError::orNotFound);
    }

    private void update(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Body body = Body.of(ctx);
        final Map<String, FieldValue> fields = new LinkedHashMap<>();
        if (body.has("name")) {
            put(fields, "name", name(body), name(body));
        }
        for (final String text : new String[] {"description", "slack_message_format"}) {
            if (body.has(text)) {
                final String value = Optional.ofNullable(body.string(text, "description".equals(text) ? MAX_DESCRIPTION : MAX_SLACK_FORMAT)).orElse("");
                put(fields, text, value, value);
            }
        }
        if (body.has("tags")) {
            put(fields, "tags", tags(body), tags(body).toArray(String[]::new));
        }
        if (body.has("steps")) {
            final JsonNode steps = ActionSteps.normalize(body.raw("steps"));
            put(fields, "steps", steps, Jsonb.bind(steps));
        }
        for (final String flag : new String[] {"post_to_slack", "deleted"}) {
            if (body.has(flag)) {
                put(fields, flag, body.bool(flag), body.bool(flag));
            }
        }
        projects.require(principal(ctx), projectId)
                .compose(p -> actions.update(projectId, id, principal(ctx).userId(), fields, pinned(body))).compose(ApiError::orNotFound)
                .onSuccess(action -> Responses.json(ctx, 200, action))
                .onFailure(ctx::fail);
    }

    /** A changed field: its value as the API shows it ({@code shown}) and as bound to its column. */
    private static void put(final Map<String, FieldValue> fields, final String field, final Object shown, final Object bind) {
        fields.put(field, new FieldValue(Json.mapper().valueToTree(shown), bind));
    }

    /** A name, or null; a blank one is refused as PostHog refuses it. */
    private static String name(final Body body) {
        final String name = body.string("name", MAX_NAME);
        if (name != null && name.isBlank()) {
            throw ApiError.badRequest("blank", "This field may not be blank.", "name");
        }
        return name;
    }

    private static List<String> tags(final Body body) {
        return body.has("tags") && body.raw("tags") != null && !body.raw("tags").isNull() ? body.strings("tags") : List.of();
    }

    /** {@code pinned_at}: any value pins (at the server's time), null or {@code ""} unpins; absent changes nothing. */
    private static Optional<Boolean> pinned(final Body body) {
        if (!body.has("pinned_at")) {
            return Optional.empty();
        }
        final JsonNode value = body.raw("pinned_at");
        return Optional.of(!(value == null || value.isNull() || value.isTextual() && value.asText().isEmpty()));
    }

    private static Principal principal(final RoutingContext ctx) {
        return PersonalApiKeyAuth.principal(ctx);
    }
}
