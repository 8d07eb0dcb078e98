package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.timelines.TimelineEvent;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A trend query in PostHog's filter format ({@code events}, {@code properties}, {@code date_from}, {@code interval},
 * {@code breakdown}, {@code display}, {@code formula}, ...), run over timeline events: each instance {@link #run}s
 * it over its own partitions into a {@link Partial}, the partials {@link Partial#merge} and {@link #result} writes
 * PostHog's result items.
 */
public final class TrendQuery {
    /** Displays that answer one number per series ({@code aggregated_value}) instead of a line. */
    private static final Set<String> TOTAL_VALUE_DISPLAYS = Set.of("BoldNumber", "ActionsPie", "ActionsBarValue", "WorldMap",
            "ActionsTable", "CalendarHeatmap");
    private static final int DEFAULT_BREAKDOWN_LIMIT = 25;
    /**
     * The options that shape a trend's lines (breakdowns, formulas, display, smoothing) and mean nothing to the
     * insights read from a trend's actors (stickiness, lifecycles): PostHog drops them there.
     */
    static final List<String> LINE_OPTIONS = List.of("breakdown", "breakdown_type", "breakdown_limit", "breakdown_group_type_index",
            "breakdown_hide_other_aggregation", "breakdown_normalize_url", "breakdown_histogram_bin_count", "breakdowns", "formula",
            "display", "shown_as", "smoothing_intervals");
    /** The most series one trend may have (a formula's letters reach Z; queries past that are not dashboards). */
    static final int MAX_SERIES = 100;
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /**
     * One series: an event (or every event) with its math and own filters.
     *
     * @param definition the series as the query gave it, echoed in the result's {@code action}
     */
    record Series(int order, Optional<String> event, TrendMath math, Optional<String> mathProperty,
                  Optional<Integer> mathGroupTypeIndex, PropertyFilter properties, ObjectNode definition, Optional<String> name) {
        /** The series' name: its action's, its event's, or {@code All events}. */
        String label() {
            return name.orElse(event.orElse("All events"));
        }
    }

    /**
     * One property a trend is broken down by: an event's, its person's or one of its groups'.
     *
     * @param normalizeUrl its values without trailing {@code /}, {@code ?} and {@code #} ({@code breakdown_normalize_url})
     */
    record Dimension(String property, String type, int groupTypeIndex, boolean normalizeUrl) {
    }

    /**
     * A breakdown by one property ({@code breakdown}), or by a list of one to three ({@code breakdowns}), whose values
     * are lists: a combination is kept as its values joined by {@link #SEPARATOR}, and answered as PostHog's list.
     */
    record Breakdown(List<Dimension> dimensions, boolean listed, int limit, boolean hideOther, Optional<CohortBreakdown> cohorts) {
        /** Between the values of a combination, in its key; no text property holds it. */
        static final String SEPARATOR = "\u001f";

        /** The one event property broken down by, without a list: its values can be decided once per block column. */
        Optional<String> singleEventProperty() {
            return !listed && "event".equals(dimensions.get(0).type()) ? Optional.of(dimensions.get(0).property()) : Optional.empty();
        }

        /** The key of Other: every value Other. */
        String otherKey() {
            return String.join(SEPARATOR, java.util.Collections.nCopies(listed ? dimensions.size() : 1, TrendEvent.OTHER_BREAKDOWN));
        }
    }

    private final List<Series> series;
    private final DateRange range;
    /** The previous period, with {@code compare}. */
    private final Optional<DateRange> previous;
    /** The current period, then the previous one with {@code compare}. */
    private final List<DateRange> ranges;
    /** Each period's buckets, worked out once: every partial of the query shares them. */
    private final List<List<java.time.ZonedDateTime>> buckets;
    /** Per period, the first and last microsecond an event can count in (weekly and monthly actives look back). */
    private final long[][] windows;
    private final PropertyFilter global;
    private final Optional<Breakdown> breakdown;
    private final String display;
    private final Optional<Formula> formula;
    /** {@code smoothing_intervals}: each point the average of this many up to it (1: as counted). */
    private final int smoothing;
    private final ObjectNode filter;

    private TrendQuery(final List<Series> series, final DateRange range, final Optional<DateRange> previous, final PropertyFilter global,
                       final Optional<Breakdown> breakdown, final String display, final Optional<Formula> formula, final int smoothing,
                       final ObjectNode filter) {
        this.series = series;
        this.range = range;
        this.previous = previous;
        this.ranges = previous.map(p -> List.of(range, p)).orElse(List.of(range));
        this.buckets = ranges.stream().map(DateRange::buckets).toList();
        final int lookBack = series.stream().mapToInt(s -> s.math().forInterval(range.interval()).activeDays()).max().orElse(1);
        this.windows = ranges.stream().map(r -> new long[] {TimelineEvent.micros(r.from().minusDays(lookBack - 1L).toInstant()),
                TimelineEvent.micros(r.to().toInstant())}).toArray(long[][]::new);
        this.global = global;
        this.breakdown = breakdown;
        this.display = display;
        this.formula = formula;
        this.smoothing = smoothing;
        this.filter = filter;
    }

    /**
     * @param query              the request body (or query parameters) in PostHog's filter format
     * @param testAccountFilters the project's test account filters, applied with {@code filter_test_accounts}
     * @param earliest           the project's earliest event, for {@code date_from: all}
     * @throws IllegalArgumentException naming what is wrong with the query
     */
    public static TrendQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart,
                                   final JsonNode testAccountFilters, final Instant now, final Supplier<Optional<Instant>> earliest) {
        final List<ObjectNode> entities = new ArrayList<>();
        for (final String kind : List.of("events", "actions")) {
            final JsonNode list = query.path(kind);
            if (!list.isMissingNode() && !list.isNull() && !list.isArray()) {
                throw new IllegalArgumentException(kind + " must be a list");
            }
            for (final JsonNode entity : list) {
                if (!entity.isObject()) {
                    throw new IllegalArgumentException("every entry of " + kind + " must be an object");
                }
                entities.add("actions".equals(kind) ? ((ObjectNode) entity).deepCopy().put("type", "actions") : (ObjectNode) entity);
            }
        }
        if (entities.isEmpty()) {
            throw new IllegalArgumentException("a trend needs at least one entry in events");
        }
        if (entities.size() > MAX_SERIES) {
            throw new IllegalArgumentException("a trend has at most " + MAX_SERIES + " series, got " + entities.size());
        }
        // PostHog orders series by their `order`, entries without one first.
        entities.sort(Comparator.comparingInt(e -> e.path("order").asInt(-1)));
        final String display = query.path("display").asText("ActionsLineGraph");
        final boolean totalValue = TOTAL_VALUE_DISPLAYS.contains(display);
        final Interval interval = totalValue ? Interval.DAY : Interval.parse(query.path("interval").asText(null));
        final List<Series> series = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            final ObjectNode e = entities.get(i);
            final JsonNode id = e.get("id");
            final TrendMath math = TrendMath.parse(e.path("math").asText(null));
            final Optional<String> mathProperty = text(e.get("math_property"));
            if (math.propertyValues() && mathProperty.isEmpty()) {
                throw new IllegalArgumentException("math " + math.name().toLowerCase(Locale.ROOT) + " needs a math_property");
            }
            final Optional<Integer> groupIndex = e.path("math_group_type_index").isIntegralNumber()
                    ? Optional.of(e.get("math_group_type_index").asInt()) : Optional.empty();
            if (math == TrendMath.UNIQUE_GROUP && groupIndex.isEmpty()) {
                throw new IllegalArgumentException("math unique_group needs a math_group_type_index");
            }
            final PropertyFilter own = PropertyFilter.parse(e.get("properties"));
            if ("actions".equals(e.path("type").asText()) || e.has(Action.INLINED)) {
                final Action action = Action.ofEntity(e);
                series.add(new Series(i, action.onlyEvent(), math, mathProperty, groupIndex, action.filter().and(own), e,
                        Optional.of(action.name())));
            } else {
                series.add(new Series(i, id == null || id.isNull() ? Optional.empty() : Optional.of(id.asText()), math, mathProperty,
                        groupIndex, own, e, Optional.empty()));
            }
        }
        final DateRange range = DateRange.resolve(text(query.get("date_from")), text(query.get("date_to")), interval, zone, weekStart,
                now, earliest);
        PropertyFilter global = PropertyFilter.parse(query.get("properties"));
        if (query.path("filter_test_accounts").asBoolean(false) && testAccountFilters != null && testAccountFilters.isArray()) {
            global = global.and(PropertyFilter.parse(testAccountFilters));
        }
        final Optional<Breakdown> breakdown = breakdown(query);
        final Optional<Formula> formula = text(query.get("formula")).map(f -> Formula.parse(f, series.size()));
        if (formula.isPresent() && breakdown.map(Breakdown::listed).orElse(false)) {
            throw new IllegalArgumentException("formulas with breakdowns are not supported by Eddy yet");
        }
        final Optional<DateRange> previous = query.path("compare").asBoolean(false)
                ? Optional.of(range.previous(text(query.get("date_from")), text(query.get("date_to")), text(query.get("compare_to"))))
                : Optional.empty();
        return new TrendQuery(series, range, previous, global, breakdown, display, formula, smoothing(query.get("smoothing_intervals")),
                echo(query, range, interval, display));
    }

    /** {@code smoothing_intervals} as PostHog's filter reads it: absent or empty is 1, otherwise a positive whole number. */
    private static int smoothing(final JsonNode given) {
        if (given == null || given.isNull() || given.isTextual() && given.asText().isBlank()) {
            return 1;
        }
        final String text = given.isIntegralNumber() ? given.asText() : given.isTextual() ? given.asText().trim() : "";
        if (!text.matches("\\d{1,6}") || Integer.parseInt(text) < 1) {
            throw new IllegalArgumentException("Smoothing intervals must be a positive integer!");
        }
        return Integer.parseInt(text);
    }

    /** {@code breakdown} (one property), or {@code breakdowns} (a list of one to three), as PostHog reads them. */
    private static Optional<Breakdown> breakdown(final JsonNode query) {
        final JsonNode list = query.get("breakdowns");
        final boolean listed = list != null && !list.isNull() && !(list.isArray() && list.isEmpty());
        if (listed && text(query.get("breakdown")).isPresent()) {
            throw new IllegalArgumentException("a trend is broken down by breakdown or by breakdowns, not both");
        }
        if (!listed && "cohort".equals(query.path("breakdown_type").asText()) && !CohortBreakdown.ids(query.get("breakdown")).isEmpty()) {
            if (query.hasNonNull("breakdown_histogram_bin_count")) {
                throw new IllegalArgumentException("breakdown_histogram_bin_count does not apply to a cohort breakdown");
            }
            // Every cohort listed is shown (no limit, no Other), as PostHog shows them.
            return Optional.of(new Breakdown(List.of(new Dimension("cohort", "cohort", -1, false)), false, Integer.MAX_VALUE, true,
                    Optional.of(CohortBreakdown.parse(query.get("breakdown"), query.get(CohortBreakdown.INLINED)))));
        }
        final List<Dimension> dimensions = new ArrayList<>();
        if (listed) {
            if (!list.isArray() || list.size() > 3) {
                throw new IllegalArgumentException("breakdowns must be a list of at most 3 breakdowns");
            }
            for (final JsonNode b : list) {
                if (!b.isObject() || text(b.get("property")).isEmpty()) {
                    throw new IllegalArgumentException("every entry of breakdowns needs a property");
                }
                if (b.hasNonNull("histogram_bin_count")) {
                    throw new IllegalArgumentException("histogram_bin_count is not supported by Eddy yet");
                }
                dimensions.add(dimension(b.get("property").asText(), b.path("type").asText("event"), b.path("group_type_index").asInt(-1),
                        b.path("normalize_url").asBoolean(false)));
            }
        } else {
            if (text(query.get("breakdown")).isPresent() && query.hasNonNull("breakdown_histogram_bin_count")) {
                throw new IllegalArgumentException("breakdown_histogram_bin_count is not supported by Eddy yet");
            }
            text(query.get("breakdown")).ifPresent(property -> dimensions.add(dimension(property, query.path("breakdown_type").asText("event"),
                    query.path("breakdown_group_type_index").asInt(-1), query.path("breakdown_normalize_url").asBoolean(false))));
        }
        if (dimensions.isEmpty()) {
            return Optional.empty();
        }
        if (dimensions.stream().anyMatch(d -> "cohort".equals(d.type()))) {
            throw new IllegalArgumentException("cohorts are broken down by breakdown with breakdown_type cohort, not in breakdowns");
        }
        final int limit = query.path("breakdown_limit").asInt(DEFAULT_BREAKDOWN_LIMIT);
        if (limit < 1) {
            throw new IllegalArgumentException("breakdown_limit must be at least 1");
        }
        return Optional.of(new Breakdown(List.copyOf(dimensions), listed, limit, query.path("breakdown_hide_other_aggregation").asBoolean(false),
                Optional.empty()));
    }

    private static Dimension dimension(final String property, final String type, final int groupIndex, final boolean normalizeUrl) {
        if (!List.of("event", "person", "group", "cohort").contains(type)) {
            throw new IllegalArgumentException("breakdown_type " + type + " is not supported by Eddy yet");
        }
        if ("group".equals(type) && (groupIndex < 0 || groupIndex > 4)) {
            throw new IllegalArgumentException("a group breakdown needs a breakdown_group_type_index from 0 to 4");
        }
        return new Dimension(property, type, groupIndex, normalizeUrl);
    }

    public DateRange range() {
        return range;
    }

    /** The series, in PostHog's order. */
    List<Series> seriesList() {
        return series;
    }

    /** The current period, then the previous one with {@code compare}. */
    List<DateRange> periods() {
        return ranges;
    }

    /** Per-series partial aggregates of some of the events; partials of the same query add up. */
    public static final class Partial {
        private final List<SeriesPartial> series;

        Partial(final List<SeriesPartial> series) {
            this.series = series;
        }

        /** The partial of series {@code index} of a period ({@code period × series + series order}). */
        SeriesPartial seriesPartial(final int index) {
            return series.get(index);
        }

        public Partial merge(final Partial other) {
            for (int i = 0; i < series.size(); i++) {
                series.get(i).merge(other.series.get(i));
            }
            return this;
        }

        /** About what this partial takes on the heap (its cells, values and actors), for a cache to weigh it by. */
        public long memoryBytes() {
            long bytes = 64;
            for (final SeriesPartial s : series) {
                bytes += s.memoryBytes();
            }
            return bytes;
        }

        /** This partial as bytes for another instance of the same query to {@link TrendQuery#decode}. */
        public byte[] encode() {
            return dev.eddy.serde.Binary.write(PARTIAL_VERSION, out -> {
                out.writeInt(series.size());
                for (final SeriesPartial s : series) {
                    s.writeTo(out);
                }
            });
        }
    }

    private static final int PARTIAL_VERSION = 1;

    /**
     * A partial {@link Partial#encode}d by an instance running this same query.
     *
     * @throws IllegalArgumentException when the bytes are not such a partial
     */
    public Partial decode(final byte[] encoded) {
        return dev.eddy.serde.Binary.read(encoded, PARTIAL_VERSION, "a trend partial", in -> {
            final Partial partial = partial();
            if (in.readInt() != partial.series.size()) {
                throw new IllegalArgumentException("a trend partial of another query");
            }
            for (final SeriesPartial s : partial.series) {
                s.readFrom(in);
            }
            return partial;
        });
    }

    /** An empty partial, to add events to. */
    public Partial partial() {
        final List<SeriesPartial> partials = new ArrayList<>();
        for (int r = 0; r < ranges.size(); r++) {
            for (final Series s : series) {
                partials.add(new SeriesPartial(s.math(), ranges.get(r), buckets.get(r)));
            }
        }
        return new Partial(partials);
    }

    /**
     * What decides a block's {@link #add(Partial, EventBlock, BitSet, PropertyLookup, Instant) contribution} besides
     * the block's rows and which of them are deleted, when nothing else does: the series (event, math, its property
     * and group type, filters), the global filters, the breakdown and each period's buckets. Empty when the
     * contribution also depends on persons' or groups' properties (which change after the event) or on the moment
     * of the query (a relative date filter): then nothing of a block's answer may be kept for another query.
     *
     * <p>Two queries with the same shape add the same partial for the same block: a sealed block's partial can be
     * kept and merged again instead of reading the block (Druid's per-segment result cache).
     */
    public Optional<String> blockShape() {
        if (!global.fixedByEvent() || breakdown.isPresent() && !breakdown.get().dimensions().stream().allMatch(d -> "event".equals(d.type()))) {
            return Optional.empty();
        }
        final StringBuilder shape = new StringBuilder("global=").append(global).append(";breakdown=")
                .append(breakdown.map(b -> (b.listed() ? "list" : "") + b.dimensions().stream()
                        .map(d -> quoted(Optional.of(d.property())) + (d.normalizeUrl() ? "/normalized" : "")).toList())
                        .orElse("null"));
        for (final Series s : series) {
            if (!s.properties().fixedByEvent()) {
                return Optional.empty();
            }
            shape.append(";series=").append(s.order()).append(',').append(quoted(s.event())).append(',').append(s.math()).append(',')
                    .append(quoted(s.mathProperty())).append(',').append(s.mathGroupTypeIndex().orElse(-1)).append(',').append(s.properties());
        }
        for (final DateRange r : ranges) {
            shape.append(";range=").append(r);
        }
        return Optional.of(shape.toString());
    }

    /** A name as a JSON string (null when absent): no name reads like another, or like what follows it. */
    private static String quoted(final Optional<String> name) {
        return name.map(n -> NODES.textNode(n).toString()).orElse("null");
    }

    /**
     * Whether the rollups answer this query exactly, without reading events: every series counts events
     * ({@code total}, from the hourly counts) or distinct persons ({@code dau}, {@code weekly_active},
     * {@code monthly_active}, from the unique-person markers) with no filter, nothing is broken down, and every
     * bucket boundary of every period falls on a UTC hour (so each hour belongs to one bucket: any time zone with a
     * whole-hour offset).
     */
    public boolean answerableFromRollups() {
        if (breakdown.isPresent() || !global.matchesEverything()) {
            return false;
        }
        for (final Series s : series) {
            if (!ROLLED_UP.contains(s.math()) || !s.properties().matchesEverything() || s.mathGroupTypeIndex().isPresent()) {
                return false;
            }
        }
        for (final DateRange r : ranges) {
            if (!onHour(r.from().toInstant()) || !onHour(r.to().toInstant().plusNanos(1000))) {
                return false;
            }
            for (final ZonedDateTime bucket : r.buckets()) {
                if (bucket.isAfter(r.from()) && !onHour(bucket.toInstant())) {
                    return false;
                }
            }
        }
        return true;
    }

    private static final Set<TrendMath> ROLLED_UP = Set.of(TrendMath.TOTAL, TrendMath.DAU, TrendMath.WEEKLY_ACTIVE, TrendMath.MONTHLY_ACTIVE);

    private static boolean onHour(final Instant time) {
        return time.getEpochSecond() % 3600 == 0 && time.getNano() == 0;
    }

    /**
     * Adds one partition's rollups of the project into {@code partial}, if they answer this query exactly
     * ({@link #answerableFromRollups}) and include all of the partition's events ({@link TimelineMetadata#ROLLUPS_BUILT});
     * false, adding nothing, if the events must be read instead.
     *
     * @param hourly  the partition's hourly counts
     * @param markers the partition's unique-person markers ({@link UniqueMarkers})
     */
    public boolean countInto(final Partial partial, final HourlyCells hourly, final ReadOnlyKeyValueStore<Bytes, byte[]> markers,
                             final long projectId) {
        if (!answerableFromRollups() || !hourly.built()) {
            return false;
        }
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (final long[] window : windows) {
            first = Math.min(first, window[0]);
            last = Math.max(last, window[1]);
        }
        final Instant from = TimelineEvent.instant(first);
        final Instant to = TimelineEvent.instant(last);
        if (series.stream().anyMatch(s -> s.math() == TrendMath.TOTAL)) {
            countEvents(partial, hourly, projectId, HourlyEventKey.hourOf(from), HourlyEventKey.hourOf(to));
        }
        final Set<String> distinct = new java.util.TreeSet<>();
        series.stream().filter(s -> s.math() != TrendMath.TOTAL).forEach(s -> distinct.add(s.event().orElse(UniqueMarkers.ALL_EVENTS)));
        for (final String event : distinct) {
            countPersons(partial, markers, projectId, event, UniqueMarkers.dayOf(from), UniqueMarkers.dayOf(to));
        }
        return true;
    }

    /**
     * Each counted event's hours as one array per partition (kept between queries for settled hours: the engine's
     * {@code SettledHours}), summed into the buckets; spans too long for an array go cell by cell.
     */
    private void countEvents(final Partial partial, final HourlyCells hourly, final long projectId, final long firstHour, final long lastHour) {
        if (lastHour - firstHour >= MAX_HOURS_AT_ONCE) {
            countEventsByCell(partial, hourly, projectId, firstHour, lastHour);
            return;
        }
        final Map<Optional<String>, long[]> byEvent = new HashMap<>();
        for (final Series s : series) {
            if (s.math() != TrendMath.TOTAL) {
                continue;
            }
            final long[] counts = byEvent.computeIfAbsent(s.event(), event -> hourly.hours(projectId, event, firstHour, lastHour));
            for (int r = 0; r < ranges.size(); r++) {
                partial.series.get(r * series.size() + s.order()).addHours(firstHour, counts);
            }
        }
    }

    /** Hours in one array at most: 200,000 hours (23 years) of longs, 1.6 MB a partition. */
    private static final long MAX_HOURS_AT_ONCE = 200_000;

    private void countEventsByCell(final Partial partial, final HourlyCells hourly, final long projectId, final long firstHour,
                                   final long lastHour) {
        final HourlyCells.Cell add = (event, hour, count) -> addHourly(partial, event, hour, count);
        final Set<String> events = new java.util.TreeSet<>();
        for (final Series s : series) {
            if (s.math() == TrendMath.TOTAL) {
                if (s.event().isEmpty()) {
                    // Every event: the whole project's cells.
                    hourly.forEach(projectId, Optional.empty(), firstHour, lastHour, add);
                    return;
                }
                events.add(s.event().get());
            }
        }
        for (final String event : events) {
            hourly.forEach(projectId, Optional.of(event), firstHour, lastHour, add);
        }
    }

    /** Feeds each marked person-hour of {@code event} as one event of that person at the hour's start. */
    private void countPersons(final Partial partial, final ReadOnlyKeyValueStore<Bytes, byte[]> markers, final long projectId,
                              final String event, final long firstDay, final long lastDay) {
        try (KeyValueIterator<Bytes, byte[]> it = markers.range(UniqueMarkers.dayStart(projectId, event, firstDay),
                UniqueMarkers.dayEnd(projectId, event, lastDay))) {
            while (it.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                final UniqueMarkers.Marker marker = UniqueMarkers.marker(entry.key);
                final String person = marker.person().toString();
                int hours = UniqueMarkers.hours(entry.value);
                while (hours != 0) {
                    final int h = Integer.numberOfTrailingZeros(hours);
                    hours &= hours - 1;
                    addPersonHour(partial, event, person, marker.day() * 24 + h);
                }
            }
        }
    }

    /** Adds one person active in the hour {@code epochHour} to every distinct-person series of {@code event}. */
    void addPersonHour(final Partial partial, final String event, final String person, final long epochHour) {
        for (int r = 0; r < ranges.size(); r++) {
            for (final Series s : series) {
                if (s.math() != TrendMath.TOTAL && s.event().orElse(UniqueMarkers.ALL_EVENTS).equals(event)) {
                    partial.series.get(r * series.size() + s.order()).addActive(epochHour, person);
                }
            }
        }
    }

    /** Adds one hourly count of {@code event} to every series that counts it, in every period. */
    void addHourly(final Partial partial, final String event, final long epochHour, final long count) {
        for (int r = 0; r < ranges.size(); r++) {
            for (final Series s : series) {
                if (s.math() == TrendMath.TOTAL && (s.event().isEmpty() || s.event().get().equals(event))) {
                    partial.series.get(r * series.size() + s.order()).addCount(epochHour, count);
                }
            }
        }
    }

    /**
     * The event names any series counts, if every series names one (empty when a series counts all events): scans
     * skip other events without decoding them.
     */
    public Optional<Set<String>> eventNames() {
        final Set<String> names = new java.util.HashSet<>();
        for (final Series s : series) {
            if (s.event().isEmpty()) {
                return Optional.empty();
            }
            names.add(s.event().get());
        }
        return Optional.of(names);
    }

    /** Whether an event at this time can count at all: scans skip the others without decoding them. */
    public boolean relevant(final long timeMicros) {
        for (final long[] window : windows) {
            if (timeMicros >= window[0] && timeMicros <= window[1]) {
                return true;
            }
        }
        return false;
    }

    /** Adds one timeline event of {@code personUuid} to {@code partial}, for every series it matches. */
    public void add(final Partial partial, final String personUuid, final TimelineEvent event, final PropertyLookup properties,
                    final Instant now) {
        if (!relevant(event.timeMicros())) {
            return;
        }
        final Instant time = event.time();
        final TimelineEventSource source = new TimelineEventSource(personUuid, event, properties);
        for (final Series s : series) {
            if (s.event().isPresent() && !s.event().get().equals(event.event())) {
                continue;
            }
            if (!global.test(source, now) || !s.properties().test(source, now)) {
                continue;
            }
            final String actor;
            if (s.mathGroupTypeIndex().isPresent() && s.math().distinctActors()) {
                final String group = event.groups().get(s.mathGroupTypeIndex().get());
                if (group == null || group.isEmpty()) {
                    // PostHog leaves out events without the group for group-aggregated math.
                    continue;
                }
                actor = group;
            } else {
                actor = personUuid;
            }
            final OptionalDouble value = s.mathProperty().flatMap(p -> PropertyFilter.number(source.event(p)))
                    .map(OptionalDouble::of).orElse(OptionalDouble.empty());
            final Optional<CohortBreakdown> cohorts = breakdown.flatMap(Breakdown::cohorts);
            if (cohorts.isPresent()) {
                addToCohorts(partial, s, cohorts.get(), time, actor, value, source, now);
                continue;
            }
            final String breakdownValue = breakdown.map(b -> breakdownValue(b, source)).orElse("");
            final TrendEvent counted = new TrendEvent(time, actor, value, breakdownValue);
            for (int r = 0; r < ranges.size(); r++) {
                partial.series.get(r * series.size() + s.order()).add(counted);
            }
        }
    }

    /**
     * Adds the rows of a block (person and group properties through {@code properties}) to {@code partial}, leaving out
     * the {@code deleted} ones: exactly what {@link #add(Partial, String, TimelineEvent, PropertyLookup, Instant)} adds
     * for each row's event. A block outside every window, or without any series' event, is skipped unread; a series
     * reads the event column, the times, and only the columns its filters, math and breakdown use. Filters on one
     * event property are decided once per distinct value ({@link BlockFilter}). Event counts without a breakdown, or
     * broken down by an event property, are summed per bucket and value code in arrays and added once per block.
     */
    public void add(final Partial partial, final EventBlock block, final BitSet deleted, final PropertyLookup properties,
                    final Instant now) {
        if (block.rows() == 0 || !overlaps(block.firstMicros(), block.lastMicros())) {
            return;
        }
        final BlockRows rows = new BlockRows(block, properties);
        final BlockFilter globalFilter = global.matchesEverything() ? null : BlockFilter.of(rows, global, now);
        final String[] breakdownByCode = breakdown.flatMap(Breakdown::singleEventProperty)
                .map(property -> eventBreakdownValues(breakdown.get().dimensions().get(0), block.property(property))).orElse(null);
        for (final Series s : series) {
            final int eventCode = s.event().map(name -> block.events().codeOf(name)).orElse(ANY_EVENT);
            if (eventCode == -1) {
                continue;
            }
            final BlockFilter own = s.properties().matchesEverything() ? null : BlockFilter.of(rows, s.properties(), now);
            addSeries(partial, s, rows, deleted, eventCode, globalFilter, own, breakdownByCode, now);
        }
    }

    private static final int ANY_EVENT = -2;

    private void addSeries(final Partial partial, final Series s, final BlockRows rows, final BitSet deleted, final int eventCode,
                           final BlockFilter globalFilter, final BlockFilter own, final String[] breakdownByCode, final Instant now) {
        final EventBlock block = rows.block();
        final EventBlock.Column breakdownColumn = breakdownByCode == null ? null : block.property(breakdown.get().dimensions().get(0).property());
        // Counting events without a breakdown or by an event property: per range, a count per bucket and value code.
        if (s.math() == TrendMath.TOTAL && (breakdown.isEmpty() || breakdownByCode != null)) {
            countSeries(partial, s, block, deleted, eventCode, globalFilter, own, breakdownColumn, breakdownByCode);
            return;
        }
        final EventBlock.Column events = block.events();
        final EventBlock.Column groupColumn = s.mathGroupTypeIndex().isPresent() && s.math().distinctActors()
                ? groupColumn(block, s.mathGroupTypeIndex().get()) : null;
        final EventBlock.Column valueColumn = s.mathProperty().map(block::property).orElse(null);
        for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
            if (eventCode != ANY_EVENT && events.code(r) != eventCode) {
                continue;
            }
            final long time = block.timeMicros(r);
            if (!relevant(time) || globalFilter != null && !globalFilter.test(r) || own != null && !own.test(r)) {
                continue;
            }
            final String actor;
            if (s.mathGroupTypeIndex().isPresent() && s.math().distinctActors()) {
                final JsonNode group = groupColumn == null ? null : groupColumn.value(r);
                if (group == null || group.asText().isEmpty()) {
                    continue;
                }
                actor = group.asText();
            } else {
                actor = block.persons().textAt(r);
            }
            final OptionalDouble value = valueColumn == null ? OptionalDouble.empty()
                    : PropertyFilter.number(valueColumn.value(r)).map(OptionalDouble::of).orElse(OptionalDouble.empty());
            if (breakdown.isPresent() && breakdown.get().cohorts().isPresent()) {
                addToCohorts(partial, s, breakdown.get().cohorts().get(), TimelineEvent.instant(time), actor, value, rows.at(r), now);
                continue;
            }
            final String breakdownValue = breakdownByCode != null ? breakdownByCode[breakdownColumn.code(r)]
                    : breakdown.isPresent() ? breakdownValue(breakdown.get(), rows.at(r)) : "";
            final TrendEvent counted = new TrendEvent(TimelineEvent.instant(time), actor, value, breakdownValue);
            for (int p = 0; p < ranges.size(); p++) {
                partial.series.get(p * series.size() + s.order()).add(counted);
            }
        }
    }

    /** Counts an event of a series under each cohort broken down by that its person is in now (and under {@code all}). */
    private void addToCohorts(final Partial partial, final Series s, final CohortBreakdown cohorts, final Instant time, final String actor,
                              final OptionalDouble value, final PropertyFilter.Source source, final Instant now) {
        for (final CohortBreakdown.Value cohort : cohorts.values()) {
            if (cohort.contains(source, now)) {
                final TrendEvent counted = new TrendEvent(time, actor, value, cohort.key());
                for (int r = 0; r < ranges.size(); r++) {
                    partial.series.get(r * series.size() + s.order()).add(counted);
                }
            }
        }
    }

    /**
     * A series' event counts in a block, per range, bucket and breakdown value code, added once per block: the loop
     * every unfiltered or event-property trend spends its time in, so it resolves the series' partials and columns
     * once per block, decides a row's buckets before its filters (a row of no bucket is in no window), and walks
     * every row when none is deleted.
     */
    private void countSeries(final Partial partial, final Series s, final EventBlock block, final BitSet deleted, final int eventCode,
                             final BlockFilter globalFilter, final BlockFilter own, final EventBlock.Column breakdownColumn,
                             final String[] breakdownByCode) {
        final int rowCount = block.rows();
        final int width = breakdownByCode == null ? 1 : breakdownByCode.length;
        final SeriesPartial[] targets = new SeriesPartial[ranges.size()];
        final long[][] counts = new long[targets.length][];
        for (int p = 0; p < targets.length; p++) {
            targets[p] = partial.series.get(p * series.size() + s.order());
        }
        final EventBlock.Column events = block.events();
        final boolean anyDeleted = !deleted.isEmpty();
        // Per range, the span of the bucket last found: a block's rows come about in time order, so most rows fall in
        // the bucket of the row before, found without a search.
        final long[] spanStart = new long[targets.length];
        final long[] spanEnd = new long[targets.length];
        final int[] spanBucket = new int[targets.length];
        for (int r = 0; r < rowCount; r++) {
            if (anyDeleted && deleted.get(r) || eventCode != ANY_EVENT && events.code(r) != eventCode) {
                continue;
            }
            final long time = block.timeMicros(r);
            boolean filtered = false;
            for (int p = 0; p < targets.length; p++) {
                int bucket = spanBucket[p];
                if (time < spanStart[p] || time >= spanEnd[p]) {
                    bucket = targets[p].bucketOfMicros(time);
                    if (bucket < 0) {
                        continue;
                    }
                    spanStart[p] = targets[p].bucketStartMicros(bucket);
                    spanEnd[p] = targets[p].bucketEndMicros(bucket);
                    spanBucket[p] = bucket;
                }
                if (!filtered) {
                    if (globalFilter != null && !globalFilter.test(r) || own != null && !own.test(r)) {
                        break;
                    }
                    filtered = true;
                }
                if (counts[p] == null) {
                    counts[p] = new long[width * targets[p].range().buckets().size()];
                }
                counts[p][bucket * width + (breakdownColumn == null ? 0 : breakdownColumn.code(r))]++;
            }
        }
        for (int p = 0; p < targets.length; p++) {
            if (counts[p] == null) {
                continue;
            }
            for (int cell = 0; cell < counts[p].length; cell++) {
                if (counts[p][cell] > 0) {
                    targets[p].addEvents(cell / width, breakdownByCode == null ? "" : breakdownByCode[cell % width], counts[p][cell]);
                }
            }
        }
    }

    private static EventBlock.Column groupColumn(final EventBlock block, final int typeIndex) {
        return typeIndex >= 0 && typeIndex < EventBlock.GROUP_TYPES ? block.group(typeIndex) : null;
    }

    /** An event property's breakdown value for each code of its column. */
    private static String[] eventBreakdownValues(final Dimension dimension, final EventBlock.Column column) {
        final String[] values = new String[column.size()];
        for (int code = 0; code < values.length; code++) {
            values[code] = breakdownValue(dimension, column.entry(code));
        }
        return values;
    }

    /** Whether any window holds a moment between {@code firstMicros} and {@code lastMicros}. */
    public boolean overlaps(final long firstMicros, final long lastMicros) {
        for (final long[] window : windows) {
            if (lastMicros >= window[0] && firstMicros <= window[1]) {
                return true;
            }
        }
        return false;
    }

    /** The event's breakdown key: its value, or with {@code breakdowns} its values joined by {@link Breakdown#SEPARATOR}. */
    private static String breakdownValue(final Breakdown b, final PropertyFilter.Source source) {
        if (b.dimensions().size() == 1) {
            return breakdownValue(b.dimensions().get(0), source);
        }
        final StringBuilder key = new StringBuilder();
        for (final Dimension d : b.dimensions()) {
            if (!key.isEmpty()) {
                key.append(Breakdown.SEPARATOR);
            }
            key.append(breakdownValue(d, source));
        }
        return key.toString();
    }

    private static String breakdownValue(final Dimension d, final PropertyFilter.Source source) {
        return breakdownValue(d, switch (d.type()) {
            case "person" -> source.person(d.property());
            case "group" -> source.group(d.groupTypeIndex(), d.property());
            default -> source.event(d.property());
        });
    }

    /** A dimension's breakdown value of a property value: normalized as a URL when asked. */
    private static String breakdownValue(final Dimension d, final JsonNode value) {
        final String text = breakdownValue(value);
        return d.normalizeUrl() && !TrendEvent.NULL_BREAKDOWN.equals(text) ? PropertyFilter.withoutTrailingUrlSeparators(text) : text;
    }

    /** PostHog's breakdown value of a property value: its text, or the null sentinel when missing or empty. */
    private static String breakdownValue(final JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode() || value.isTextual() && value.asText().isEmpty()) {
            return TrendEvent.NULL_BREAKDOWN;
        }
        return PropertyFilter.text(value);
    }

    /** PostHog's result items for the whole query (every partial merged into {@code whole}): current first. */
    public ArrayNode result(final Partial whole) {
        final boolean totalValue = TOTAL_VALUE_DISPLAYS.contains(display);
        final boolean cumulative = "ActionsLineGraphCumulative".equals(display);
        final ArrayNode result = NODES.arrayNode();
        for (int r = 0; r < ranges.size(); r++) {
            final DateRange period = ranges.get(r);
            final Optional<String> compareLabel = previous.isPresent() ? Optional.of(r == 0 ? "current" : "previous") : Optional.empty();
            final List<List<TrendSeries.Item>> perSeries = new ArrayList<>();
            for (int i = 0; i < series.size(); i++) {
                final SeriesPartial partial = whole.series.get(r * series.size() + i);
                final int limit = breakdown.map(Breakdown::limit).orElse(DEFAULT_BREAKDOWN_LIMIT);
                final boolean hideOther = breakdown.map(Breakdown::hideOther).orElse(false);
                final String other = breakdown.map(Breakdown::otherKey).orElse(TrendEvent.OTHER_BREAKDOWN);
                perSeries.add(totalValue ? TrendSeries.aggregated(partial, breakdown.isPresent(), limit, hideOther, other)
                        : TrendSeries.smoothed(TrendSeries.timeSeries(partial, breakdown.isPresent(), limit, cumulative, hideOther, other),
                        smoothing, cumulative));
            }
            if (formula.isPresent()) {
                for (final ObjectNode item : formulaItems(perSeries, totalValue, period)) {
                    result.add(compared(item, compareLabel));
                }
                continue;
            }
            for (int i = 0; i < series.size(); i++) {
                final List<TrendSeries.Item> items = new ArrayList<>(perSeries.get(i));
                // Cohorts with the most first (the aggregated value of a total), then in the order the breakdown lists them.
                breakdown.flatMap(Breakdown::cohorts).ifPresent(c -> items.sort(Comparator.comparingDouble(
                        (TrendSeries.Item item) -> -item.aggregated().orElse(item.count())).thenComparingInt(item -> c.rank(item.breakdownValue()))));
                for (final TrendSeries.Item item : items) {
                    result.add(compared(item(series.get(i), item, totalValue, period), compareLabel));
                }
            }
        }
        return result;
    }

    private static ObjectNode compared(final ObjectNode item, final Optional<String> label) {
        label.ifPresent(l -> {
            item.put("compare", true);
            item.put("compare_label", l);
        });
        return item;
    }

    private ObjectNode item(final Series s, final TrendSeries.Item item, final boolean totalValue, final DateRange period) {
        final ObjectNode node = NODES.objectNode();
        final List<ZonedDateTime> buckets = period.buckets();
        final ArrayNode data = node.putArray("data");
        final ArrayNode labels = node.putArray("labels");
        final ArrayNode days = node.putArray("days");
        if (!totalValue) {
            for (int i = 0; i < buckets.size(); i++) {
                data.add(number(item.data()[i]));
                labels.add(period.label(buckets.get(i)));
                days.add(period.day(buckets.get(i)));
            }
        }
        node.set("count", number(item.count()));
        item.aggregated().ifPresent(v -> node.set("aggregated_value", number(v)));
        final boolean listed = breakdown.map(Breakdown::listed).orElse(false);
        // A combination is named by its values joined by "::", as PostHog labels it; its breakdown_value is the list.
        final Optional<CohortBreakdown.Value> cohort = breakdown.flatMap(Breakdown::cohorts).flatMap(c -> c.value(item.breakdownValue()));
        final String shown = listed ? String.join("::", item.breakdownValue().split(Breakdown.SEPARATOR, -1))
                : cohort.map(CohortBreakdown.Value::label).orElse(item.breakdownValue());
        final String label = breakdown.isEmpty() ? s.label() : series.size() > 1 ? s.label() + " - " + shown : shown;
        node.put("label", label);
        if (listed) {
            final ArrayNode values = node.putArray("breakdown_value");
            for (final String value : item.breakdownValue().split(Breakdown.SEPARATOR, -1)) {
                values.add(value);
            }
        } else if (cohort.isPresent()) {
            node.set("breakdown_value", cohort.get().shown());
        } else if (breakdown.isPresent()) {
            node.put("breakdown_value", item.breakdownValue());
        }
        node.set("filter", filter);
        node.set("action", action(s));
        node.put("order", s.order());
        return node;
    }

    /**
     * The formula's items: one, or with a breakdown one per breakdown value of any series (a series without that
     * value counts as zeros), ranked as PostHog ranks them: real values, then the null value, then Other; by
     * aggregated value or total, then count, then data, all descending.
     */
    private List<ObjectNode> formulaItems(final List<List<TrendSeries.Item>> perSeries, final boolean totalValue, final DateRange period) {
        final java.util.Set<String> values = new java.util.TreeSet<>(String.CASE_INSENSITIVE_ORDER.thenComparing(Comparator.naturalOrder()));
        perSeries.forEach(items -> items.forEach(i -> values.add(i.breakdownValue())));
        if (values.isEmpty()) {
            values.add("");
        }
        final List<ObjectNode> items = new ArrayList<>();
        for (final String value : values) {
            final List<Optional<TrendSeries.Item>> matching = perSeries.stream()
                    .map(list -> list.stream().filter(i -> i.breakdownValue().equals(value)).findFirst()).toList();
            items.add(formulaItem(matching, totalValue, period, breakdown.isPresent() ? Optional.of(value) : Optional.empty()));
        }
        if (breakdown.isPresent()) {
            items.sort(Comparator.comparingInt((ObjectNode n) -> breakdownRank(n.get("breakdown_value").asText()))
                    .thenComparingDouble(n -> n.has("aggregated_value") ? n.get("aggregated_value").asDouble() : n.get("count").asDouble())
                    .thenComparingDouble(n -> n.get("count").asDouble())
                    .thenComparing((x, y) -> compareData(x.get("data"), y.get("data")))
                    .thenComparing(n -> n.get("breakdown_value").asText()).reversed());
        }
        return items;
    }

    /** PostHog ranks a real value above the null value above Other. */
    private static int breakdownRank(final String value) {
        return TrendEvent.OTHER_BREAKDOWN.equals(value) ? -2 : TrendEvent.NULL_BREAKDOWN.equals(value) ? -1 : 0;
    }

    private static int compareData(final JsonNode a, final JsonNode b) {
        final int n = Math.min(a == null || a.isNull() ? 0 : a.size(), b == null || b.isNull() ? 0 : b.size());
        for (int i = 0; i < n; i++) {
            final int c = Double.compare(a.get(i).asDouble(), b.get(i).asDouble());
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a == null || a.isNull() ? 0 : a.size(), b == null || b.isNull() ? 0 : b.size());
    }

    private ObjectNode formulaItem(final List<Optional<TrendSeries.Item>> perSeries, final boolean totalValue, final DateRange period,
                                   final Optional<String> breakdownValue) {
        final Formula f = formula.get();
        final ObjectNode node = NODES.objectNode();
        if (totalValue) {
            final double[] values = perSeries.stream().mapToDouble(item -> item.flatMap(i -> {
                final OptionalDouble v = i.aggregated();
                return v.isPresent() ? Optional.of(v.getAsDouble()) : Optional.empty();
            }).orElse(0.0)).toArray();
            node.putNull("data");
            node.putArray("labels");
            node.putArray("days");
            node.put("count", 0);
            node.set("aggregated_value", number(f.evaluate(values)));
        } else {
            final List<ZonedDateTime> buckets = period.buckets();
            final ArrayNode data = node.putArray("data");
            final ArrayNode labels = node.putArray("labels");
            final ArrayNode days = node.putArray("days");
            double sum = 0;
            for (int b = 0; b < buckets.size(); b++) {
                final double[] values = new double[perSeries.size()];
                for (int s = 0; s < values.length; s++) {
                    final int bucket = b;
                    values[s] = perSeries.get(s).map(i -> i.data()[bucket]).orElse(0.0);
                }
                final double v = f.evaluate(values);
                sum += v;
                data.add(number(v));
                labels.add(period.label(buckets.get(b)));
                days.add(period.day(buckets.get(b)));
            }
            node.put("count", sum);
        }
        node.put("label", f.label());
        final Optional<CohortBreakdown.Value> cohort = breakdown.flatMap(Breakdown::cohorts).flatMap(c -> breakdownValue.flatMap(c::value));
        if (cohort.isPresent()) {
            node.set("breakdown_value", cohort.get().shown());
        } else {
            breakdownValue.ifPresent(v -> node.put("breakdown_value", v));
        }
        node.set("filter", filter);
        node.putNull("action");
        node.put("order", 0);
        return node;
    }

    private ObjectNode action(final Series s) {
        final ObjectNode action = NODES.objectNode();
        action.put("id", s.label());
        action.put("type", "events");
        action.put("order", s.order());
        action.put("name", s.label());
        action.set("custom_name", s.definition().path("custom_name").isTextual() ? s.definition().get("custom_name") : NODES.nullNode());
        action.put("math", s.math().name().toLowerCase(Locale.ROOT));
        action.set("math_property", s.mathProperty().<JsonNode>map(NODES::textNode).orElse(NODES.nullNode()));
        action.set("math_group_type_index", s.mathGroupTypeIndex().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
        action.set("properties", s.definition().path("properties").isMissingNode() ? NODES.objectNode() : s.definition().get("properties"));
        return action;
    }

    /** A list of entities as the query gave them, without the action definitions the gateway inlined. */
    private static ArrayNode withoutInlined(final JsonNode entities) {
        final ArrayNode list = NODES.arrayNode();
        if (entities.isArray()) {
            for (final JsonNode entity : entities) {
                list.add(entity.has(Action.INLINED) ? ((ObjectNode) entity).deepCopy().without(Action.INLINED) : entity);
            }
        }
        return list;
    }

    /** The query as PostHog echoes it in each item's {@code filter}. */
    private static ObjectNode echo(final JsonNode query, final DateRange range, final Interval interval, final String display) {
        final ObjectNode filter = NODES.objectNode();
        filter.put("insight", "TRENDS");
        filter.set("events", withoutInlined(query.path("events")));
        filter.set("actions", withoutInlined(query.path("actions")));
        filter.set("properties", query.has("properties") ? query.get("properties") : NODES.arrayNode());
        filter.put("filter_test_accounts", query.path("filter_test_accounts").asBoolean(false));
        filter.put("date_from", range.from().toOffsetDateTime().toString());
        filter.put("date_to", range.to().toOffsetDateTime().toString());
        filter.put("interval", interval.lowerName());
        filter.put("display", display);
        for (final String key : List.of("breakdown", "breakdown_type", "breakdowns", "breakdown_limit", "formula", "compare", "compare_to")) {
            if (query.has(key) && !query.get(key).isNull()) {
                filter.set(key, query.get(key));
            }
        }
        return filter;
    }

    /** Whole numbers as integers (PostHog's counts are integers), anything else as it is. */
    private static JsonNode number(final double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? NODES.numberNode((long) v) : NODES.numberNode(v);
    }

    private static Optional<String> text(final JsonNode node) {
        return node == null || node.isNull() || node.asText().isBlank() ? Optional.empty() : Optional.of(node.asText());
    }
}
