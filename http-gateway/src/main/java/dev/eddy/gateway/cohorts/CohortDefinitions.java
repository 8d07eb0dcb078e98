package dev.eddy.gateway.cohorts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.trends.QueryInliner;
import dev.eddy.trends.Cohort;
import dev.eddy.trends.CohortBreakdown;
import io.vertx.core.Future;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Cohorts as the engine and the flags read them: each with the cohorts it names inlined into its filters (so a
 * definition is whole on its own) and a static one with its members. As a {@link QueryInliner}, puts them into every
 * cohort filter of a query ({@code {"key": "id", "type": "cohort", "value": 5}}, under {@link Cohort#INLINED}). A
 * cohort the project does not have (or has deleted), or one in a loop of cohorts, is left out: the engine then
 * refuses the query with {@code Cohort ID 5 does not exist!}, and a flag condition naming it matches nobody.
 */
public final class CohortDefinitions implements QueryInliner {
    /** How deep cohorts may name cohorts that name cohorts. */
    private static final int MAX_DEPTH = 20;

    private final CohortRepository cohorts;

    public CohortDefinitions(final CohortRepository cohorts) {
        this.cohorts = cohorts;
    }

    @Override
    public Future<JsonNode> inline(final long projectId, final JsonNode query) {
        final List<ObjectNode> filters = new ArrayList<>();
        cohortFilters(query, filters::add);
        final Set<Long> brokenDownBy = brokenDownBy(query);
        if (filters.isEmpty() && brokenDownBy.isEmpty() && !query.has(CohortBreakdown.INLINED)) {
            return Future.succeededFuture(query);
        }
        final JsonNode copy = query.deepCopy();
        ((ObjectNode) copy).remove(CohortBreakdown.INLINED);
        final List<ObjectNode> copied = new ArrayList<>();
        cohortFilters(copy, copied::add);
        final Set<Long> ids = new TreeSet<>(brokenDownBy);
        copied.forEach(f -> id(f).ifPresent(ids::add));
        return resolve(projectId, ids).map(found -> {
            for (final ObjectNode filter : copied) {
                filter.remove(Cohort.INLINED);
                id(filter).map(found::get).ifPresent(definition -> filter.set(Cohort.INLINED, definition));
            }
            if (!brokenDownBy.isEmpty()) {
                // The cohorts of a cohort breakdown, by id: those the project does not have are left out (the engine names them).
                final ObjectNode definitions = ((ObjectNode) copy).putObject(CohortBreakdown.INLINED);
                brokenDownBy.forEach(id -> {
                    if (found.containsKey(id)) {
                        definitions.set(Long.toString(id), found.get(id));
                    }
                });
            }
            return copy;
        });
    }

    /** The ids of the cohorts a query breaks down by ({@code breakdown_type: cohort}), {@code all} left out. */
    static Set<Long> brokenDownBy(final JsonNode query) {
        final Set<Long> ids = new TreeSet<>();
        if (query.isObject() && "cohort".equals(query.path("breakdown_type").asText())) {
            try {
                for (final JsonNode id : CohortBreakdown.ids(query.get("breakdown"))) {
                    if (id.canConvertToLong() || id.isTextual() && id.asText().matches("\\d{1,18}")) {
                        ids.add(id.asLong());
                    }
                }
            } catch (final IllegalArgumentException e) {
                // Not a list of ids: the engine refuses the breakdown, naming it.
            }
        }
        return ids;
    }

    /** The whole definitions of the project's live cohorts among {@code ids}. */
    public Future<Map<Long, ObjectNode>> resolve(final long projectId, final Set<Long> ids) {
        return load(projectId, ids, new HashMap<>(), 0).compose(loaded -> {
            final List<Long> statics = loaded.values().stream().filter(SavedCohort::isStatic).map(SavedCohort::id).toList();
            for (final Long id : statics) {
                if (loaded.get(id).members() > CohortRepository.MAX_MEMBERS) {
                    return Future.failedFuture(ApiError.badRequest("invalid_input", "Cohort " + id + " has more than "
                            + CohortRepository.MAX_MEMBERS + " members; Eddy answers queries of static cohorts up to that size.", null));
                }
            }
            return cohorts.members(statics).map(members -> {
                final Map<Long, ObjectNode> whole = new HashMap<>();
                for (final Long id : ids) {
                    definition(id, loaded, members, new ArrayDeque<>()).ifPresent(d -> whole.put(id, d));
                }
                return whole;
            });
        });
    }

    /** {@code ids} and the cohorts they name, to {@link #MAX_DEPTH}. */
    private Future<Map<Long, SavedCohort>> load(final long projectId, final Set<Long> ids, final Map<Long, SavedCohort> loaded,
                                                final int depth) {
        final Set<Long> missing = new TreeSet<>(ids);
        missing.removeAll(loaded.keySet());
        if (missing.isEmpty() || depth > MAX_DEPTH) {
            return Future.succeededFuture(loaded);
        }
        return cohorts.some(projectId, missing).compose(found -> {
            loaded.putAll(found);
            final Set<Long> named = new HashSet<>();
            found.values().stream().filter(c -> !c.isStatic()).forEach(c -> cohortFilters(c.properties(), f -> id(f).ifPresent(named::add)));
            return load(projectId, named, loaded, depth + 1);
        });
    }

    private static Optional<ObjectNode> definition(final long id, final Map<Long, SavedCohort> loaded, final Map<Long, List<String>> members,
                                                   final Deque<Long> path) {
        final SavedCohort cohort = loaded.get(id);
        if (cohort == null || path.contains(id)) {
            return Optional.empty();
        }
        final ObjectNode definition = cohort.definition();
        if (cohort.isStatic()) {
            final var list = definition.putArray("members");
            members.getOrDefault(id, List.of()).forEach(list::add);
            return Optional.of(definition);
        }
        path.push(id);
        cohortFilters(definition.path("filters").path("properties"), leaf -> {
            leaf.remove(Cohort.INLINED);
            id(leaf).flatMap(nested -> definition(nested, loaded, members, path)).ifPresent(d -> leaf.set(Cohort.INLINED, d));
        });
        path.pop();
        return Optional.of(definition);
    }

    /** Every cohort filter in {@code node}, not looking into definitions already inlined. */
    static void cohortFilters(final JsonNode node, final Consumer<ObjectNode> into) {
        if (node.isObject()) {
            if ("cohort".equals(node.path("type").asText()) && node.has("value")) {
                into.accept((ObjectNode) node);
            }
            node.fields().forEachRemaining(field -> {
                if (!Cohort.INLINED.equals(field.getKey())) {
                    cohortFilters(field.getValue(), into);
                }
            });
        } else if (node.isArray()) {
            node.forEach(child -> cohortFilters(child, into));
        }
    }

    /** Whether a whole definition is, or names somewhere within it, cohort {@code id}. */
    static boolean names(final JsonNode definition, final long id) {
        if (definition.path("id").asLong(-1) == id) {
            return true;
        }
        final boolean[] found = {false};
        cohortFilters(definition.path("filters").path("properties"), leaf -> {
            final JsonNode inlined = leaf.get(Cohort.INLINED);
            found[0] |= CohortDefinitions.id(leaf).map(v -> v == id).orElse(false) || inlined != null && names(inlined, id);
        });
        return found[0];
    }

    static Optional<Long> id(final JsonNode filter) {
        final JsonNode value = filter.get("value");
        if (value != null && value.isIntegralNumber() && value.canConvertToLong()) {
            return Optional.of(value.asLong());
        }
        if (value != null && value.isTextual() && value.asText().matches("\\d{1,18}")) {
            return Optional.of(Long.parseLong(value.asText()));
        }
        return Optional.empty();
    }
}
