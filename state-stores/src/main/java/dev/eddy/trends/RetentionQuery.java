package dev.eddy.trends;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * PostHog's retention insight ({@code insight: RETENTION}, the legacy {@code /insights/retention/} answer): of the
 * actors who did the target event in period i (a cohort), how many did the returning event k periods later.
 * {@code retention_recurring} (the default) puts an actor in every period it did the target event in;
 * {@code retention_first_time} only in the period of its first target event ever, and leaves out those whose first was
 * before the range. Value 0 of a cohort is its size; a returning event in the cohort's own period does not count.
 *
 * <p>The range is PostHog's: {@code date_to} (now when absent) plus one period, truncated to its hour or day, and
 * {@code total_intervals} periods back from there (weeks then back to the week's start; {@code date_from} is ignored,
 * as in PostHog). Cohort i's {@code date} is the start plus i periods. Months count whole calendar months, as PostHog's
 * current retention does (its legacy one began the first month on {@code date_to}'s day of the month).
 *
 * <p>It is read as the trend of distinct actors per period of two series, the target and the returning event, over
 * the range (and for first-time retention from the project's earliest event on, to find each actor's first): the
 * trend's partials keep each period's actors, merged across instances, and the whole is counted here. So it reads
 * what trends read, rollups included, with the trend's global filters ({@code properties},
 * {@code filter_test_accounts}) applied to both events. With {@code breakdowns}, one row per breakdown value of the
 * target event pools every cohort, as PostHog's legacy answer does.
 */
public final class RetentionQuery {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int DEFAULT_INTERVALS = 11;
    /** The most cohorts one query may have: its answer holds about half this squared. */
    static final int MAX_INTERVALS = 1_000;
    private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ssXXX", Locale.ROOT);
    private static final ObjectNode DEFAULT_ENTITY = NODES.objectNode().put("id", "$pageview").put("type", "events");

    private final TrendQuery trend;
    private final Interval period;
    private final int intervals;
    private final boolean firstTime;
    private final boolean cumulative;
    /** The first cohort's start: the dates of the answer count from it. */
    private final ZonedDateTime start;
    /** The trend's bucket of the first cohort (first-time retention reads from before it). */
    private final int offset;
    private final boolean brokenDown;
    /** The cohort whose persons are asked for ({@code selected_interval}), if any, and which page. */
    private Optional<Integer> selected = Optional.empty();
    private ActorPage page = new ActorPage(100, 0);

    private RetentionQuery(final TrendQuery trend, final Interval period, final int intervals, final boolean firstTime, final boolean cumulative,
                           final ZonedDateTime start, final int offset, final boolean brokenDown) {
        this.trend = trend;
        this.period = period;
        this.intervals = intervals;
        this.firstTime = firstTime;
        this.cumulative = cumulative;
        this.start = start;
        this.offset = offset;
        this.brokenDown = brokenDown;
    }

    /**
     * @param query    the legacy filter: {@code target_entity} and {@code returning_entity} ({@code {id, type}}, objects
     *                 or their JSON text; the target defaults to {@code $pageview}, the returning event to the target),
     *                 {@code period} ({@code Hour}, {@code Day}, {@code Week}, {@code Month}), {@code total_intervals},
     *                 {@code retention_type}, {@code date_to}, {@code properties}, {@code filter_test_accounts},
     *                 {@code aggregation_group_type_index}, {@code breakdowns} with {@code breakdown_type}, and
     *                 {@code cumulative} (an actor counts in every period up to its last return)
     * @param earliest the project's earliest event, read for first-time retention only
     * @throws IllegalArgumentException naming what is wrong with the query, or what Eddy does not answer yet
     */
    public static RetentionQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                       final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!query.isObject()) {
            throw new IllegalArgumentException("a retention query must be an object");
        }
        final Interval period = period(query.path("period").asText("Day"));
        final int intervals = intervals(query.get("total_intervals"));
        final String type = query.path("retention_type").asText("retention_recurring");
        final boolean firstTime = switch (type) {
            case "retention_recurring" -> false;
            case "retention_first_time" -> true;
            case "retention_first_ever_occurrence" ->
                    throw new IllegalArgumentException("retention_type retention_first_ever_occurrence is not supported by Eddy yet");
            default -> throw new IllegalArgumentException(
                    "retention_type must be retention_recurring or retention_first_time; got '" + type + "'");
        };
        final ObjectNode target = entity(query.get("target_entity"), "target_entity").orElse(DEFAULT_ENTITY.deepCopy());
        final ObjectNode returning = entity(query.get("returning_entity"), "returning_entity").orElse(target.deepCopy());

        // PostHog's range: date_to plus one period, truncated; the cohorts go back total_intervals periods from there.
        final ZonedDateTime current = now.atZone(zone);
        final ZonedDateTime asked = Optional.ofNullable(query.get("date_to")).filter(JsonNode::isTextual).map(JsonNode::asText)
                .filter(s -> !s.isBlank()).map(s -> DateExpression.parse(s, zone, current).time()).orElse(current);
        final ZonedDateTime end = period.next(asked).truncatedTo(period == Interval.HOUR ? ChronoUnit.HOURS : ChronoUnit.DAYS);
        final ZonedDateTime start = switch (period) {
            case HOUR -> end.minusHours(intervals);
            case DAY -> end.minusDays(intervals);
            case WEEK -> end.minusWeeks(intervals).with(TemporalAdjusters.previousOrSame(weekStart));
            case MONTH -> end.minusMonths(intervals);
        };
        final ZonedDateTime first = period.startOf(start, weekStart);
        // First-time retention needs every actor's first target event, so it reads from the project's first event.
        final ZonedDateTime from = firstTime
                ? earliest.get().map(t -> period.startOf(t.atZone(zone), weekStart)).filter(t -> t.isBefore(first)).orElse(first)
                : first;

        final ObjectNode asTrend = NODES.objectNode();
        final ArrayNode events = asTrend.putArray("events");
        final ArrayNode actions = asTrend.putArray("actions");
        final Optional<Integer> group = query.hasNonNull("aggregation_group_type_index")
                ? Optional.of(groupIndex(query.get("aggregation_group_type_index"))) : Optional.empty();
        final List<ObjectNode> entities = List.of(target, returning);
        for (int order = 0; order < entities.size(); order++) {
            final ObjectNode entity = entities.get(order);
            final boolean action = "actions".equals(entity.path("type").asText());
            final ObjectNode series = (action ? actions : events).addObject();
            series.set("id", entity.get("id"));
            series.put("type", action ? "actions" : "events");
            series.put("order", order);
            if (action) {
                series.set(Action.INLINED, entity.get(Action.INLINED));
            }
            if (entity.has("properties")) {
                series.set("properties", entity.get("properties"));
            }
            if (group.isPresent()) {
                series.put("math", "unique_group").put("math_group_type_index", group.get());
            } else {
                series.put("math", "dau");
            }
        }
        for (final String copied : List.of("properties", "filter_test_accounts")) {
            if (query.has(copied)) {
                asTrend.set(copied, query.get(copied));
            }
        }
        final Optional<ArrayNode> breakdowns = breakdowns(query);
        breakdowns.ifPresent(b -> asTrend.set("breakdowns", b));
        asTrend.put("interval", period.lowerName());
        asTrend.put("date_from", from.toOffsetDateTime().toString());
        asTrend.put("date_to", end.minus(1, ChronoUnit.MICROS).toOffsetDateTime().toString());
        final TrendQuery read = TrendQuery.parse(asTrend, zone, weekStart, testAccountFilters, now, earliest);
        final int offset = read.range().bucketOf(first.toInstant());
        if (offset < 0 || read.range().buckets().size() < offset + intervals) {
            throw new IllegalStateException("the retention's range " + read.range() + " does not hold " + intervals + " periods from " + first);
        }
        final RetentionQuery retention = new RetentionQuery(read, period, intervals, firstTime, query.path("cumulative").asBoolean(false), start,
                offset, breakdowns.isPresent());
        if (query.hasNonNull("selected_interval")) {
            final int cohort = query.get("selected_interval").asInt(-1);
            if (cohort < 0 || cohort >= intervals || breakdowns.isPresent()) {
                throw new IllegalArgumentException("selected_interval must be a cohort from 0 to " + (intervals - 1) + " of a retention without breakdowns");
            }
            retention.selected = Optional.of(cohort);
            retention.page = ActorPage.of(query);
        }
        return retention;
    }

    private static Interval period(final String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "hour" -> Interval.HOUR;
            case "day" -> Interval.DAY;
            case "week" -> Interval.WEEK;
            case "month" -> Interval.MONTH;
            default -> throw new IllegalArgumentException("period must be one of Hour, Day, Week, Month; got '" + name + "'");
        };
    }

    private static int intervals(final JsonNode given) {
        if (given == null || given.isNull()) {
            return DEFAULT_INTERVALS;
        }
        final int n;
        if (given.canConvertToInt() && given.isIntegralNumber()) {
            n = given.asInt();
        } else if (given.isTextual() && given.asText().trim().matches("\\d{1,9}")) {
            n = Integer.parseInt(given.asText().trim());
        } else {
            throw new IllegalArgumentException("total_intervals must be a whole number; got " + given);
        }
        if (n < 1 || n > MAX_INTERVALS) {
            throw new IllegalArgumentException("total_intervals must be from 1 to " + MAX_INTERVALS + "; got " + n);
        }
        return n;
    }

    private static int groupIndex(final JsonNode given) {
        final int index = given.asInt(-1);
        if (!given.canConvertToInt() || index < 0 || index > 4) {
            throw new IllegalArgumentException("aggregation_group_type_index must be from 0 to 4; got " + given);
        }
        return index;
    }

    /** An entity as PostHog's retention filter takes it: an object, or its JSON text; empty when not given. */
    private static Optional<ObjectNode> entity(final JsonNode given, final String name) {
        if (given == null || given.isNull()) {
            return Optional.empty();
        }
        JsonNode entity = given;
        if (given.isTextual()) {
            try {
                entity = JSON.readTree(given.asText());
            } catch (final JacksonException e) {
                throw new IllegalArgumentException(name + " is not valid JSON");
            }
        }
        if (entity == null || !entity.isObject()) {
            throw new IllegalArgumentException(name + " must be an object with an id and a type");
        }
        final String type = entity.path("type").asText("events");
        if ("actions".equals(type)) {
            Action.ofEntity(entity);
            return Optional.of(((ObjectNode) entity).deepCopy());
        }
        if (!"events".equals(type)) {
            throw new IllegalArgumentException(name + " type must be events or actions; got '" + type + "'");
        }
        final JsonNode id = entity.get("id");
        if (id != null && !id.isNull() && !id.isTextual()) {
            throw new IllegalArgumentException(name + " id must be an event name, or null for all events");
        }
        return Optional.of(((ObjectNode) entity).deepCopy());
    }

    /**
     * The breakdown as the trend's list of dimensions: {@code breakdowns} ({@code [{property, type}]}, each type
     * defaulting to {@code breakdown_type}), or one {@code breakdown} property.
     */
    private static Optional<ArrayNode> breakdowns(final JsonNode query) {
        final String defaultType = query.path("breakdown_type").asText("event");
        final ArrayNode list = NODES.arrayNode();
        final JsonNode given = query.get("breakdowns");
        if (given != null && !given.isNull()) {
            if (!given.isArray()) {
                throw new IllegalArgumentException("breakdowns must be a list");
            }
            for (final JsonNode b : given) {
                if (!b.isObject() || !b.path("property").isTextual()) {
                    throw new IllegalArgumentException("every entry of breakdowns needs a property");
                }
                final ObjectNode dimension = ((ObjectNode) b).deepCopy();
                if (!dimension.hasNonNull("type")) {
                    dimension.put("type", defaultType);
                }
                if (!dimension.has("group_type_index") && query.hasNonNull("breakdown_group_type_index")) {
                    dimension.set("group_type_index", query.get("breakdown_group_type_index"));
                }
                list.add(dimension);
            }
        } else if (query.path("breakdown").isTextual() && !query.get("breakdown").asText().isBlank()) {
            final ObjectNode dimension = list.addObject().put("property", query.get("breakdown").asText()).put("type", defaultType);
            if (query.hasNonNull("breakdown_group_type_index")) {
                dimension.set("group_type_index", query.get("breakdown_group_type_index"));
            }
        }
        return list.isEmpty() ? Optional.empty() : Optional.of(list);
    }

    /** The trend of distinct actors per period, target then returning event, whose partials this query reads. */
    public TrendQuery trend() {
        return trend;
    }

    /** PostHog's legacy result: a cohort per period, or with a breakdown a row per breakdown value. */
    /**
     * What the engine answers: with {@code selected_interval}, the page of that cohort's actors, each with the periods
     * it came back in ({@code {count, actors: [[id, [1, 0, 1, ...]], ...]}}: 1 for its cohort's own period, then 1 for
     * each later period it did the returning event in), by id; else {@link #result}.
     */
    public JsonNode answer(final TrendQuery.Partial whole) {
        if (selected.isEmpty()) {
            return result(whole);
        }
        final int cohort = selected.get();
        final Map<String, BitSet> returning = whole.seriesPartial(1).activity();
        final List<String> members = new ArrayList<>();
        whole.seriesPartial(0).activity().forEach((actor, active) -> {
            if (cohorts(active).contains(cohort)) {
                members.add(actor);
            }
        });
        members.sort(null);
        final ObjectNode answer = page.of(members);
        for (final JsonNode row : answer.get("actors")) {
            final String actor = row.get(0).asText();
            final ArrayNode appearances = ((ArrayNode) row).removeAll().add(actor).addArray();
            appearances.add(1);
            final BitSet back = returning.getOrDefault(actor, new BitSet());
            for (int k = 1; k < intervals - cohort; k++) {
                appearances.add(back.get(offset + cohort + k) ? 1 : 0);
            }
        }
        return answer;
    }

    public ArrayNode result(final TrendQuery.Partial whole) {
        final Map<String, BitSet> returning = whole.seriesPartial(1).activity();
        return brokenDown ? breakdownRows(whole.seriesPartial(0).activityByBreakdown(), returning)
                : cohortRows(whole.seriesPartial(0).activity(), returning);
    }

    private ArrayNode cohortRows(final Map<String, BitSet> target, final Map<String, BitSet> returning) {
        final long[][] counts = new long[intervals][];
        for (int i = 0; i < intervals; i++) {
            counts[i] = new long[intervals - i];
        }
        final BitSet none = new BitSet();
        target.forEach((actor, active) -> {
            final BitSet back = returning.getOrDefault(actor, none);
            for (final int cohort : cohorts(active)) {
                count(counts[cohort], cohort, back);
            }
        });
        final ArrayNode result = NODES.arrayNode();
        for (int i = 0; i < intervals; i++) {
            final ObjectNode row = result.addObject();
            row.set("values", values(counts[i]));
            row.put("label", label(i));
            row.put("date", DATE.format(dateOf(i)));
        }
        return result;
    }

    /**
     * Rows per breakdown value of the target event, each pooling every cohort: value 0 is how many actors did the
     * target event with that value in a cohort, value k how many of them came back k periods after such a cohort.
     * Ordered as PostHog orders them, largest first, then by value.
     */
    private ArrayNode breakdownRows(final Map<String, Map<String, BitSet>> target, final Map<String, BitSet> returning) {
        final Map<String, BitSet> firsts = firstTime ? firsts(target) : Map.of();
        final BitSet none = new BitSet();
        final List<Map.Entry<String, long[]>> rows = new ArrayList<>();
        target.forEach((value, actors) -> {
            final long[] counts = new long[intervals];
            actors.forEach((actor, active) -> {
                final BitSet kept = firstTime ? firsts.get(actor) : active;
                final List<Integer> cohorts = cohorts(firstTime ? intersect(kept, active) : active);
                if (cohorts.isEmpty()) {
                    return;
                }
                // Each k counts the actor once, whichever of its cohorts it came back after.
                final BitSet back = returning.getOrDefault(actor, none);
                final boolean[] returned = new boolean[intervals];
                int last = 0;
                for (final int cohort : cohorts) {
                    for (int k = 1; k < intervals && offset + cohort + k < trend.range().buckets().size(); k++) {
                        if (back.get(offset + cohort + k)) {
                            returned[k] = true;
                            last = Math.max(last, k);
                        }
                    }
                }
                counts[0]++;
                for (int k = 1; k < intervals; k++) {
                    if (cumulative ? k <= last : returned[k]) {
                        counts[k]++;
                    }
                }
            });
            if (counts[0] > 0) {
                rows.add(Map.entry(value, counts));
            }
        });
        rows.sort(Comparator.<Map.Entry<String, long[]>>comparingLong(e -> -e.getValue()[0]).thenComparing(Map.Entry::getKey));
        final ArrayNode result = NODES.arrayNode();
        for (final Map.Entry<String, long[]> row : rows) {
            final List<String> values = List.of(row.getKey().split(TrendQuery.Breakdown.SEPARATOR, -1));
            final ObjectNode item = result.addObject();
            item.set("values", values(row.getValue()));
            item.put("label", String.join("::", values));
            final ArrayNode breakdownValues = item.putArray("breakdown_values");
            values.forEach(breakdownValues::add);
        }
        return result;
    }

    /** Each actor's first target period over every breakdown value, as a one-bit set. */
    private static Map<String, BitSet> firsts(final Map<String, Map<String, BitSet>> target) {
        final Map<String, BitSet> firsts = new java.util.HashMap<>();
        target.values().forEach(actors -> actors.forEach((actor, active) -> firsts.merge(actor, single(active.nextSetBit(0)),
                (a, b) -> a.nextSetBit(0) <= b.nextSetBit(0) ? a : b)));
        return firsts;
    }

    private static BitSet single(final int bit) {
        final BitSet set = new BitSet();
        set.set(bit);
        return set;
    }

    private static BitSet intersect(final BitSet a, final BitSet b) {
        final BitSet both = (BitSet) a.clone();
        both.and(b);
        return both;
    }

    /** The cohorts an actor active in the trend's buckets {@code active} belongs to. */
    private List<Integer> cohorts(final BitSet active) {
        final List<Integer> cohorts = new ArrayList<>();
        if (firstTime) {
            final int cohort = active.nextSetBit(0) - offset;
            if (cohort >= 0 && cohort < intervals) {
                cohorts.add(cohort);
            }
            return cohorts;
        }
        for (int b = active.nextSetBit(offset); b >= 0 && b < offset + intervals; b = active.nextSetBit(b + 1)) {
            cohorts.add(b - offset);
        }
        return cohorts;
    }

    /** Counts an actor of {@code cohort} in its row: its size, and the periods after it the actor came back in. */
    private void count(final long[] row, final int cohort, final BitSet back) {
        row[0]++;
        if (cumulative) {
            int last = 0;
            for (int k = 1; k < row.length; k++) {
                if (back.get(offset + cohort + k)) {
                    last = k;
                }
            }
            for (int k = 1; k <= last; k++) {
                row[k]++;
            }
            return;
        }
        for (int k = 1; k < row.length; k++) {
            if (back.get(offset + cohort + k)) {
                row[k]++;
            }
        }
    }

    private static ArrayNode values(final long[] counts) {
        final ArrayNode values = NODES.arrayNode();
        for (final long n : counts) {
            values.addObject().put("count", n).putArray("people");
        }
        return values;
    }

    private String label(final int i) {
        final String name = period.lowerName();
        return Character.toUpperCase(name.charAt(0)) + name.substring(1) + " " + i;
    }

    /** Cohort {@code i}'s date: the range's start plus {@code i} periods. */
    private ZonedDateTime dateOf(final int i) {
        return switch (period) {
            case HOUR -> start.plusHours(i);
            case DAY -> start.plusDays(i);
            case WEEK -> start.plusWeeks(i);
            case MONTH -> start.plusMonths(i);
        };
    }
}
