package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.util.Iterator;
import java.util.Map;

/**
 * An insight as shown on a dashboard ({@code from_dashboard}): the dashboard's filters override the insight's
 * (date range, interval, breakdown, ...), except {@code properties}, which add to the insight's own: a dashboard
 * narrows its insights, it does not widen them.
 */
public final class DashboardOverride {
    private DashboardOverride() {
    }

    public static Insight apply(final Insight insight, final JsonNode dashboardFilters) {
        if (dashboardFilters == null || !dashboardFilters.isObject() || dashboardFilters.isEmpty()) {
            return insight;
        }
        final ObjectNode filters = insight.filters() != null && insight.filters().isObject()
                ? (ObjectNode) insight.filters().deepCopy() : Json.mapper().createObjectNode();
        for (final Iterator<Map.Entry<String, JsonNode>> it = dashboardFilters.fields(); it.hasNext();) {
            final Map.Entry<String, JsonNode> field = it.next();
            if ("properties".equals(field.getKey()) && field.getValue().isArray() && filters.path("properties").isArray()) {
                final ArrayNode combined = ((ArrayNode) filters.get("properties")).deepCopy();
                combined.addAll((ArrayNode) field.getValue());
                filters.set("properties", combined);
            } else if (!field.getValue().isNull()) {
                filters.set(field.getKey(), field.getValue());
            }
        }
        return new Insight(insight.id(), insight.shortId(), insight.name(), insight.derivedName(), filters, insight.query(),
                insight.order(), insight.deleted(), insight.dashboards(), insight.dashboardTiles(), insight.lastRefresh(),
                insight.cacheTargetAge(), insight.nextAllowedClientRefresh(), insight.result(), insight.hasMore(), insight.columns(),
                insight.createdAt(), insight.createdBy(), insight.description(), insight.updatedAt(), insight.tags(), insight.favorited(),
                insight.saved(), insight.lastModifiedAt(), insight.lastModifiedBy(), insight.isSample(), insight.effectiveRestrictionLevel(),
                insight.effectivePrivilegeLevel(), insight.userAccessLevel(), insight.timezone(), insight.isCached(), insight.queryStatus(),
                insight.hogql(), insight.types());
    }
}
