package dev.eddy.flags;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A feature flag as PostHog defines it, read from its JSON ({@code key}, {@code active}, {@code filters} with
 * {@code groups}, {@code multivariate}, {@code payloads}, {@code aggregation_group_type_index}).
 *
 * @param conditions        condition groups, OR-ed in order
 * @param variants          multivariate variants in order (empty for a boolean flag)
 * @param payloads          {@code payloads} by {@code "true"} or variant key
 * @param aggregationGroup  the group type index the flag is aggregated by, if any
 */
public record FlagDefinition(long id, String key, boolean active, boolean deleted, long version,
                             boolean ensureExperienceContinuity, List<Condition> conditions, List<Variant> variants,
                             JsonNode payloads, Optional<Integer> aggregationGroup) {

    /**
     * @param properties        filters that must all match
     * @param rolloutPercentage 0..100; empty means everyone
     * @param variant           the variant this condition forces, if it names a real one
     */
    public record Condition(List<Filter> properties, Optional<Double> rolloutPercentage, Optional<String> variant) {
    }

    /**
     * @param type           {@code person}, {@code group}, {@code cohort}, {@code flag}
     * @param groupTypeIndex for group filters
     */
    public record Filter(String key, JsonNode value, String operator, String type, Optional<Integer> groupTypeIndex) {
    }

    public record Variant(String key, String name, double rolloutPercentage) {
    }

    /**
     * The definition {@code json} describes, refusing JSON of another shape (what the definitions topic must carry:
     * Eddy publishes the API's flag objects there). Absent optional parts are fine; a part of the wrong kind is not.
     *
     * @throws IllegalArgumentException naming the first part of the wrong shape
     */
    public static FlagDefinition strict(final JsonNode json) {
        require(json.isObject(), "a flag definition is a JSON object");
        require(json.path("key").isTextual() && !json.get("key").asText().isEmpty(), "a flag definition has a key");
        require(json.path("id").isIntegralNumber(), "a flag definition has an integer id");
        final JsonNode filters = json.path("filters");
        require(filters.isMissingNode() || filters.isNull() || filters.isObject(), "filters is an object");
        final JsonNode groups = filters.path("groups");
        require(groups.isMissingNode() || groups.isNull() || groups.isArray(), "filters.groups is a list");
        for (final JsonNode group : groups) {
            require(group.isObject(), "each condition group is an object");
            final JsonNode properties = group.path("properties");
            require(properties.isMissingNode() || properties.isNull() || properties.isArray(), "a condition's properties are a list");
            properties.forEach(p -> require(p.isObject() && p.path("key").isTextual(), "each property filter is an object with a key"));
        }
        final JsonNode variants = filters.path("multivariate").path("variants");
        require(variants.isMissingNode() || variants.isNull() || variants.isArray(), "multivariate.variants is a list");
        variants.forEach(v -> require(v.isObject() && v.path("key").isTextual() && v.path("rollout_percentage").isNumber(),
                "each variant has a key and a rollout percentage"));
        return of(json);
    }

    private static void require(final boolean condition, final String what) {
        if (!condition) {
            throw new IllegalArgumentException("not a flag definition: " + what);
        }
    }

    public static FlagDefinition of(final JsonNode json) {
        final JsonNode filters = json.path("filters");
        final List<Condition> conditions = new ArrayList<>();
        for (final JsonNode group : filters.path("groups")) {
            final List<Filter> properties = new ArrayList<>();
            for (final JsonNode p : group.path("properties")) {
                properties.add(new Filter(p.path("key").asText(), p.get("value"),
                        p.path("operator").isTextual() ? p.get("operator").asText() : "exact",
                        p.path("type").asText("person"),
                        p.path("group_type_index").isIntegralNumber() ? Optional.of(p.get("group_type_index").asInt()) : Optional.empty()));
            }
            conditions.add(new Condition(properties,
                    group.path("rollout_percentage").isNumber() ? Optional.of(group.get("rollout_percentage").asDouble()) : Optional.empty(),
                    group.path("variant").isTextual() ? Optional.of(group.get("variant").asText()) : Optional.empty()));
        }
        final List<Variant> variants = new ArrayList<>();
        for (final JsonNode v : filters.path("multivariate").path("variants")) {
            variants.add(new Variant(v.path("key").asText(), v.path("name").asText(null), v.path("rollout_percentage").asDouble()));
        }
        return new FlagDefinition(json.path("id").asLong(), json.path("key").asText(), json.path("active").asBoolean(true),
                json.path("deleted").asBoolean(false), json.path("version").asLong(0),
                json.path("ensure_experience_continuity").asBoolean(false), conditions, variants, filters.path("payloads"),
                filters.path("aggregation_group_type_index").isIntegralNumber()
                        ? Optional.of(filters.get("aggregation_group_type_index").asInt()) : Optional.empty());
    }

    /** Whether any condition reads person properties (those need the person's store). */
    /** The cohorts its conditions name. */
    public java.util.Set<Long> cohortIds() {
        final java.util.Set<Long> ids = new java.util.TreeSet<>();
        conditions.forEach(c -> c.properties().stream().filter(f -> "cohort".equals(f.type()) && f.value() != null && f.value().canConvertToLong())
                .forEach(f -> ids.add(f.value().asLong())));
        return ids;
    }

    public boolean needsPersonProperties() {
        return conditions.stream().flatMap(c -> c.properties().stream()).anyMatch(f -> "person".equals(f.type()) || "cohort".equals(f.type()));
    }
}
