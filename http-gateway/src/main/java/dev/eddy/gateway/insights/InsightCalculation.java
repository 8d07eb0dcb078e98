package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What calculating a saved insight means: a trend, a funnel, stickiness, a lifecycle, retention or paths over a legacy filter, nothing (an insight that defines
 * no query yet), or a kind Eddy cannot calculate, with the reason. A {@code query} wins over {@code filters}, as in
 * PostHog; it is an {@code InsightVizNode} wrapping a {@code TrendsQuery}, {@code FunnelsQuery}, {@code StickinessQuery},
 * {@code LifecycleQuery}, {@code RetentionQuery} or {@code PathsQuery} (or that query itself), translated by {@link QueryTranslation}. Legacy {@code filters} without
 * {@code insight} are a trend, and a trend {@code shown_as: Stickiness} or {@code Lifecycle} is that, as in PostHog. Dashboard
 * overrides are applied before ({@link DashboardOverride}).
 *
 * @param kind        what to run
 * @param filter      the legacy filter for the kinds Eddy {@link Kind#calculated calculates}
 * @param problem     why Eddy cannot calculate it, for {@link Kind#UNSUPPORTED} and {@link Kind#INVALID}
 */
public record InsightCalculation(Kind kind, ObjectNode filter, String problem) {

    public enum Kind {
        TREND, FUNNEL, STICKINESS, LIFECYCLE, RETENTION, PATHS,
        /** Defines no query yet: there is nothing to calculate. */
        NOTHING,
        /** A kind of insight Eddy does not calculate: never calculated, its status says why. */
        UNSUPPORTED,
        /** A trend or funnel asking for what Eddy cannot answer: calculating it fails as the engine's refusals do. */
        INVALID;

        /** Whether Eddy calculates insights of this kind (over {@link #filter}). */
        public boolean calculated() {
            return this != NOTHING && this != UNSUPPORTED && this != INVALID;
        }
    }

    /** Query nodes that only say how to show their {@code source}. */
    public static final List<String> WRAPPERS = List.of("InsightVizNode", "DataVisualizationNode", "DataTableNode");
    /** The insight query nodes Eddy calculates, and what each is. */
    private static final Map<String, Kind> QUERY_KINDS = Map.of("TrendsQuery", Kind.TREND, "FunnelsQuery", Kind.FUNNEL,
            "StickinessQuery", Kind.STICKINESS, "LifecycleQuery", Kind.LIFECYCLE, "RetentionQuery", Kind.RETENTION, "PathsQuery", Kind.PATHS);

    /** Whether {@code kind} names an insight query node Eddy calculates ({@code TrendsQuery}, ...). */
    public static boolean calculates(final String kind) {
        return QUERY_KINDS.containsKey(kind);
    }

    public static InsightCalculation of(final JsonNode filters, final JsonNode query) {
        if (query != null && query.isObject() && !query.isEmpty()) {
            return ofQuery(query);
        }
        if (filters == null || !filters.isObject() || filters.isEmpty()) {
            return new InsightCalculation(Kind.NOTHING, null, null);
        }
        final String insight = filters.path("insight").asText("TRENDS").toUpperCase(Locale.ROOT);
        final String shownAs = filters.path("shown_as").asText();
        if ("STICKINESS".equals(insight) || "TRENDS".equals(insight) && "Stickiness".equalsIgnoreCase(shownAs)) {
            return new InsightCalculation(Kind.STICKINESS, ((ObjectNode) filters).deepCopy(), null);
        }
        if ("LIFECYCLE".equals(insight) || "TRENDS".equals(insight) && "Lifecycle".equalsIgnoreCase(shownAs)) {
            return new InsightCalculation(Kind.LIFECYCLE, ((ObjectNode) filters).deepCopy(), null);
        }
        if ("RETENTION".equals(insight) || "PATHS".equals(insight)) {
            return new InsightCalculation(Kind.valueOf(insight), ((ObjectNode) filters).deepCopy(), null);
        }
        if ("TRENDS".equals(insight) || "FUNNELS".equals(insight)) {
            return new InsightCalculation("TRENDS".equals(insight) ? Kind.TREND : Kind.FUNNEL, ((ObjectNode) filters).deepCopy(), null);
        }
        return unsupported("Unknown insight type '" + filters.path("insight").asText() + "'.");
    }

    private static InsightCalculation ofQuery(final JsonNode query) {
        final String kind = query.path("kind").asText();
        final JsonNode source = WRAPPERS.contains(kind) ? query.path("source") : query;
        final String sourceKind = source.path("kind").asText();
        if (calculates(sourceKind)) {
            try {
                return new InsightCalculation(QUERY_KINDS.get(sourceKind), QueryTranslation.toFilter(source), null);
            } catch (final IllegalArgumentException e) {
                return new InsightCalculation(Kind.INVALID, null, e.getMessage());
            }
        }
        return switch (sourceKind) {
            case "HogQLQuery" -> unsupported("SQL (HogQL) insights are not supported by Eddy yet.");
            case "" -> unsupported("The insight's query has no kind.");
            default -> unsupported("Insights of kind " + sourceKind + " are not supported by Eddy yet.");
        };
    }

    private static InsightCalculation unsupported(final String reason) {
        return new InsightCalculation(Kind.UNSUPPORTED, null, reason);
    }

    /** The query's interval name (a retention's period), for the freshness thresholds (PostHog's default: day). */
    public String interval() {
        if (filter == null) {
            return "day";
        }
        return kind == Kind.RETENTION ? filter.path("period").asText("Day").toLowerCase(Locale.ROOT) : filter.path("interval").asText("day");
    }
}
