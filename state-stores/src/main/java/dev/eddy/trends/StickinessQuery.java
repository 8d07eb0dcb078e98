package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * PostHog's stickiness insight ({@code insight: STICKINESS}, or a trend {@code shown_as: Stickiness}): for each series,
 * how many actors did it in exactly 1, 2, ..., N of the range's N intervals. An actor is a person, or a group with
 * {@code math: unique_group}; every other math counts persons, as PostHog rewrites it to {@code dau}.
 *
 * <p>It is read as the trend of distinct actors per interval over the same series, filters and range (the trend's
 * partials keep each interval's actors, merged across instances), whose actors are then counted by the number of
 * intervals they appear in. So it reads what trends read, rollups included, and every number follows the trend's
 * date handling: N is the number of the trend's buckets, the interval holding {@code date_from} and the one holding
 * {@code date_to} both counting. As in PostHog, breakdowns, formulas and the display are not part of it and are
 * ignored; {@code compare} gives each series a current and a previous item.
 */
public final class StickinessQuery {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** The trend's options that have no meaning for stickiness: PostHog drops them too. */
    private static final List<String> DROPPED = TrendQuery.LINE_OPTIONS;

    private final TrendQuery trend;
    private final boolean cumulative;

    /** The bar whose actors are asked for ({@code stickiness_days}, of series {@code entity_order}), if any. */
    private final java.util.Optional<int[]> bar;
    private final ActorPage page;

    private StickinessQuery(final TrendQuery trend, final boolean cumulative, final java.util.Optional<int[]> bar, final ActorPage page) {
        this.bar = bar;
        this.page = page;
        this.trend = trend;
        this.cumulative = cumulative;
    }

    /**
     * @param query the legacy filter; besides the trend's fields, {@code computed_as} ({@code non_cumulative}, the default,
     *              or {@code cumulative}: each count of k intervals includes the actors of more); with
     *              {@code stickiness_days} (and {@code entity_order}, {@code limit}, {@code offset}) the answer is the
     *              page of that bar's actors instead ({@link ActorPage})
     * @throws IllegalArgumentException naming what is wrong with the query, or what Eddy does not answer yet
     */
    public static StickinessQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                        final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!query.isObject()) {
            throw new IllegalArgumentException("a stickiness query must be an object");
        }
        for (final String criteria : List.of("stickiness_criteria", "stickinessCriteria")) {
            if (query.hasNonNull(criteria)) {
                throw new IllegalArgumentException("stickiness criteria are not supported by Eddy yet");
            }
        }
        for (final String count : List.of("interval_count", "intervalCount")) {
            if (query.hasNonNull(count) && query.get(count).asInt(0) != 1) {
                throw new IllegalArgumentException("an interval count other than 1 is not supported by Eddy yet");
            }
        }
        final String computedAs = query.path("computed_as").asText("non_cumulative");
        if (!List.of("non_cumulative", "cumulative").contains(computedAs)) {
            throw new IllegalArgumentException("computed_as must be non_cumulative or cumulative, got '" + computedAs + "'");
        }
        final ObjectNode asTrend = ((ObjectNode) query).deepCopy();
        DROPPED.forEach(asTrend::remove);
        for (final String kind : List.of("events", "actions")) {
            for (final JsonNode entity : asTrend.path(kind)) {
                if (entity.isObject()) {
                    // Stickiness counts actors: groups when asked, persons for every other math.
                    final ObjectNode e = (ObjectNode) entity;
                    if (!"unique_group".equals(e.path("math").asText())) {
                        e.put("math", "dau");
                        e.remove("math_property");
                    }
                }
            }
        }
        final java.util.Optional<int[]> bar = query.hasNonNull("stickiness_days")
                ? java.util.Optional.of(new int[] {query.path("entity_order").asInt(0), query.get("stickiness_days").asInt()})
                : java.util.Optional.empty();
        return new StickinessQuery(TrendQuery.parse(asTrend, zone, weekStart, testAccountFilters, now, earliest), "cumulative".equals(computedAs),
                bar, ActorPage.of(query));
    }

    /** The trend of distinct actors per interval whose partials this query reads. */
    public TrendQuery trend() {
        return trend;
    }

    /** PostHog's result items from the whole trend partial: each series, and with {@code compare} its previous period after it. */
    /** What the engine answers: the page of a bar's actors when one is asked for, else {@link #result}. */
    public JsonNode answer(final TrendQuery.Partial whole) {
        return bar.isPresent() ? page.of(actors(whole, bar.get()[0], bar.get()[1])) : result(whole);
    }

    public ArrayNode result(final TrendQuery.Partial whole) {
        final ArrayNode result = NODES.arrayNode();
        final List<TrendQuery.Series> series = trend.seriesList();
        final List<DateRange> periods = trend.periods();
        for (int i = 0; i < series.size(); i++) {
            for (int r = 0; r < periods.size(); r++) {
                final ObjectNode item = item(series.get(i), periods.get(r), whole.seriesPartial(r * series.size() + i));
                if (periods.size() > 1) {
                    item.put("compare", true);
                    item.put("compare_label", r == 0 ? "current" : "previous");
                }
                result.add(item);
            }
        }
        return result;
    }

    /**
     * The actors behind one bar: those of series {@code order} (current period) active in exactly {@code days}
     * intervals ({@code days} or more, cumulative), by id.
     */
    public List<String> actors(final TrendQuery.Partial whole, final int order, final int days) {
        final List<String> actors = new java.util.ArrayList<>();
        whole.seriesPartial(order).activity().forEach((actor, active) -> {
            final int n = active.cardinality();
            if (cumulative ? n >= days : n == days) {
                actors.add(actor);
            }
        });
        actors.sort(null);
        return actors;
    }

    private ObjectNode item(final TrendQuery.Series s, final DateRange period, final SeriesPartial partial) {
        final int intervals = period.buckets().size();
        final long[] actors = new long[intervals];
        for (final java.util.BitSet active : partial.activity().values()) {
            final int days = active.cardinality();
            if (days >= 1 && days <= intervals) {
                actors[days - 1]++;
            }
        }
        long count = 0;
        for (final long n : actors) {
            count += n;
        }
        if (cumulative) {
            for (int k = intervals - 2; k >= 0; k--) {
                actors[k] += actors[k + 1];
            }
        }
        final String unit = period.interval().lowerName();
        final ObjectNode node = NODES.objectNode();
        node.put("count", count);
        final ArrayNode data = node.putArray("data");
        final ArrayNode days = node.putArray("days");
        final ArrayNode labels = node.putArray("labels");
        for (int k = 1; k <= intervals; k++) {
            data.add(actors[k - 1]);
            days.add(k);
            labels.add(k + " " + unit + (k == 1 ? "" : "s") + (cumulative ? " or more" : ""));
        }
        node.put("label", s.label());
        final ObjectNode action = node.putObject("action");
        action.put("order", s.order());
        action.put("type", "events");
        action.put("name", s.label());
        action.set("id", s.name().or(s::event).<JsonNode>map(NODES::textNode).orElse(NODES.nullNode()));
        action.set("custom_name", s.definition().path("custom_name").isTextual() ? s.definition().get("custom_name") : NODES.nullNode());
        action.put("math", s.math().name().toLowerCase(Locale.ROOT));
        action.set("math_group_type_index", s.mathGroupTypeIndex().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
        return node;
    }
}
