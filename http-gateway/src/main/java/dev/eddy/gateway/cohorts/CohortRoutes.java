package dev.eddy.gateway.cohorts;

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
import dev.eddy.gateway.persons.PersonsRoutes;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * PostHog's cohorts API: list (live ones, newest first; {@code search} by name), create (201), retrieve (deleted ones
 * too), PATCH; {@code DELETE} is 405, as in PostHog: a cohort is deleted with {@code PATCH {"deleted": true}}, refused
 * while an active flag uses it. Scopes {@code cohort:read}/{@code :write}. A dynamic cohort is its {@code filters}
 * ({@link CohortFilters}; legacy {@code groups} accepted); a static one ({@code is_static}) gets members from a CSV
 * ({@code csv}: the file of a {@code multipart/form-data} upload ({@link CohortForm}), or its text in a JSON body; read
 * as PostHog reads an upload: one column of distinct ids, or a {@code person_id}
 * or {@code distinct_id} column), from {@code _create_static_person_ids} (person uuids), and from
 * {@code add_persons_to_static_cohort}; each upload adds to the members.
 */
public final class CohortRoutes {
    public static final String READ = "cohort:read";
    public static final String WRITE = "cohort:write";
    private static final String BASE = "/api/projects/:project_id/cohorts";
    private static final int MAX_NAME = 400;
    private static final int MAX_DESCRIPTION = 1000;
    private static final int MAX_PERSON_IDS = 1000;

    private final ProjectRepository projects;
    private final CohortRepository cohorts;
    private final CohortDefinitions definitions;
    private final PersonsService persons;
    private final CohortUsers users;

    public CohortRoutes(final ProjectRepository projects, final CohortRepository cohorts, final PersonsService persons,
                        final CohortUsers users) {
        this.projects = projects;
        this.cohorts = cohorts;
        this.definitions = new CohortDefinitions(cohorts);
        this.persons = persons;
        this.users = users;
    }

    /** The body handler of the cohort routes ({@link CohortForm}), uploads written under {@code uploads}: mount before the API's. */
    public static Handler<RoutingContext> bodyHandler(final Path uploads) {
        return CohortForm.bodyHandler(uploads);
    }

    public void mount(final Router router) {
        router.get(BASE).handler(PersonalApiKeyAuth.require(READ)).handler(this::list);
        router.post(BASE).handler(PersonalApiKeyAuth.require(WRITE)).handler(this::create);
        router.get(BASE + "/:id").handler(PersonalApiKeyAuth.require(READ)).handler(this::retrieve);
        router.patch(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::update);
        router.delete(BASE + "/:id").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::delete);
        router.patch(BASE + "/:id/add_persons_to_static_cohort").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::addPersons);
        router.patch(BASE + "/:id/remove_person_from_static_cohort").handler(PersonalApiKeyAuth.require(WRITE)).handler(this::removePerson);
        router.get(BASE + "/:id/persons").handler(PersonalApiKeyAuth.require(READ)).handler(PersonalApiKeyAuth.require(PersonsRoutes.READ))
                .handler(this::persons);
    }

    private void list(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        final String search = Params.search(ctx);
        projects.require(principal(ctx), projectId)
                .compose(p -> cohorts.list(projectId, search, page.limit(), page.offset()))
                .onSuccess(result -> Responses.json(ctx, 200, page.envelope(ctx, result.total(), result.cohorts())))
                .onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx) {
        CohortForm.read(ctx).onSuccess(body -> create(ctx, body)).onFailure(ctx::fail);
    }

    private void create(final RoutingContext ctx, final Body body) {
        final long projectId = Params.pathId(ctx, "project_id");
        if (body.has("query") && body.raw("query") != null && !body.raw("query").isNull()) {
            throw ApiError.badRequest("invalid_input", "Cohorts defined by a query are not supported by Eddy yet; use filters.", "query");
        }
        final boolean isStatic = body.has("is_static") && body.bool("is_static");
        final JsonNode filters = filters(body);
        final String name = name(body);
        final String description = Optional.ofNullable(body.string("description", MAX_DESCRIPTION)).orElse("");
        projects.require(principal(ctx), projectId)
                .compose(p -> isStatic ? Future.succeededFuture() : references(projectId, 0, filters))
                .compose(v -> isStatic ? uploaded(projectId, body) : Future.succeededFuture(Set.<String>of()))
                .compose(members -> cohorts.create(projectId, principal(ctx).userId(), name, description,
                        isStatic ? Json.mapper().createObjectNode() : filters, isStatic, members))
                .onSuccess(cohort -> Responses.json(ctx, 201, cohort))
                .onFailure(ctx::fail);
    }

    /** The cohort, a dynamic one with its persons counted now (one pass over the persons of every instance). */
    private void retrieve(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        found(ctx).compose(cohort -> cohort.isStatic() || cohort.deleted() ? Future.succeededFuture(cohort)
                        : members(projectId, cohort.id(), new PersonQuery(Optional.empty(), 0, 0)).map(page -> cohort.counted(page.count())))
                .onSuccess(cohort -> Responses.json(ctx, 200, cohort)).onFailure(ctx::fail);
    }

    /** PostHog's {@code GET /cohorts/:id/persons/}: the cohort's persons, newest first, a page at a time. */
    private void persons(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Pagination page = Pagination.of(ctx);
        final Optional<String> search = Optional.ofNullable(Params.search(ctx));
        found(ctx).compose(cohort -> members(projectId, cohort.id(), new PersonQuery(search, page.limit(), page.offset())))
                .onSuccess(result -> Responses.json(ctx, 200, page.envelope(ctx, result.count(),
                        result.results().stream().map(PersonsRoutes::person).toList())))
                .onFailure(ctx::fail);
    }

    /** {@code query}'s page of the persons in cohort {@code id}. */
    private Future<PersonQuery.Page> members(final long projectId, final long id, final PersonQuery query) {
        return definitions.resolve(projectId, Set.of(id)).compose(whole -> {
            final JsonNode definition = whole.get(id);
            return definition == null ? Future.failedFuture(ApiError.notFound("Not found."))
                    : persons.list(projectId, new PersonQuery(query.search(), query.limit(), query.offset(), Optional.of(definition)));
        });
    }

    /** PostHog keeps cohorts: a DELETE of one the key may see is 405, pointing at the soft delete. */
    private void delete(final RoutingContext ctx) {
        found(ctx).onSuccess(cohort -> ctx.fail(ApiError.hardDeleteNotAllowed())).onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx) {
        CohortForm.read(ctx).onSuccess(body -> update(ctx, body)).onFailure(ctx::fail);
    }

    private void update(final RoutingContext ctx, final Body body) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Map<String, FieldValue> fields = new LinkedHashMap<>();
        if (body.has("name")) {
            final String name = name(body);
            fields.put("name", new FieldValue(Json.mapper().valueToTree(name), name));
        }
        if (body.has("description")) {
            final String description = Optional.ofNullable(body.string("description", MAX_DESCRIPTION)).orElse("");
            fields.put("description", new FieldValue(Json.mapper().valueToTree(description), description));
        }
        final boolean changesFilters = body.has("filters") || body.has("groups");
        final JsonNode filters = changesFilters ? filters(body) : null;
        if (body.has("deleted")) {
            final boolean deleted = body.bool("deleted");
            fields.put("deleted", new FieldValue(Json.mapper().valueToTree(deleted), deleted));
        }
        found(ctx).compose(cohort -> {
            if (changesFilters && cohort.isStatic() && !filters.isEmpty()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input",
                        "Editing the criteria of a static cohort is not supported yet. Create a new static cohort instead.", "filters"));
            }
            if (changesFilters && !cohort.isStatic()) {
                fields.put("filters", new FieldValue(filters, Jsonb.bind(filters)));
            }
            final boolean deleting = fields.containsKey("deleted") && Boolean.TRUE.equals(fields.get("deleted").bind()) && !cohort.deleted();
            return (changesFilters && !cohort.isStatic() ? references(projectId, id, filters) : Future.<Void>succeededFuture())
                    .compose(v -> deleting ? notUsedByFlags(projectId, id) : Future.<Void>succeededFuture())
                    .compose(v -> cohort.isStatic() ? uploaded(projectId, body) : Future.succeededFuture(Set.<String>of()))
                    .compose(added -> cohorts.update(projectId, id, principal(ctx).userId(), fields, added, List.of()));
        }).compose(ApiError::orNotFound)
                .onSuccess(cohort -> Responses.json(ctx, 200, cohort))
                .onFailure(ctx::fail);
    }

    /** PostHog's {@code add_persons_to_static_cohort}: persons by uuid, their distinct ids made members. */
    private void addPersons(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Body body = Body.of(ctx);
        found(ctx).compose(cohort -> {
            if (!cohort.isStatic()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "Can only add users to static cohorts", null));
            }
            final JsonNode ids = body.raw("person_ids");
            if (ids == null || !ids.isArray()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "person_ids must be a list", "person_ids"));
            }
            if (ids.isEmpty()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "person_ids cannot be empty", "person_ids"));
            }
            if (ids.size() > MAX_PERSON_IDS) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "List size exceeds limit", "person_ids"));
            }
            final List<String> uuids = new ArrayList<>();
            ids.forEach(v -> uuids.add(v.asText()));
            return distinctIdsOf(projectId, uuids).compose(members -> members.isEmpty()
                    ? Future.failedFuture(ApiError.badRequest("invalid_input", "No valid users to add to cohort", "person_ids"))
                    : cohorts.update(projectId, id, principal(ctx).userId(), Map.of(), members, List.of()));
        }).onSuccess(done -> Responses.json(ctx, 200, Map.of("success", true))).onFailure(ctx::fail);
    }

    /** PostHog's {@code remove_person_from_static_cohort}: the person's distinct ids are no longer members. */
    private void removePerson(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        final Body body = Body.of(ctx);
        found(ctx).compose(cohort -> {
            if (!cohort.isStatic()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "Can only remove users from static cohorts", null));
            }
            final JsonNode personId = body.raw("person_id");
            if (personId == null || personId.isNull()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "person_id is required", "person_id"));
            }
            if (!personId.isTextual()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "person_id must be a string", "person_id"));
            }
            try {
                java.util.UUID.fromString(personId.asText());
            } catch (final IllegalArgumentException e) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "person_id must be a valid UUID", "person_id"));
            }
            return persons.byUuid(projectId, personId.asText()).compose(person -> person.isEmpty()
                    ? Future.failedFuture(ApiError.notFound("Person with this UUID does not exist in the cohort's team"))
                    : cohorts.update(projectId, id, principal(ctx).userId(), Map.of(), List.of(), person.get().distinctIds()));
        }).onSuccess(done -> Responses.json(ctx, 200, Map.of("success", true))).onFailure(ctx::fail);
    }

    /** The cohort of the path, deleted or not, if the key may see its project (404 otherwise). */
    private Future<SavedCohort> found(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final long id = Params.pathId(ctx, "id");
        return projects.require(principal(ctx), projectId).compose(p -> cohorts.find(projectId, id)).compose(ApiError::orNotFound);
    }

    /** {@code filters}, or legacy {@code groups} turned into filters. */
    private static JsonNode filters(final Body body) {
        if (body.has("filters") && body.raw("filters") != null && !body.raw("filters").isNull()) {
            if (body.has("groups") && body.raw("groups") != null && body.raw("groups").size() > 0) {
                throw ApiError.badRequest("invalid_input", "Cannot set both groups and filters at the same time.", "filters");
            }
            return CohortFilters.check(body.raw("filters"));
        }
        if (body.has("groups") && body.raw("groups") != null && !body.raw("groups").isNull()) {
            return CohortFilters.fromGroups(body.raw("groups"));
        }
        return Json.mapper().createObjectNode();
    }

    /** The cohorts {@code filters} name exist in the project, and none of them leads back to cohort {@code self}. */
    private Future<Void> references(final long projectId, final long self, final JsonNode filters) {
        final Set<Long> named = new TreeSet<>();
        CohortDefinitions.cohortFilters(filters, f -> CohortDefinitions.id(f).ifPresent(named::add));
        if (named.isEmpty()) {
            return Future.succeededFuture();
        }
        if (named.contains(self)) {
            return Future.failedFuture(ApiError.badRequest("invalid_input", "Cohorts cannot reference other cohorts in a loop.", "filters"));
        }
        return cohorts.some(projectId, named).compose(found -> {
            for (final Long id : named) {
                if (!found.containsKey(id)) {
                    return Future.failedFuture(ApiError.badRequest("invalid_input", "Invalid Cohort ID in filter", "filters"));
                }
            }
            return definitions.resolve(projectId, named).compose(whole -> whole.values().stream().anyMatch(d -> CohortDefinitions.names(d, self))
                    ? Future.failedFuture(ApiError.badRequest("invalid_input", "Cohorts cannot reference other cohorts in a loop.", "filters"))
                    : Future.<Void>succeededFuture());
        });
    }

    /** PostHog refuses to delete a cohort an active flag uses. */
    private Future<Void> notUsedByFlags(final long projectId, final long id) {
        return users.activeFlagsUsing(projectId, id).compose(using -> using.isEmpty() ? Future.succeededFuture()
                : Future.failedFuture(ApiError.badRequest("invalid_input", "This cohort is used in " + using.size()
                        + " active feature flag(s): " + String.join(", ", using)
                        + ". Please remove the cohort from these feature flags before deleting it.", "deleted")));
    }

    /**
     * The distinct ids a request adds to a static cohort: those of its {@code csv} and the persons of its
     * {@code _create_static_person_ids}; unknown persons are left out, as in PostHog.
     */
    private Future<Set<String>> uploaded(final long projectId, final Body body) {
        final Set<String> members = new LinkedHashSet<>();
        final List<String> personIds = new ArrayList<>();
        if (body.has("csv") && body.raw("csv") != null && !body.raw("csv").isNull()) {
            final CohortCsv.Ids ids = CohortCsv.read(body.string("csv", 50_000_000));
            if (ids.personIds()) {
                personIds.addAll(ids.values());
            } else {
                members.addAll(ids.values());
            }
        }
        if (body.has("_create_static_person_ids") && body.raw("_create_static_person_ids") != null) {
            personIds.addAll(body.strings("_create_static_person_ids"));
        }
        if (members.size() > CohortRepository.MAX_MEMBERS || personIds.size() > CohortRepository.MAX_MEMBERS) {
            return Future.failedFuture(ApiError.badRequest("invalid_input", "A static cohort has at most " + CohortRepository.MAX_MEMBERS
                    + " members in Eddy.", "csv"));
        }
        return distinctIdsOf(projectId, personIds).map(found -> {
            members.addAll(found);
            return members;
        });
    }

    /** The distinct ids of the persons with these uuids (those that exist). */
    private Future<Set<String>> distinctIdsOf(final long projectId, final List<String> uuids) {
        final List<Future<Optional<PersonState>>> reads = new ArrayList<>();
        for (final String uuid : uuids) {
            try {
                java.util.UUID.fromString(uuid);
                reads.add(persons.byUuid(projectId, uuid));
            } catch (final IllegalArgumentException e) {
                // Not a person's uuid: no person.
            }
        }
        return Future.all(reads).map(all -> {
            final Set<String> ids = new LinkedHashSet<>();
            for (int i = 0; i < reads.size(); i++) {
                all.<Optional<PersonState>>resultAt(i).ifPresent(p -> ids.addAll(p.distinctIds()));
            }
            return ids;
        });
    }

    /** A name, or null; a blank one is refused as PostHog refuses it. */
    private static String name(final Body body) {
        final String name = body.string("name", MAX_NAME);
        if (name != null && name.isBlank()) {
            throw ApiError.badRequest("blank", "This field may not be blank.", "name");
        }
        return name;
    }

    private static Principal principal(final RoutingContext ctx) {
        return PersonalApiKeyAuth.principal(ctx);
    }
}
