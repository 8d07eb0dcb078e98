package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.QueryTranslation;
import dev.eddy.gateway.trends.InsightActors;
import dev.eddy.gateway.trends.InsightPersonsRoutes;
import dev.eddy.gateway.trends.PersonsUrls;
import dev.eddy.query.insights.InsightEngine;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.List;

/**
 * PostHog's query nodes naming the persons behind an insight's number, the {@code source} of an {@code ActorsQuery},
 * as the request of the legacy persons pages ({@link InsightActors}):
 * <ul>
 *   <li>{@code InsightActorsQuery} over a {@code TrendsQuery}: {@code series} (its index, default 0), {@code day} (the
 *   data point's interval start, as the result's {@code days} write it; absent: the whole range) and
 *   {@code breakdown} (the value); over a {@code StickinessQuery}: {@code day} the number of intervals; over a
 *   {@code LifecycleQuery}: {@code day} and {@code status}; over a {@code RetentionQuery}: {@code interval} the
 *   cohort;</li>
 *   <li>{@code FunnelsActorsQuery}: {@code funnelStep} (N: those who completed step N, -N: those who dropped off
 *   before it), {@code funnelStepBreakdown}, or a funnel trend's {@code funnelTrendsEntrancePeriodStart} and
 *   {@code funnelTrendsDropOff}.</li>
 * </ul>
 * What Eddy's persons pages cannot list (paths, a trend's previous period, correlations) is refused naming it.
 *
 * @param kind    the insight whose persons are listed
 * @param request the persons page's request: the insight's legacy filter and the number's fields
 */
public record InsightActorsQueries(InsightEngine.Kind kind, ObjectNode request) {

    /** @throws ApiError a 400 naming what cannot be listed */
    public static InsightActorsQueries of(final JsonNode source, final ZoneId zone) {
        final String kind = source.path("kind").asText();
        if (!"InsightActorsQuery".equals(kind) && !"FunnelsActorsQuery".equals(kind)) {
            throw refused("An ActorsQuery's source must be an InsightActorsQuery or a FunnelsActorsQuery, not '" + kind + "'.");
        }
        final ObjectNode filter;
        try {
            filter = QueryTranslation.toFilter(source.path("source"));
        } catch (final IllegalArgumentException e) {
            throw refused(e.getMessage());
        }
        final String insight = filter.path("insight").asText();
        if ("FunnelsActorsQuery".equals(kind) || "FUNNELS".equals(insight)) {
            return funnel(source, filter);
        }
        return switch (insight) {
            case "TRENDS" -> trend(source, filter, zone);
            case "STICKINESS" -> {
                copyRequired(source, "day", filter, "stickiness_days");
                entity(filter, series(source, filter));
                yield new InsightActorsQueries(InsightEngine.Kind.STICKINESS, filter);
            }
            case "LIFECYCLE" -> {
                copyRequired(source, "day", filter, "target_date");
                copyRequired(source, "status", filter, "lifecycle_type");
                yield new InsightActorsQueries(InsightEngine.Kind.LIFECYCLE, filter);
            }
            case "RETENTION" -> {
                copyRequired(source, "interval", filter, "selected_interval");
                yield new InsightActorsQueries(InsightEngine.Kind.RETENTION, filter);
            }
            default -> throw refused("The persons of " + source.path("source").path("kind").asText() + " insights are not listed by Eddy.");
        };
    }

    private static InsightActorsQueries trend(final JsonNode source, final ObjectNode filter, final ZoneId zone) {
        if ("previous".equals(source.path("compare").asText())) {
            throw refused("The persons of a trend's previous period (compare: previous) are not listed by Eddy.");
        }
        if (filter.hasNonNull("formula")) {
            throw refused("A formula's numbers have no persons.");
        }
        final JsonNode entity = series(source, filter);
        entity(filter, entity);
        if (source.hasNonNull("day")) {
            try {
                PersonsUrls.dataPoint(filter, entity.path("math").asText("total"), source.get("day").asText(), zone).forEach(filter::put);
            } catch (final DateTimeException e) {
                throw ApiError.badRequest("invalid_input", "'day' must be a data point's date, as the result's 'days' write it.", "day");
            }
        }
        if (source.has("breakdown")) {
            filter.put("breakdown_value", InsightPersonsRoutes.encode(source.get("breakdown")));
        }
        return new InsightActorsQueries(InsightEngine.Kind.TREND_ACTORS, filter);
    }

    private static InsightActorsQueries funnel(final JsonNode source, final ObjectNode filter) {
        if (source.hasNonNull("funnelTrendsEntrancePeriodStart")) {
            filter.put("entrance_period_start", source.get("funnelTrendsEntrancePeriodStart").asText());
            filter.put("drop_off", source.path("funnelTrendsDropOff").asBoolean(false));
        } else {
            copyRequired(source, "funnelStep", filter, "funnel_step");
            if (source.has("funnelStepBreakdown")) {
                filter.put("funnel_step_breakdown", InsightPersonsRoutes.encode(source.get("funnelStepBreakdown")));
            }
        }
        return new InsightActorsQueries(InsightEngine.Kind.FUNNEL_ACTORS, filter);
    }

    /** The series the number belongs to ({@code series}, an index in the query's order). */
    private static JsonNode series(final JsonNode source, final ObjectNode filter) {
        final List<JsonNode> all = PersonsUrls.series(filter);
        final int index = source.path("series").asInt(0);
        if (index < 0 || index >= all.size()) {
            throw ApiError.badRequest("invalid_input", "'series' must be the index of one of the query's " + all.size() + " series.", "series");
        }
        return all.get(index);
    }

    /** The series as the persons page names it. */
    private static void entity(final ObjectNode filter, final JsonNode entity) {
        filter.put("entity_id", InsightPersonsRoutes.encode(entity.path("id")));
        filter.put("entity_type", entity.path("type").asText("events"));
        filter.put("entity_math", entity.path("math").asText("total"));
        filter.put("entity_order", entity.path("order").asInt(0));
    }

    private static void copyRequired(final JsonNode source, final String from, final ObjectNode filter, final String to) {
        final JsonNode value = source.get(from);
        if (value == null || value.isNull()) {
            throw ApiError.badRequest("required", "'" + from + "' is required.", from);
        }
        filter.set(to, value.isTextual() ? value : filter.textNode(value.asText()));
    }

    private static ApiError refused(final String detail) {
        return ApiError.badRequest("unsupported_query", detail, "source");
    }
}
