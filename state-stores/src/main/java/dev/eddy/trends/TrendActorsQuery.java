package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The persons behind one number of a trend, as PostHog's {@code persons/trends/} endpoint answers them: the persons
 * whose events one series counted between {@code date_from} and {@code date_to} (a data point's interval, as its
 * {@code persons_urls} give it), optionally for one {@code breakdown_value}, each with how many of the series' events
 * it had there ({@code value_at_data_point}), most first. It is the trend of that one series, its filters and
 * breakdown, counted per person ({@link TrendMath#AVG_COUNT_PER_ACTOR} keeps each person's events), so it reads what
 * trends read; the whole answers a page of persons (their uuids) and how many there are.
 */
public final class TrendActorsQuery {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final TrendQuery trend;
    private final Optional<String> breakdownValue;
    private final int limit;
    private final int offset;

    private TrendActorsQuery(final TrendQuery trend, final Optional<String> breakdownValue, final int limit, final int offset) {
        this.trend = trend;
        this.breakdownValue = breakdownValue;
        this.limit = limit;
        this.offset = offset;
    }

    /**
     * @param request the trend's filter with the data point's {@code entity_id}, {@code entity_type}
     *                ({@code events}/{@code actions}, an action inlined), {@code entity_math}, {@code date_from},
     *                {@code date_to}, {@code breakdown_value}, and the page's {@code limit} and {@code offset}
     * @throws IllegalArgumentException naming what is wrong with the request, or what Eddy does not answer yet
     */
    public static TrendActorsQuery parse(final JsonNode request, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                         final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!request.isObject()) {
            throw new IllegalArgumentException("a persons request must be an object");
        }
        if (!request.has("entity_id")) {
            throw new IllegalArgumentException("entity_id is required: the series whose persons to list");
        }
        final String type = request.path("entity_type").asText("events");
        final JsonNode math = request.get("entity_math");
        if (math != null && "unique_group".equals(math.asText())) {
            throw new IllegalArgumentException("the groups behind a number are not listed by Eddy yet");
        }
        final ObjectNode asTrend = NODES.objectNode();
        for (final String copied : List.of("properties", "filter_test_accounts", "breakdown", "breakdown_type", "breakdown_group_type_index",
                "breakdown_normalize_url", "breakdowns", CohortBreakdown.INLINED, "date_from", "date_to")) {
            if (request.has(copied)) {
                asTrend.set(copied, request.get(copied));
            }
        }
        // The series: the request's entity (an action inlined by the gateway), counted per person.
        final ObjectNode series = request.path("entity").isObject() ? ((ObjectNode) request.get("entity")).deepCopy() : NODES.objectNode();
        series.set("id", request.get("entity_id"));
        series.put("type", type);
        series.put("order", 0);
        series.put("math", TrendMath.AVG_COUNT_PER_ACTOR.name().toLowerCase(java.util.Locale.ROOT));
        series.remove(List.of("math_property", "math_group_type_index"));
        asTrend.putArray("actions".equals(type) ? "actions" : "events").add(series);
        // An hourly trend's points keep their bounds to the hour; every other point spans whole days, read by the day
        // (a month's point is 31 cells of per-person counts, not 744), a date alone ending at the end of its day.
        asTrend.put("interval", List.of("hour", "minute").contains(request.path("interval").asText("day")) ? "hour" : "day");
        asTrend.put("breakdown_limit", Integer.MAX_VALUE);
        final int limit = Math.max(1, Math.min(request.path("limit").asInt(100), 10_000));
        final int offset = Math.max(0, request.path("offset").asInt(0));
        final Optional<String> value = request.hasNonNull("breakdown_value") ? Optional.of(text(request.get("breakdown_value"))) : Optional.empty();
        return new TrendActorsQuery(TrendQuery.parse(asTrend, zone, weekStart, testAccountFilters, now, earliest), value, limit, offset);
    }

    /** The trend of the one series whose partials this query reads. */
    public TrendQuery trend() {
        return trend;
    }

    /** {@code {count, actors: [[uuid, events], ...]}}: the page's persons, most events first (then by uuid). */
    public ObjectNode result(final TrendQuery.Partial whole) {
        final SeriesPartial series = whole.seriesPartial(0);
        final Map<String, Long> events = new HashMap<>();
        series.cells().forEach((key, row) -> {
            if (breakdownValue.isEmpty() || key.equals(breakdownValue.get())) {
                for (final SeriesPartial.Cell cell : row) {
                    if (cell != null && cell.actorEvents != null) {
                        cell.actorEvents.forEach((actor, n) -> events.merge(actor, n, Long::sum));
                    }
                }
            }
        });
        final List<Map.Entry<String, Long>> ranked = new ArrayList<>(events.entrySet());
        ranked.sort(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
        final ObjectNode result = NODES.objectNode();
        result.put("count", ranked.size());
        final ArrayNode actors = result.putArray("actors");
        for (int i = offset; i < Math.min(ranked.size(), (long) offset + limit); i++) {
            actors.addArray().add(ranked.get(i).getKey()).add(ranked.get(i).getValue());
        }
        return result;
    }

    /** A breakdown value as the trend keys it: several values (a list) joined. */
    private static String text(final JsonNode value) {
        if (value.isArray()) {
            final List<String> values = new ArrayList<>();
            value.forEach(v -> values.add(v.isNull() ? TrendEvent.NULL_BREAKDOWN : PropertyFilter.text(v)));
            return String.join(TrendQuery.Breakdown.SEPARATOR, values);
        }
        return PropertyFilter.text(value);
    }
}
