package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.flags.FlagEvaluator;
import dev.eddy.gateway.cohorts.CohortDefinitions;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.query.GlobalJsonRead;
import dev.eddy.serde.Json;
import dev.eddy.trends.Cohort;
import dev.eddy.trends.PropertyFilter;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Evaluates a project's feature flags for one user, as {@code /decide} and {@code /flags} answer: definitions from
 * the global {@code flag-definitions} store (PostgreSQL when this process runs no streams instance), the person's
 * properties from the persons store, groups' properties from the global groups store, each overridden by the
 * request. When the person cannot be read, flags that need person properties are left out and the answer says
 * {@code errorsWhileComputingFlags}.
 */
public final class FlagsService {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FlagsService.class);

    /**
     * How long a project's parsed definitions and group types are reused before they are read again: every request
     * would otherwise scan and parse all of them. The read happens in the background while requests keep the
     * previous copy, so a changed flag is answered within about this long after it reached the store.
     */
    private static final java.time.Duration DEFINITIONS_TTL = java.time.Duration.ofSeconds(1);
    /** A project nobody asked about for this long is dropped from the caches. */
    private static final java.time.Duration IDLE_PROJECT = java.time.Duration.ofMinutes(10);

    /** How long loading a project's definitions or group types may take, rebalances included. */
    private static final java.time.Duration LOAD_TIMEOUT = java.time.Duration.ofSeconds(2);
    private static final String DEFINITIONS = "flag-definitions";
    private static final String GROUP_TYPES = "group-types";

    private final Scatter scatter;
    private final PersonsService persons;
    private final FeatureFlagRepository repository;
    private final HashKeyOverrides overrides;
    private final CohortDefinitions cohorts;
    private final AsyncLoadingCache<Long, ProjectFlags> definitionCache = Caffeine.newBuilder()
            .refreshAfterWrite(DEFINITIONS_TTL).expireAfterAccess(IDLE_PROJECT).maximumSize(10_000)
            .buildAsync((id, executor) -> loadDefinitions(id).toCompletionStage().toCompletableFuture());
    /** The cohorts a project's flags name, whole and parsed, read again as often as the definitions. */
    private final AsyncLoadingCache<Long, Map<Long, Cohort>> cohortCache = Caffeine.newBuilder()
            .refreshAfterWrite(DEFINITIONS_TTL).expireAfterAccess(IDLE_PROJECT).maximumSize(10_000)
            .buildAsync((id, executor) -> loadCohorts(id).toCompletionStage().toCompletableFuture());
    private final AsyncLoadingCache<Long, Map<Integer, String>> groupTypeCache = Caffeine.newBuilder()
            .refreshAfterWrite(DEFINITIONS_TTL).expireAfterAccess(IDLE_PROJECT).maximumSize(10_000)
            .buildAsync((id, executor) -> loadGroupTypes(id).toCompletionStage().toCompletableFuture());

    /**
     * Needs {@link #registerReads} on {@code scatter}.
     *
     * @param overrides the continuity flags' hash keys
     * @param cohorts   the cohorts flag conditions name
     */
    public FlagsService(final Scatter scatter, final PersonsService persons, final FeatureFlagRepository repository,
                        final HashKeyOverrides overrides, final CohortDefinitions cohorts) {
        this.scatter = scatter;
        this.persons = persons;
        this.repository = repository;
        this.overrides = overrides;
        this.cohorts = cohorts;
    }

    /**
     * What the request asks.
     *
     * @param token            the project's API token (routes the person's read)
     * @param anonDistinctId   the {@code $anon_distinct_id} the user had before identifying, if sent
     * @param personProperties overrides of the person's properties ({@code $geoip_*} and the request's own)
     * @param groups           group type name to group key
     * @param groupProperties  group type name to property overrides
     * @param flagKeys         the only flags to evaluate, when the request names them ({@code flag_keys})
     */
    public record Request(long projectId, String token, String distinctId, Optional<String> anonDistinctId,
                          Map<String, String> groups, ObjectNode personProperties, Map<String, ObjectNode> groupProperties,
                          Optional<java.util.Set<String>> flagKeys) {
    }

    /**
     * @param results  one per live, active flag, in key order
     * @param errors   whether some flags could not be computed (left out of {@code results})
     */
    public record Evaluation(List<FlagEvaluator.Result> results, Map<String, FlagDefinition> definitions, boolean errors) {
        /** No flag evaluated (the request asked for none). */
        public static final Evaluation NONE = new Evaluation(List.of(), Map.of(), false);
    }

    /**
     * A project's live, active flags as every request evaluates them, worked out once per load of the definitions.
     *
     * @param active      in key order
     * @param continuity  the keys of the flags with experience continuity
     * @param needsPerson whether any flag needs the person read (person properties or continuity)
     */
    private record ProjectFlags(List<Flag> active, List<String> continuity, boolean needsPerson, java.util.Set<Long> cohortIds) {
        static ProjectFlags of(final List<FlagDefinition> definitions) {
            final List<Flag> active = definitions.stream().filter(f -> f.active() && !f.deleted())
                    .sorted(java.util.Comparator.comparing(FlagDefinition::key))
                    .map(f -> new Flag(f, f.needsPersonProperties() || f.ensureExperienceContinuity())).toList();
            final java.util.Set<Long> cohortIds = new java.util.TreeSet<>();
            active.forEach(f -> cohortIds.addAll(f.definition().cohortIds()));
            return new ProjectFlags(active, active.stream().filter(f -> f.definition().ensureExperienceContinuity())
                    .map(f -> f.definition().key()).toList(), active.stream().anyMatch(Flag::needsPerson), cohortIds);
        }
    }

    /** @param needsPerson whether it cannot be answered truthfully without the person */
    private record Flag(FlagDefinition definition, boolean needsPerson) {
    }

    /**
     * The outcome of reading the person.
     *
     * @param readable whether the read succeeded (an unreadable person leaves out the flags that need it)
     * @param person   the person, if the distinct id has one
     */
    private record PersonRead(boolean readable, Optional<PersonState> person) {
        static final PersonRead UNREADABLE = new PersonRead(false, Optional.empty());
        static final PersonRead NOT_NEEDED = new PersonRead(true, Optional.empty());
    }

    /**
     * What the flags are evaluated from.
     *
     * @param overrides continuity flags' hash keys; empty when they could not be read
     */
    private record Inputs(PersonRead person, Optional<Map<String, String>> overrides, Map<Integer, String> groupTypes,
                          Map<String, ObjectNode> groups, Map<Long, Cohort> cohorts) {
    }

    public Future<Evaluation> evaluate(final Request request) {
        return definitions(request.projectId()).compose(flags -> {
            final Future<PersonRead> person = flags.needsPerson()
                    ? persons.byDistinctId(request.projectId(), request.token(), request.distinctId())
                            .map(p -> new PersonRead(true, p)).otherwise(e -> {
                                LOG.debug("person of {} unreadable for /decide: {}", request.distinctId(), e.getMessage());
                                return PersonRead.UNREADABLE;
                            })
                    : Future.succeededFuture(PersonRead.NOT_NEEDED);
            final Future<Map<Long, Cohort>> named = flags.cohortIds().isEmpty() ? Future.succeededFuture(Map.of())
                    : cached(cohortCache.get(request.projectId()));
            return person.compose(read -> continuityKeys(request, flags.continuity(), read)
                    .compose(overrides -> groupTypes(request.projectId())
                            .compose(types -> groupProperties(request, types)
                                    .compose(groups -> named.map(cohortsNamed -> evaluate(request, flags,
                                            new Inputs(read, overrides, types, groups, cohortsNamed)))))));
        });
    }

    private static Evaluation evaluate(final Request request, final ProjectFlags flags, final Inputs inputs) {
        // Each store read deserializes a new person, so its properties are this request's own to override.
        final ObjectNode properties = inputs.person().person().map(PersonState::properties)
                .orElseGet(() -> Json.mapper().createObjectNode());
        properties.setAll(request.personProperties());
        final Instant now = Instant.now();
        final PropertyFilter.Source person = PropertyFilter.Source.ofPerson(properties, inputs.person().person().map(PersonState::distinctIds)
                .orElse(List.of(request.distinctId())));
        final FlagEvaluator.Subject subject = new FlagEvaluator.Subject(request.distinctId(), properties, request.groups(),
                inputs.groups(), inputs.groupTypes(), now, id -> Optional.ofNullable(inputs.cohorts().get(id)).map(c -> c.contains(person, now)));
        final List<FlagEvaluator.Result> results = new ArrayList<>(flags.active().size());
        final Map<String, FlagDefinition> byKey = new LinkedHashMap<>();
        boolean errors = false;
        for (final Flag entry : flags.active()) {
            final FlagDefinition flag = entry.definition();
            if (request.flagKeys().isPresent() && !request.flagKeys().get().contains(flag.key())) {
                continue;
            }
            // Without the person (or, for continuity, its hash key), a flag cannot be answered truthfully.
            if (entry.needsPerson() && !inputs.person().readable()
                    || flag.ensureExperienceContinuity() && inputs.overrides().isEmpty()) {
                errors = true;
                continue;
            }
            final FlagEvaluator.Subject hashed = flag.ensureExperienceContinuity()
                    ? subject.hashedAs(inputs.overrides().get().getOrDefault(flag.key(),
                            request.anonDistinctId().orElse(request.distinctId())))
                    : subject;
            results.add(FlagEvaluator.evaluate(flag, hashed));
            byKey.put(flag.key(), flag);
        }
        return new Evaluation(results, byKey, errors);
    }

    /**
     * The hash keys of the continuity flags ({@link HashKeyOverrides}): empty when they cannot be known (the person
     * or PostgreSQL unavailable). A flag without one is hashed with the {@code $anon_distinct_id}, else the
     * distinct id, as in PostHog.
     */
    private Future<Optional<Map<String, String>>> continuityKeys(final Request request, final List<String> continuity,
                                                               final PersonRead read) {
        if (continuity.isEmpty()) {
            return Future.succeededFuture(Optional.of(Map.of()));
        }
        if (!read.readable()) {
            return Future.succeededFuture(Optional.empty());
        }
        final Future<Optional<PersonState>> anonPerson = request.anonDistinctId().isEmpty()
                ? Future.succeededFuture(Optional.empty())
                : persons.byDistinctId(request.projectId(), request.token(), request.anonDistinctId().get());
        // Without any person yet there is nothing to remember a key for: such flags are hashed with the fallback.
        return anonPerson.compose(anon -> overrides.resolve(request.projectId(), read.person(), anon, request.anonDistinctId(),
                        continuity))
                .map(Optional::of)
                .otherwise(e -> {
                    LOG.warn("experience continuity keys of {} unreadable: {}", request.distinctId(), e.toString());
                    return Optional.empty();
                });
    }

    /**
     * Makes the reads of definitions and group types known to {@code scatter}, once per process whatever its role: a
     * streams-only instance answers them for the gateways.
     */
    public static void registerReads(final Scatter scatter) {
        scatter.register(DEFINITIONS, GlobalJsonRead.flagDefinitions());
        scatter.register(GROUP_TYPES, GlobalJsonRead.groupTypes());
    }

    /** Whether the project has a live, active flag (remote config's {@code hasFeatureFlags}). */
    public Future<Boolean> hasActiveFlags(final long projectId) {
        return definitions(projectId).map(flags -> !flags.active().isEmpty());
    }

    /** The project's live, active flags (cached for {@link #DEFINITIONS_TTL}). */
    /** The cohorts the project's flags name, whole; one that cannot be read is left out (its conditions match nobody). */
    private Future<Map<Long, Cohort>> loadCohorts(final long projectId) {
        return definitions(projectId).compose(flags -> cohorts.resolve(projectId, flags.cohortIds())).map(whole -> {
            final Map<Long, Cohort> parsed = new java.util.HashMap<>();
            whole.forEach((id, definition) -> {
                try {
                    parsed.put(id, Cohort.parse(definition));
                } catch (final IllegalArgumentException e) {
                    LOG.warn("cohort {} of project {} cannot be evaluated: {}", id, projectId, e.getMessage());
                }
            });
            return parsed;
        });
    }

    private Future<ProjectFlags> definitions(final long projectId) {
        return cached(definitionCache.get(projectId));
    }

    private Future<ProjectFlags> loadDefinitions(final long projectId) {
        return scatter.<JsonNode>gather(DEFINITIONS, project(projectId), QueryControl.within(LOAD_TIMEOUT))
                .map(found -> {
                    final List<FlagDefinition> definitions = new ArrayList<>();
                    found.forEach(definition -> definitions.add(FlagDefinition.of(definition)));
                    return definitions;
                })
                // Without a streams instance to read them, from PostgreSQL, their source.
                .recover(e -> repository.live(projectId).map(flags -> flags.stream().map(f -> FlagDefinition.of(f.definition())).toList()))
                .map(ProjectFlags::of);
    }

    private static ObjectNode project(final long projectId) {
        return Json.mapper().createObjectNode().put("project_id", projectId);
    }

    /** The project's group type indexes to names (cached for {@link #DEFINITIONS_TTL}). */
    public Future<Map<Integer, String>> groupTypes(final long projectId) {
        return cached(groupTypeCache.get(projectId));
    }

    /** A cached value at once (the usual case), else once loaded, back on the caller's context. */
    private static <T> Future<T> cached(final CompletableFuture<T> value) {
        if (value.isDone() && !value.isCompletedExceptionally()) {
            return Future.succeededFuture(value.join());
        }
        return Future.fromCompletionStage(value, io.vertx.core.Vertx.currentContext());
    }

    private Future<Map<Integer, String>> loadGroupTypes(final long projectId) {
        return scatter.<JsonNode>gather(GROUP_TYPES, project(projectId), QueryControl.within(LOAD_TIMEOUT)).map(found -> {
            final Map<Integer, String> byIndex = new HashMap<>();
            found.properties().forEach(type -> byIndex.put(Integer.parseInt(type.getKey()), type.getValue().asText()));
            return byIndex;
        }).otherwise(Map.of());
    }

    private Future<Map<String, ObjectNode>> groupProperties(final Request request, final Map<Integer, String> types) {
        final Map<String, ObjectNode> result = new HashMap<>();
        Future<Void> chain = Future.succeededFuture();
        for (final Map.Entry<Integer, String> type : types.entrySet()) {
            final String key = request.groups().get(type.getValue());
            if (key == null) {
                continue;
            }
            chain = chain.compose(v -> persons.group(request.projectId(), type.getKey(), key).otherwise(Optional.empty()).map(g -> {
                final ObjectNode properties = g.map(GroupState::properties).orElse(Json.mapper().createObjectNode()).deepCopy();
                Optional.ofNullable(request.groupProperties().get(type.getValue())).ifPresent(properties::setAll);
                result.put(type.getValue(), properties);
                return null;
            }));
        }
        return chain.map(v -> result);
    }
}
