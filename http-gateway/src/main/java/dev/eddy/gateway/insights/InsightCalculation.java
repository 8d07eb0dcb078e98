package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;

/**
 * What calculating a saved insight means: a trend or a funnel over a legacy filter, nothing (an insight that defines
 * no query yet), or a kind Eddy cannot calculate, with the reason. A {@code query} wins over {@code filters}, as in
 * PostHog; it is an {@code InsightVizNode} wrapping a {@code TrendsQuery} or {@code FunnelsQuery} (or that query
 * itself), translated by {@link QueryTranslation}. Legacy {@code filters} without {@code insight} are a trend. Dashboard
 * overrides are applied before ({@link DashboardOverride}).
 *
 * @param kind        what to run
 * @param filter      the legacy filter for {@link Kind#TREND} and {@link Kind#FUNNEL}
 * @param problem     why Eddy cannot calculate it, for {@link Kind#UNSUPPORTED} and {@link Kind#INVALID}
 */
public record InsightCalculation(Kind kind, ObjectNode filter, String problem) {

    public enum Kind {
        TREND, FUNNEL,
        /** Defines no query yet: there is nothing to calculate. */
        NOTHING,
        /** A kind of insight Eddy does not calculate: never calculated, its status says why. */
        UNSUPPORTED,
        /** A trend or funnel asking for what Eddy cannot answer: calculating it fails as the engine's refusals do. */
        INVALID
    }

    private static final List<String> WRAPPERS = List.of("InsightVizNode", "DataVisualizationNode", "DataTableNode");
    private static final List<String> LEGACY_OTHERS = List.of("RETENTION", "PATHS", "STICKINESS", "LIFECYCLE");

    public static InsightCalculation of(final JsonNode filters, final JsonNode query) {
        if (query != null && query.isObject() && !query.isEmpty()) {
            return ofQuery(query);
        }
        if (filters == null || !filters.isObject() || filters.isEmpty()) {
            return new InsightCalculation(Kind.NOTHING, null, null);
        }
        final String insight = filters.path("insight").asText("TRENDS").toUpperCase(Locale.ROOT);
        if ("TRENDS".equals(insight) || "FUNNELS".equals(insight)) {
            return new InsightCalculation("TRENDS".equals(insight) ? Kind.TREND : Kind.FUNNEL, ((ObjectNode) filters).deepCopy(), null);
        }
        if (LEGACY_OTHERS.contains(insight)) {
            return unsupported(insight.charAt(0) + insight.substring(1).toLowerCase(Locale.ROOT) + " insights are not supported by Eddy yet.");
        }
        return unsupported("Unknown insight type '" + filters.path("insight").asText() + "'.");
    }

    private static InsightCalculation ofQuery(final JsonNode query) {
        final String kind = query.path("kind").asText();
        final JsonNode source = WRAPPERS.contains(kind) ? query.path("source") : query;
        final String sourceKind = source.path("kind").asText();
        return switch (sourceKind) {
            case "TrendsQuery", "FunnelsQuery" -> {
                try {
                    yield new InsightCalculation(QueryTranslation.isTrend(source) ? Kind.TREND : Kind.FUNNEL,
                            QueryTranslation.toFilter(source), null);
                } catch (final IllegalArgumentException e) {
                    yield new InsightCalculation(Kind.INVALID, null, e.getMessage());
                }
            }
            case "RetentionQuery", "PathsQuery", "StickinessQuery", "LifecycleQuery" ->
                    unsupported(sourceKind.replace("Query", "") + " insights are not supported by Eddy yet.");
            case "HogQLQuery" -> unsupported("SQL (HogQL) insights are not supported by Eddy yet.");
            case "" -> unsupported("The insight's query has no kind.");
            default -> unsupported("Insights of kind " + sourceKind + " are not supported by Eddy yet.");
        };
    }

    private static InsightCalculation unsupported(final String reason) {
        return new InsightCalculation(Kind.UNSUPPORTED, null, reason);
    }

    /** The query's interval name, for the freshness thresholds (PostHog's default: day). */
    public String interval() {
        return filter == null ? "day" : filter.path("interval").asText("day");
    }
}
