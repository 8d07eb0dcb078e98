package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A breakdown by cohorts ({@code breakdown_type: cohort}): one value per cohort listed in {@code breakdown} (a list of
 * ids, its JSON text, or one id), and {@code all} for every actor, as PostHog's. An event counts under each listed
 * cohort its person is in now (so the values may add up to more than the series), and under {@code all} always.
 * The gateway inlines each cohort's definition under {@link #INLINED} (an object by id), as it inlines cohort filters.
 *
 * @param values the values in the order the breakdown lists them
 */
public record CohortBreakdown(List<Value> values) {
    /** The query's key under which the gateway inlines the definitions of the cohorts broken down by, by id. */
    public static final String INLINED = "eddy_breakdown_cohorts";
    /** The value of every actor. */
    public static final String ALL = "all";

    /**
     * One cohort broken down by.
     *
     * @param key    its key among the trend's breakdown values: the id as text, or {@code all}
     * @param label  its name ({@code all users} for all)
     * @param cohort the cohort, empty for all
     */
    public record Value(String key, String label, Optional<Cohort> cohort) {
        /** Whether the person {@code source} answers for is in it. */
        public boolean contains(final PropertyFilter.Source source, final Instant now) {
            return cohort.isEmpty() || cohort.get().contains(source, now);
        }

        /** Its {@code breakdown_value} as PostHog's trends answer it: the id as a number, or {@code "all"}. */
        public JsonNode shown() {
            return cohort.<JsonNode>map(c -> JsonNodeFactory.instance.numberNode(c.id())).orElse(JsonNodeFactory.instance.textNode(ALL));
        }
    }

    /**
     * @param breakdown the query's {@code breakdown}
     * @param inlined   the query's {@link #INLINED} definitions
     * @throws IllegalArgumentException naming an id that is not a cohort of the project, or a value that is no id
     */
    public static CohortBreakdown parse(final JsonNode breakdown, final JsonNode inlined) {
        final List<Value> values = new ArrayList<>();
        for (final JsonNode id : ids(breakdown)) {
            if (ALL.equals(id.asText())) {
                values.add(new Value(ALL, "all users", Optional.empty()));
                continue;
            }
            if (!id.canConvertToLong() && !(id.isTextual() && id.asText().matches("\\d{1,18}"))) {
                throw new IllegalArgumentException("a cohort breakdown lists cohort ids or \"all\", not " + id);
            }
            final long cohortId = id.asLong();
            final JsonNode definition = inlined == null ? null : inlined.get(Long.toString(cohortId));
            if (definition == null || !definition.isObject()) {
                throw new IllegalArgumentException("Cohort ID " + cohortId + " does not exist!");
            }
            final String key = Long.toString(cohortId);
            if (values.stream().noneMatch(v -> v.key().equals(key))) {
                values.add(new Value(key, definition.path("name").asText("Cohort " + cohortId), Optional.of(Cohort.parse(definition))));
            }
        }
        if (values.isEmpty()) {
            throw new IllegalArgumentException("a cohort breakdown needs at least one cohort id (or \"all\") in breakdown");
        }
        return new CohortBreakdown(List.copyOf(values));
    }

    /** The ids a cohort breakdown lists: a list, its JSON text, or one id (or {@code all}). */
    public static List<JsonNode> ids(final JsonNode breakdown) {
        JsonNode list = breakdown;
        if (breakdown != null && breakdown.isTextual() && breakdown.asText().trim().startsWith("[")) {
            try {
                list = Json.mapper().readTree(breakdown.asText());
            } catch (final IOException e) {
                throw new IllegalArgumentException("breakdown is not a list of cohort ids");
            }
        }
        final List<JsonNode> ids = new ArrayList<>();
        if (list == null || list.isNull() || list.isMissingNode()) {
            return ids;
        }
        if (list.isArray()) {
            list.forEach(ids::add);
        } else {
            ids.add(list);
        }
        return ids;
    }

    /** The value of key {@code key}, if listed. */
    public Optional<Value> value(final String key) {
        return values.stream().filter(v -> v.key().equals(key)).findFirst();
    }

    /** Where a key is in the breakdown's list (those not listed last). */
    public int rank(final String key) {
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i).key().equals(key)) {
                return i;
            }
        }
        return values.size();
    }
}
