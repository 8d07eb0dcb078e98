package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;

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

    private static final List<String> WRAPPERS = List.of("InsightVizNode", "DataVisualizationNode", "DataTableNode");

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
        return switch (sourceKind) {
            case "TrendsQuery", "FunnelsQuery", "StickinessQuery", "LifecycleQuery", "RetentionQuery", "PathsQuery" -> {
                try {
                    yield new InsightCalculation(switch (sourceKind) {
                        case "TrendsQuery" -> Kind.TREND;
                        case "FunnelsQuery" -> Kind.FUNNEL;
                        case "StickinessQuery" -> Kind.STICKINESS;
                        case "RetentionQuery" -> Kind.RETENTION;
                        case "PathsQuery" -> Kind.PATHS;
                        default -> Kind.LIFECYCLE;
                    }, QueryTranslation.toFilter(source), null);
                } catch (final IllegalArgumentException e) {
                    yield new InsightCalculation(Kind.INVALID, null, e.getMessage());
                }
            }
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
