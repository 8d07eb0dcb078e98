package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Binary;
import dev.eddy.timelines.TimelineEvent;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * PostHog's lifecycle insight ({@code insight: LIFECYCLE}, or a trend {@code shown_as: Lifecycle}) over one series: in
 * each interval of the range, the persons who came for the first time ({@code new}: their first active interval is the
 * one they were created in), came back after being away ({@code resurrecting}), came again after the interval before
 * ({@code returning}), and, as negative numbers, those who came in the interval before but not in this one
 * ({@code dormant}).
 *
 * <p>It reads the trend of distinct persons per interval over the same series and filters, from one interval before
 * the range (so the first interval's persons are returning or dormant as the interval before says) to the end of the
 * range's last interval, as PostHog reads it. The partial adds each person's creation time, looked up on the partition
 * holding the person ({@link PropertyLookup#personCreatedAt}); the whole classifies every person. Activity two or more
 * intervals before the range is not read, so a person back after that is resurrecting, as in PostHog.
 */
public final class LifecycleQuery {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final byte PARTIAL_VERSION = 1;
    /** The statuses in PostHog's order. */
    private static final List<String> STATUSES = List.of("new", "returning", "resurrecting", "dormant");
    /** The trend's options that have no meaning for a lifecycle: PostHog drops them too. */
    private static final List<String> DROPPED = java.util.stream.Stream.concat(TrendQuery.LINE_OPTIONS.stream(),
            java.util.stream.Stream.of("compare", "compare_to")).toList();

    /** The trend from one interval before the range to the end of its last interval. */
    private final TrendQuery trend;
    /** The range as asked: its intervals are the answer's. */
    private final DateRange range;
    private final TrendQuery.Series series;

    /** The bar whose persons are asked for ({@code target_date} and {@code lifecycle_type}), if any. */
    private final Optional<Map.Entry<ZonedDateTime, String>> bar;
    private final ActorPage page;

    private LifecycleQuery(final TrendQuery trend, final DateRange range, final Optional<Map.Entry<ZonedDateTime, String>> bar, final ActorPage page) {
        this.bar = bar;
        this.page = page;
        this.trend = trend;
        this.range = range;
        this.series = trend.seriesList().get(0);
    }

    /**
     * @throws IllegalArgumentException naming what is wrong with the query, or what Eddy does not answer yet
     */
    public static LifecycleQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                       final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!query.isObject()) {
            throw new IllegalArgumentException("a lifecycle query must be an object");
        }
        if (query.path("events").size() + query.path("actions").size() > 1) {
            throw new IllegalArgumentException("a lifecycle insight has one series");
        }
        if (query.hasNonNull("aggregation_group_type_index")) {
            throw new IllegalArgumentException("lifecycles of groups are not supported by Eddy yet");
        }
        final ObjectNode asTrend = ((ObjectNode) query).deepCopy();
        DROPPED.forEach(asTrend::remove);
        for (final String kind : List.of("events", "actions")) {
            for (final JsonNode entity : asTrend.path(kind)) {
                if (entity.isObject()) {
                    ((ObjectNode) entity).put("math", "dau").remove(List.of("math_property", "math_group_type_index"));
                }
            }
        }
        final DateRange asked = TrendQuery.parse(asTrend, zone, weekStart, testAccountFilters, now, earliest).range();
        final List<ZonedDateTime> buckets = asked.buckets();
        final ZonedDateTime first = buckets.get(0);
        final ZonedDateTime before = switch (asked.interval()) {
            case HOUR -> first.minusHours(1);
            case DAY -> first.minusDays(1);
            case WEEK -> first.minusWeeks(1);
            case MONTH -> first.minusMonths(1);
        };
        final ZonedDateTime end = asked.interval().next(buckets.get(buckets.size() - 1)).minus(1, ChronoUnit.MICROS);
        asTrend.put("date_from", before.toOffsetDateTime().toString());
        asTrend.put("date_to", end.toOffsetDateTime().toString());
        final TrendQuery read = TrendQuery.parse(asTrend, zone, weekStart, testAccountFilters, now, earliest);
        if (!read.range().buckets().subList(1, read.range().buckets().size()).equals(buckets)) {
            throw new IllegalStateException("the lifecycle's widened range " + read.range().buckets() + " does not end with " + buckets);
        }
        final Optional<Map.Entry<ZonedDateTime, String>> bar = query.hasNonNull("target_date") || query.hasNonNull("lifecycle_type")
                ? Optional.of(Map.entry(DateExpression.parse(query.path("target_date").asText(""), zone, now.atZone(zone)).time(),
                        query.path("lifecycle_type").asText("")))
                : Optional.empty();
        return new LifecycleQuery(read, asked, bar, ActorPage.of(query));
    }

    /** The trend of distinct persons per interval whose partials this query reads. */
    public TrendQuery trend() {
        return trend;
    }

    public Partial partial() {
        return new Partial(trend.partial(), new HashMap<>());
    }

    /**
     * Records when each person of the partial that has no creation time yet was created, as {@code lookup} (the persons
     * of the partition just read) knows it.
     */
    public void addCreated(final Partial partial, final PropertyLookup lookup) {
        for (final String person : partial.seriesPartial().activity().keySet()) {
            if (!partial.createdMicros.containsKey(person)) {
                lookup.personCreatedAt(person).ifPresent(at -> partial.createdMicros.put(person, TimelineEvent.micros(at)));
            }
        }
    }

    /** A partial from {@link Partial#encode}. */
    public Partial decode(final byte[] bytes) {
        return Binary.read(bytes, PARTIAL_VERSION, "a lifecycle partial", in -> {
            final TrendQuery.Partial read = trend.decode(in.readNBytes(in.readInt()));
            final int persons = in.readInt();
            final Map<String, Long> created = new HashMap<>(Math.max(16, persons * 2));
            for (int i = 0; i < persons; i++) {
                created.put(Binary.readId(in), in.readLong());
            }
            return new Partial(read, created);
        });
    }

    /**
     * The persons behind one bar: those of {@code status} ({@code new}, {@code returning}, {@code resurrecting},
     * {@code dormant}) in the interval starting at {@code target}, by id.
     *
     * @throws IllegalArgumentException when {@code target} starts no interval of the range, or the status is unknown
     */
    public List<String> actors(final Partial whole, final ZonedDateTime target, final String status) {
        final int wanted = STATUSES.indexOf(status);
        if (wanted < 0) {
            throw new IllegalArgumentException("lifecycle_type must be one of " + STATUSES + "; got '" + status + "'");
        }
        final int bucket = range.buckets().indexOf(range.interval().startOf(target, range.weekStart())) + 1;
        if (bucket <= 0) {
            throw new IllegalArgumentException("target_date is not in the lifecycle's range");
        }
        final SeriesPartial activity = whole.seriesPartial();
        final List<String> actors = new java.util.ArrayList<>();
        activity.activity().forEach((person, active) -> {
            if (status(whole, activity, person, active, bucket) == wanted) {
                actors.add(person);
            }
        });
        actors.sort(null);
        return actors;
    }

    /** A person's status in interval {@code b} of the widened range: 0..3 as {@link #STATUSES}, or -1 for none. */
    private static int status(final Partial whole, final SeriesPartial activity, final String person, final java.util.BitSet active, final int b) {
        if (!active.get(b)) {
            return b > 0 && active.get(b - 1) ? 3 : -1;
        }
        if (b > 0 && active.get(b - 1)) {
            return 1;
        }
        final Long created = whole.createdMicros.get(person);
        final int createdIn = created == null ? -1 : activity.bucketOfMicros(created);
        return active.previousSetBit(b - 1) < 0 && b == createdIn ? 0 : 2;
    }

    /** PostHog's four result items, new, returning, resurrecting and dormant, from every partial merged into {@code whole}. */
    /** What the engine answers: the page of a bar's persons when one is asked for, else {@link #result}. */
    public JsonNode answer(final Partial whole) {
        return bar.isPresent() ? page.of(actors(whole, bar.get().getKey(), bar.get().getValue())) : result(whole);
    }

    public ArrayNode result(final Partial whole) {
        final SeriesPartial activity = whole.seriesPartial();
        final int intervals = range.buckets().size();
        // Per status, per interval of the widened range (0 is the one before the range).
        final long[][] counts = new long[STATUSES.size()][intervals + 1];
        activity.activity().forEach((person, active) -> {
            final Long created = whole.createdMicros.get(person);
            final int createdIn = created == null ? -1 : activity.bucketOfMicros(created);
            int previous = -1;
            for (int b = active.nextSetBit(0); b >= 0; b = active.nextSetBit(b + 1)) {
                final int status = previous < 0 ? (b == createdIn ? 0 : 2) : previous == b - 1 ? 1 : 2;
                counts[status][b]++;
                if (!active.get(b + 1) && b + 1 <= intervals) {
                    counts[3][b + 1]--;
                }
                previous = b;
            }
        });
        final ArrayNode result = NODES.arrayNode();
        for (int s = 0; s < STATUSES.size(); s++) {
            final ObjectNode item = result.addObject();
            final ObjectNode action = item.putObject("action");
            action.set("id", series.name().or(series::event).<JsonNode>map(NODES::textNode).orElse(NODES.nullNode()));
            action.put("name", series.label());
            action.put("type", "events");
            action.put("order", 0);
            action.put("math", "total");
            if (series.definition().path("custom_name").isTextual()) {
                action.set("custom_name", series.definition().get("custom_name"));
            }
            final ArrayNode data = item.putArray("data");
            final ArrayNode labels = item.putArray("labels");
            final ArrayNode days = item.putArray("days");
            double total = 0;
            for (int i = 0; i < intervals; i++) {
                final ZonedDateTime bucket = range.buckets().get(i);
                final double n = counts[s][i + 1];
                data.add(n);
                total += n;
                labels.add(range.label(bucket));
                days.add(range.day(bucket));
            }
            item.put("count", total);
            item.put("label", series.label() + " - " + STATUSES.get(s));
            item.put("status", STATUSES.get(s));
        }
        return result;
    }

    /** One instance's share: the persons' activity per interval, and when each of them was created. */
    public static final class Partial {
        private final TrendQuery.Partial trend;
        /** Each person's creation time, in microseconds, as the partition holding the person knows it. */
        private final Map<String, Long> createdMicros;

        private Partial(final TrendQuery.Partial trend, final Map<String, Long> createdMicros) {
            this.trend = trend;
            this.createdMicros = createdMicros;
        }

        /** The partial of the trend of distinct persons the engine reads into. */
        public TrendQuery.Partial trend() {
            return trend;
        }

        private SeriesPartial seriesPartial() {
            return trend.seriesPartial(0);
        }

        public Partial merge(final Partial other) {
            trend.merge(other.trend);
            other.createdMicros.forEach((person, at) -> createdMicros.merge(person, at, Math::min));
            return this;
        }

        public byte[] encode() {
            final byte[] trendBytes = trend.encode();
            return Binary.write(PARTIAL_VERSION, out -> {
                out.writeInt(trendBytes.length);
                out.write(trendBytes);
                out.writeInt(createdMicros.size());
                for (final Map.Entry<String, Long> e : createdMicros.entrySet()) {
                    Binary.writeId(out, e.getKey());
                    out.writeLong(e.getValue());
                }
            });
        }
    }
}
