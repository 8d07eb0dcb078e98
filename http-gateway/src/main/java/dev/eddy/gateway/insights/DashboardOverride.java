package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;

/**
 * An insight as shown on a dashboard ({@code from_dashboard}, dashboard tiles), as PostHog's query runners apply a
 * dashboard's filters ({@code apply_dashboard_filters}):
 * <ul>
 *   <li>a dashboard with {@code date_from} or {@code date_to} replaces the insight's whole date range (a missing
 *       {@code date_to} means now); with {@code date_from: all}, a trend's comparison to the previous period is off,
 *       there being no period before all time;</li>
 *   <li>the dashboard's {@code properties} narrow the insight's: both must match (lists are joined, groups nested
 *       under an AND);</li>
 *   <li>nothing else of the dashboard's filters applies.</li>
 * </ul>
 * It applies to legacy {@code filters} and to a query's source ({@code dateRange}, {@code properties},
 * {@code compareFilter}) alike.
 */
public final class DashboardOverride {

    private DashboardOverride() {
    }

    public static Insight apply(final Insight insight, final JsonNode dashboardFilters) {
        if (!overrides(dashboardFilters)) {
            return insight;
        }
        final JsonNode filters = insight.filters() != null && insight.filters().isObject() && !insight.filters().isEmpty()
                ? legacy((ObjectNode) insight.filters().deepCopy(), dashboardFilters) : insight.filters();
        return insight.withDefinition(filters, insight.query() == null || !insight.query().isObject() ? insight.query()
                : query((ObjectNode) insight.query().deepCopy(), dashboardFilters));
    }

    /** A query node (or its wrapper) as {@link #apply} shows it under {@code dashboardFilters} (the Query API's {@code filters_override}). */
    public static JsonNode applyToQuery(final JsonNode query, final JsonNode dashboardFilters) {
        return !overrides(dashboardFilters) || !query.isObject() ? query : query((ObjectNode) query.deepCopy(), dashboardFilters);
    }

    /** Whether the dashboard's filters change anything. */
    private static boolean overrides(final JsonNode dashboard) {
        return dashboard != null && dashboard.isObject()
                && (dashboard.hasNonNull("date_from") || dashboard.hasNonNull("date_to") || hasProperties(dashboard.path("properties")));
    }

    /** Legacy filters with the dashboard's applied. */
    static ObjectNode legacy(final ObjectNode filters, final JsonNode dashboard) {
        if (dashboard.hasNonNull("date_from") || dashboard.hasNonNull("date_to")) {
            setOrRemove(filters, "date_from", dashboard.path("date_from"));
            setOrRemove(filters, "date_to", dashboard.path("date_to"));
            if ("all".equals(dashboard.path("date_from").asText()) && filters.path("compare").asBoolean(false)) {
                filters.put("compare", false);
            }
        }
        if (hasProperties(dashboard.path("properties"))) {
            filters.set("properties", combined(filters.path("properties"), dashboard.get("properties")));
        }
        return filters;
    }

    /** A query node (or its wrapper) with the dashboard's filters applied to its source. */
    static ObjectNode query(final ObjectNode query, final JsonNode dashboard) {
        final boolean wrapped = InsightCalculation.WRAPPERS.contains(query.path("kind").asText());
        if (wrapped && !query.path("source").isObject()) {
            return query;
        }
        final ObjectNode source = wrapped ? (ObjectNode) query.get("source") : query;
        if (dashboard.hasNonNull("date_from") || dashboard.hasNonNull("date_to")) {
            final ObjectNode range = source.path("dateRange").isObject() ? (ObjectNode) source.get("dateRange") : source.putObject("dateRange");
            setOrRemove(range, "date_from", dashboard.path("date_from"));
            setOrRemove(range, "date_to", dashboard.path("date_to"));
            if ("all".equals(dashboard.path("date_from").asText()) && source.path("compareFilter").path("compare").asBoolean(false)) {
                ((ObjectNode) source.get("compareFilter")).put("compare", false);
            }
        }
        if (hasProperties(dashboard.path("properties"))) {
            source.set("properties", combined(source.path("properties"), dashboard.get("properties")));
        }
        return query;
    }

    /** Both property filters: a list joined to a list, otherwise each as a group under an AND. */
    static JsonNode combined(final JsonNode own, final JsonNode dashboard) {
        if (!hasProperties(own)) {
            return dashboard.deepCopy();
        }
        if (own.isArray() && dashboard.isArray()) {
            final ArrayNode joined = own.deepCopy();
            joined.addAll((ArrayNode) dashboard.deepCopy());
            return joined;
        }
        final ObjectNode and = Json.mapper().createObjectNode();
        and.put("type", "AND");
        and.putArray("values").add(group(own)).add(group(dashboard));
        return and;
    }

    private static JsonNode group(final JsonNode properties) {
        if (properties.isObject() && properties.has("values")) {
            return properties.deepCopy();
        }
        final ObjectNode group = Json.mapper().createObjectNode();
        group.put("type", "AND");
        group.set("values", properties.isArray() ? properties.deepCopy() : Json.mapper().createArrayNode().add(properties.deepCopy()));
        return group;
    }

    private static boolean hasProperties(final JsonNode properties) {
        return properties.isArray() ? !properties.isEmpty()
                : properties.isObject() && !properties.isEmpty() && !(properties.has("values") && properties.get("values").isEmpty());
    }

    private static void setOrRemove(final ObjectNode target, final String field, final JsonNode value) {
        if (value.isMissingNode() || value.isNull()) {
            target.remove(field);
        } else {
            target.set(field, value.deepCopy());
        }
    }
}
