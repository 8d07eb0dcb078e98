package dev.eddy.gateway.cohorts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import dev.eddy.trends.PropertyFilter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A dynamic cohort's {@code filters} as PostHog validates them: {@code {"properties": group}}, groups {@code AND}/
 * {@code OR} of groups and leaves to any depth; person leaves need a {@code key}, an {@code operator} and (but for
 * {@code is_set}/{@code is_not_set}) a {@code value}, and may be negated; cohort leaves name another cohort by
 * {@code value}. PostHog's legacy {@code groups} are turned into filters as PostHog turns them. Behavioral leaves
 * (performed an event ...) are refused: Eddy evaluates cohorts on persons' properties.
 */
public final class CohortFilters {
    private static final int MAX_LEAVES = 1000;

    private CohortFilters() {
    }

    /**
     * The filters as stored.
     *
     * @throws ApiError 400 with PostHog's message where PostHog refuses them
     */
    public static ObjectNode check(final JsonNode filters) {
        if (filters == null || filters.isNull() || filters.isObject() && filters.isEmpty()) {
            return Json.mapper().createObjectNode();
        }
        if (!filters.isObject() || !filters.has("properties")) {
            throw invalid("Must contain a 'properties' key with type and values");
        }
        final int[] leaves = {0};
        node(filters.get("properties"), leaves);
        return ((ObjectNode) filters).deepCopy();
    }

    /** PostHog's legacy {@code groups}, each an AND group of person properties, OR-ed: as {@code filters}. */
    public static ObjectNode fromGroups(final JsonNode groups) {
        if (!groups.isArray()) {
            throw ApiError.badRequest("invalid_input", "groups must be a list", "groups");
        }
        final ObjectNode filters = Json.mapper().createObjectNode();
        final ObjectNode or = filters.putObject("properties").put("type", "OR");
        final ArrayNode values = or.putArray("values");
        for (final JsonNode group : groups) {
            if (group.has("action_id") || group.has("event_id")) {
                throw behavioral();
            }
            final ObjectNode and = values.addObject().put("type", "AND");
            final ArrayNode leaves = and.putArray("values");
            final JsonNode properties = group.path("properties");
            if (properties.isObject()) {
                properties.fields().forEachRemaining((Map.Entry<String, JsonNode> p) -> leaves.addObject().put("key", p.getKey())
                        .put("type", "person").put("operator", "exact").set("value", p.getValue()));
            } else {
                for (final JsonNode p : properties) {
                    final ObjectNode leaf = ((ObjectNode) p).deepCopy();
                    if (!leaf.hasNonNull("type") || "event".equals(leaf.get("type").asText())) {
                        leaf.put("type", "person");
                    }
                    if (!leaf.hasNonNull("operator")) {
                        leaf.put("operator", "exact");
                    }
                    leaves.add(leaf);
                }
            }
        }
        return check(filters);
    }

    private static void node(final JsonNode node, final int[] leaves) {
        if (node.isObject() && node.has("values")) {
            final String type = node.path("type").asText();
            if (!List.of("AND", "OR").contains(type)) {
                throw invalid("A group's type must be AND or OR, got '" + type + "'");
            }
            if (!node.get("values").isArray()) {
                throw invalid("A group's values must be a list");
            }
            node.get("values").forEach(child -> node(child, leaves));
            return;
        }
        if (!node.isObject()) {
            throw invalid("Must contain a 'properties' key with type and values");
        }
        if (++leaves[0] > MAX_LEAVES) {
            throw invalid("A cohort has at most " + MAX_LEAVES + " filters");
        }
        switch (node.path("type").asText()) {
            case "person" -> person(node);
            case "cohort" -> {
                if (!node.has("value")) {
                    throw invalid("Missing required keys for cohort filter: value");
                }
                if (CohortDefinitions.id(node).isEmpty()) {
                    throw invalid("A cohort filter's value is the id of a cohort");
                }
            }
            case "behavioral" -> throw behavioral();
            default -> throw invalid("Cohort filters of type '" + node.path("type").asText() + "' are not supported by Eddy yet; "
                    + "use person properties or other cohorts");
        }
    }

    private static void person(final JsonNode leaf) {
        final List<String> missing = new ArrayList<>();
        final String operator = leaf.path("operator").asText("");
        if (!leaf.has("value") && !List.of("is_set", "is_not_set").contains(operator)) {
            missing.add("value");
        }
        if (!leaf.has("operator")) {
            missing.add("operator");
        }
        if (!leaf.path("key").isTextual()) {
            missing.add(0, "key");
        }
        if (!missing.isEmpty()) {
            throw invalid("Missing required keys for person filter: " + String.join(", ", missing));
        }
        try {
            final ObjectNode asFilter = ((ObjectNode) leaf).deepCopy();
            asFilter.remove("negation");
            PropertyFilter.parse(Json.mapper().createArrayNode().add(asFilter));
        } catch (final IllegalArgumentException e) {
            throw invalid(e.getMessage());
        }
    }

    private static ApiError behavioral() {
        return invalid("Behavioral cohort filters (performed an event ...) are not supported by Eddy yet; use person properties");
    }

    private static ApiError invalid(final String detail) {
        return ApiError.badRequest("invalid_input", detail, "filters");
    }
}
