package dev.eddy.gateway.persons;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.Principal;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.groups.GroupState;
import dev.eddy.groups.GroupTypes;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonState;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * PostHog's persons read API and group lookup, answered from the topology's stores:
 * {@code GET /api/projects/:id/persons/} ({@code distinct_id}, {@code search}, {@code limit}, {@code offset}),
 * {@code GET /api/projects/:id/persons/:uuid/} and
 * {@code GET /api/projects/:id/groups/find?group_type_index=&group_key=}. Scope {@code person:read} (groups also
 * accept PostHog's {@code group:read}); another project's data is a 404.
 */
public final class PersonsRoutes {
    public static final String READ = "person:read";
    public static final String GROUP_READ = "group:read";

    private final ProjectRepository projects;
    private final PersonsService persons;

    public PersonsRoutes(final ProjectRepository projects, final PersonsService persons) {
        this.projects = projects;
        this.persons = persons;
    }

    public void mount(final Router router) {
        router.get("/api/projects/:project_id/persons").handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.get("/api/projects/:project_id/persons/:uuid").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.get("/api/projects/:project_id/groups/find").handler(ctx -> {
            final Principal principal = PersonalApiKeyAuth.principal(ctx);
            if (principal.allows(READ) || principal.allows(GROUP_READ)) {
                ctx.next();
            } else {
                ctx.fail(ApiError.forbidden("permission_denied",
                        "API key missing required scope '" + READ + "' or '" + GROUP_READ + "'"));
            }
        }).handler(this::findGroup);
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        final Optional<String> distinctId = Optional.ofNullable(ctx.queryParams().get("distinct_id")).filter(s -> !s.isEmpty());
        final PersonQuery query = new PersonQuery(Optional.ofNullable(ctx.queryParams().get("search")), page.limit(), page.offset());
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> distinctId.isPresent()
                        ? persons.byDistinctId(projectId, project.apiToken(), distinctId.get()).map(p -> query.run(p.map(List::of).orElse(List.of())))
                        : persons.list(projectId, query))
                .onSuccess(result -> Responses.json(ctx, 200,
                        page.envelope(ctx, result.count(), result.results().stream().map(PersonsRoutes::person).toList())))
                .onFailure(ctx::fail);
    }

    private void retrieve(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final String uuid = ctx.pathParam("uuid");
        if (!isUuid(uuid)) {
            throw ApiError.notFound("Not found.");
        }
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(v -> persons.byUuid(projectId, uuid.toLowerCase(java.util.Locale.ROOT)))
                .onSuccess(found -> found.ifPresentOrElse(p -> Responses.json(ctx, 200, person(p)),
                        () -> ctx.fail(ApiError.notFound("Not found."))))
                .onFailure(ctx::fail);
    }

    private void findGroup(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        if (ctx.queryParams().get("group_type_index") == null) {
            throw ApiError.badRequest("required", "'group_type_index' is required.", "group_type_index");
        }
        final int index = Params.intParam(ctx, "group_type_index", 0, 0, GroupTypes.MAX_TYPES - 1);
        final String key = ctx.queryParams().get("group_key");
        if (key == null || key.isEmpty()) {
            throw ApiError.badRequest("required", "'group_key' is required.", "group_key");
        }
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(v -> persons.group(projectId, index, key))
                .onSuccess(found -> found.ifPresentOrElse(g -> Responses.json(ctx, 200, group(g)),
                        () -> ctx.fail(ApiError.notFound("Not found."))))
                .onFailure(ctx::fail);
    }

    /** PostHog's person shape. */
    public static Map<String, Object> person(final PersonState p) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", p.uuid());
        body.put("uuid", p.uuid());
        body.put("name", displayName(p));
        body.put("distinct_ids", p.distinctIds());
        body.put("properties", p.properties());
        body.put("created_at", p.createdAt());
        body.put("is_identified", p.isIdentified());
        return body;
    }

    /** PostHog's group shape. */
    static Map<String, Object> group(final GroupState g) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("group_type_index", g.groupTypeIndex());
        body.put("group_key", g.groupKey());
        body.put("group_properties", g.properties());
        body.put("created_at", g.createdAt());
        return body;
    }

    /** What PostHog shows as a person's name: the email, else the name property, else the first distinct id. */
    public static String displayName(final PersonState p) {
        return displayName(p.properties(), p.distinctIds().isEmpty() ? p.uuid() : p.distinctIds().get(0));
    }

    /** The email in {@code properties}, else the name property, else {@code fallback}. */
    public static String displayName(final JsonNode properties, final String fallback) {
        for (final String field : new String[] {"email", "name"}) {
            final JsonNode value = properties.get(field);
            if (value != null && value.isTextual() && !value.asText().isBlank()) {
                return value.asText();
            }
        }
        return fallback;
    }

    private static boolean isUuid(final String value) {
        try {
            return value != null && value.length() == 36 && UUID.fromString(value) != null;
        } catch (final IllegalArgumentException e) {
            return false;
        }
    }
}
