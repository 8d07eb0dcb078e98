package dev.eddy.trends;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One trend series' per-bucket aggregates over some of the events (one instance's partitions, say), per breakdown
 * value. Partials of the same query {@link #merge} into the whole; {@link TrendSeries} turns the whole into PostHog's
 * result items. Distinct-actor math keeps the actors themselves, so actors seen by several partials (groups) count
 * once.
 */
public final class SeriesPartial {
    private final TrendMath math;
    private final DateRange range;
    private final List<ZonedDateTime> buckets;
    /** At most this many cells (breakdown values × buckets) in one partial: about 40 MB of references. */
    static final long MAX_CELLS = 10_000_000;
    private final Map<String, Cell[]> cells = new HashMap<>();
    /** Each bucket's first microsecond, then the range's first and last, for {@link #bucketOfMicros}; made on first use. */
    private long[] bucketStarts;
    private long firstMicros;
    private long lastMicros;
    /** The buckets' average width in microseconds (at least 1), from which {@link #bucketOfMicros} guesses. */
    private long averageWidth;

    /** One bucket's aggregate: whatever {@link #math} needs of it. */
    static final class Cell {
        long events;
        double sum;
        long numbers;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        double[] values = new double[0];
        int valueCount;
        Set<String> actors;
        /** Per-actor math: each actor's events in the bucket. */
        Map<String, Long> actorEvents;

        void addValue(final double v) {
            sum += v;
            numbers++;
            min = Math.min(min, v);
            max = Math.max(max, v);
            if (valueCount == values.length) {
                values = Arrays.copyOf(values, Math.max(8, values.length * 2));
            }
            values[valueCount++] = v;
        }

        void merge(final Cell other) {
            if (other == null) {
                return;
            }
            events += other.events;
            for (int i = 0; i < other.valueCount; i++) {
                addValue(other.values[i]);
            }
            if (other.actors != null) {
                if (actors == null) {
                    actors = new HashSet<>();
                }
                actors.addAll(other.actors);
            }
            if (other.actorEvents != null) {
                if (actorEvents == null) {
                    actorEvents = new HashMap<>();
                }
                other.actorEvents.forEach((actor, n) -> actorEvents.merge(actor, n, Long::sum));
            }
        }
    }

    /**
     * @param math  the math as applied with the range's interval ({@link TrendMath#forInterval})
     * @param range the buckets
     */
    public SeriesPartial(final TrendMath math, final DateRange range) {
        this(math, range, range.buckets());
    }

    /** @param buckets the range's {@link DateRange#buckets()}, shared by the partials of one query */
    SeriesPartial(final TrendMath math, final DateRange range, final List<ZonedDateTime> buckets) {
        this.math = math.forInterval(range.interval());
        this.range = range;
        this.buckets = buckets;
    }

    /**
     * About what this partial's cells take on the heap: references, counts, property values and actors (a uuid's
     * text with its set entry); the buckets are the query's, shared.
     */
    long memoryBytes() {
        long bytes = 96 + (bucketStarts == null ? 0 : 8L * bucketStarts.length);
        for (final Cell[] row : cells.values()) {
            bytes += 96 + 8L * row.length;
            for (final Cell cell : row) {
                if (cell != null) {
                    bytes += 72 + 8L * cell.values.length + (cell.actors == null ? 0 : 48 + 120L * cell.actors.size())
                            + (cell.actorEvents == null ? 0 : 48 + 140L * cell.actorEvents.size());
                }
            }
        }
        return bytes;
    }

    public TrendMath math() {
        return math;
    }

    public DateRange range() {
        return range;
    }

    /**
     * Adds one matching event. Weekly and monthly actives also take events from before the range (up to 7 or 30
     * days), which count in the buckets whose window reaches back to them.
     */
    public void add(final TrendEvent event) {
        if (math == TrendMath.WEEKLY_ACTIVE || math == TrendMath.MONTHLY_ACTIVE) {
            addActive(event);
            return;
        }
        final int bucket = range.bucketOf(event.timestamp());
        if (bucket >= 0) {
            addTo(event, bucket);
        }
    }

    /**
     * An event at (truncated) time {@code t} counts in every bucket {@code d} with {@code t <= d < t + L}: PostHog's
     * window of the L days (hours are truncated to the hour by hour) ending at each bucket.
     */
    private void addActive(final TrendEvent event) {
        if (event.timestamp().isAfter(range.to().toInstant())) {
            return;
        }
        final ZonedDateTime local = event.timestamp().atZone(range.from().getZone());
        final int days = math.activeDays();
        final ZonedDateTime from = range.interval() == Interval.HOUR ? local.truncatedTo(ChronoUnit.HOURS) : local.truncatedTo(ChronoUnit.DAYS);
        final ZonedDateTime until = range.interval() == Interval.HOUR ? from.plusHours(24L * days) : from.plusDays(days);
        // Buckets are in time order: the first one at or after `from`, then each before `until`.
        int b = java.util.Collections.binarySearch(buckets, from);
        b = b >= 0 ? b : -b - 1;
        for (; b < buckets.size() && buckets.get(b).isBefore(until); b++) {
            addTo(event, b);
        }
    }

    /**
     * Adds {@code count} events in the hour {@code epochHour} (UTC) without a breakdown: counts from the hourly
     * rollups, for ranges whose bucket boundaries fall on hours.
     *
     * @throws IllegalStateException unless the math counts events
     */
    public void addCount(final long epochHour, final long count) {
        if (math != TrendMath.TOTAL) {
            throw new IllegalStateException("only event totals are counted without their events");
        }
        final int bucket = bucketOfHour(epochHour);
        if (bucket >= 0) {
            cell(cells.computeIfAbsent("", k -> newCells()), bucket).events += count;
        }
    }

    /**
     * Adds hourly counts without their events: {@code counts[i]} events in the hour {@code firstHour + i} (UTC), for
     * ranges whose bucket boundaries fall on hours.
     *
     * @throws IllegalStateException unless the math counts events
     */
    public void addHours(final long firstHour, final long[] counts) {
        if (math != TrendMath.TOTAL) {
            throw new IllegalStateException("only event totals are counted without their events");
        }
        Cell[] row = null;
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                continue;
            }
            final int bucket = bucketOfHour(firstHour + i);
            if (bucket >= 0) {
                if (row == null) {
                    row = cells.computeIfAbsent("", k -> newCells());
                }
                cell(row, bucket).events += counts[i];
            }
        }
    }

    /**
     * Adds an actor active in the hour {@code epochHour} (UTC), without a breakdown: distinct actors from the
     * unique-person markers, for ranges whose bucket boundaries fall on hours.
     */
    public void addActive(final long epochHour, final String actor) {
        final Instant start = Instant.ofEpochSecond(epochHour * 3600);
        if (math == TrendMath.WEEKLY_ACTIVE || math == TrendMath.MONTHLY_ACTIVE) {
            addActive(TrendEvent.of(start, actor));
            return;
        }
        final int bucket = bucketOfHour(epochHour);
        if (bucket >= 0) {
            addTo(TrendEvent.of(start, actor), bucket);
        }
    }

    /**
     * The bucket of an event at {@code timeMicros} (microseconds since the epoch), or -1 outside the range: what
     * {@link DateRange#bucketOf} answers for that instant, by a search over the buckets' starts.
     */
    public int bucketOfMicros(final long timeMicros) {
        final long[] starts = bucketStarts();
        if (timeMicros < firstMicros || timeMicros > lastMicros) {
            return -1;
        }
        // Buckets are nearly even (hours, days; weeks and months differ by a few days, a zone's days by an hour): the
        // bucket guessed from the average width is the one, or a step or two off, without a search's branches.
        final int last = starts.length - 1;
        if (timeMicros < starts[0]) {
            return -1;
        }
        int b = last == 0 ? 0 : (int) Math.min(last, Math.max(0, (timeMicros - starts[0]) / averageWidth));
        while (b > 0 && starts[b] > timeMicros) {
            b--;
        }
        while (b < last && starts[b + 1] <= timeMicros) {
            b++;
        }
        return b;
    }

    /**
     * The first microsecond that {@link #bucketOfMicros} maps to bucket {@code bucket} (one it answered): with
     * {@link #bucketEndMicros}, the span a scan of rows in time order checks before asking again.
     */
    public long bucketStartMicros(final int bucket) {
        return Math.max(bucketStarts()[bucket], firstMicros);
    }

    /** One past the last microsecond that {@link #bucketOfMicros} maps to bucket {@code bucket} (one it answered). */
    public long bucketEndMicros(final int bucket) {
        final long[] starts = bucketStarts();
        return bucket + 1 < starts.length ? Math.min(starts[bucket + 1], lastMicros + 1) : lastMicros + 1;
    }

    private long[] bucketStarts() {
        if (bucketStarts == null) {
            final long[] starts = new long[buckets.size()];
            for (int b = 0; b < starts.length; b++) {
                starts[b] = ceilMicros(buckets.get(b).toInstant());
            }
            firstMicros = ceilMicros(range.from().toInstant());
            lastMicros = Math.floorDiv(range.to().toInstant().getEpochSecond() * 1_000_000_000L + range.to().toInstant().getNano(), 1000L);
            averageWidth = starts.length < 2 ? 1 : Math.max(1, (starts[starts.length - 1] - starts[0]) / (starts.length - 1));
            bucketStarts = starts;
        }
        return bucketStarts;
    }

    /** The first whole microsecond at or after {@code time}. */
    private static long ceilMicros(final Instant time) {
        return Math.addExact(Math.multiplyExact(time.getEpochSecond(), 1_000_000L), (time.getNano() + 999) / 1000);
    }

    /**
     * Adds {@code count} events to a bucket and breakdown value at once: what {@code count} calls of {@link #add}
     * with events of that bucket and value add, for math that only counts events.
     *
     * @throws IllegalStateException unless the math counts events
     */
    public void addEvents(final int bucket, final String breakdown, final long count) {
        if (math != TrendMath.TOTAL) {
            throw new IllegalStateException("only event totals are counted without their events");
        }
        cell(cells.computeIfAbsent(breakdown, k -> newCells()), bucket).events += count;
    }

    /**
     * The bucket of an hour (rollups feed every hour of every partition): the bucket of its first microsecond, which
     * is {@link DateRange#bucketOf}'s when buckets start on hours, as they do for every query rollups answer.
     */
    private int bucketOfHour(final long epochHour) {
        return bucketOfMicros(epochHour * 3_600_000_000L);
    }

    private void addTo(final TrendEvent event, final int bucket) {
        final Cell cell = cell(cells.computeIfAbsent(event.breakdown(), k -> newCells()), bucket);
        cell.events++;
        if (math.distinctActors()) {
            if (cell.actors == null) {
                cell.actors = new HashSet<>();
            }
            cell.actors.add(event.actor());
        }
        if (math.propertyValues() && event.value().isPresent()) {
            cell.addValue(event.value().getAsDouble());
        }
        if (math.perActor()) {
            if (cell.actorEvents == null) {
                cell.actorEvents = new HashMap<>();
            }
            cell.actorEvents.merge(event.actor(), 1L, Long::sum);
        }
    }

    /**
     * A new breakdown value's row. Cells are made when first written (a row of a sparse breakdown value costs its
     * references only), and the rows of one partial are bounded: a query whose breakdown values times buckets pass
     * {@link #MAX_CELLS} is refused rather than exhausting memory.
     */
    private Cell[] newCells() {
        if ((long) (cells.size() + 1) * buckets.size() > MAX_CELLS) {
            throw new IllegalArgumentException("The query has too many breakdown values for " + buckets.size() + " intervals (more than "
                    + MAX_CELLS + " cells): narrow the date range, choose a coarser interval or break down by a property with fewer values.");
        }
        return new Cell[buckets.size()];
    }

    /** The row's cell of a bucket, made on first use. */
    private static Cell cell(final Cell[] row, final int bucket) {
        Cell cell = row[bucket];
        if (cell == null) {
            cell = new Cell();
            row[bucket] = cell;
        }
        return cell;
    }

    /**
     * For each actor of a distinct-actor series, the buckets it was active in (under any breakdown value): what
     * stickiness, lifecycles and retention count.
     */
    public Map<String, java.util.BitSet> activity() {
        final Map<String, java.util.BitSet> activity = new HashMap<>();
        cells.values().forEach(row -> addActivity(row, activity));
        return activity;
    }

    /** {@link #activity()} per breakdown value: each value's actors, with the buckets each was active in under it. */
    public Map<String, Map<String, java.util.BitSet>> activityByBreakdown() {
        final Map<String, Map<String, java.util.BitSet>> byValue = new HashMap<>();
        cells.forEach((value, row) -> addActivity(row, byValue.computeIfAbsent(value, v -> new HashMap<>())));
        return byValue;
    }

    private static void addActivity(final Cell[] row, final Map<String, java.util.BitSet> activity) {
        for (int b = 0; b < row.length; b++) {
            final Cell cell = row[b];
            if (cell != null && cell.actors != null) {
                final int bucket = b;
                cell.actors.forEach(actor -> activity.computeIfAbsent(actor, a -> new java.util.BitSet()).set(bucket));
            }
        }
    }

    /** Adds another partial of the same series and range into this one. */
    public SeriesPartial merge(final SeriesPartial other) {
        if (other.math != math || !other.range.equals(range)) {
            throw new IllegalArgumentException("partials of different series do not merge");
        }
        other.cells.forEach((breakdown, row) -> {
            final Cell[] mine = cells.computeIfAbsent(breakdown, k -> newCells());
            for (int i = 0; i < row.length; i++) {
                if (row[i] != null) {
                    cell(mine, i).merge(row[i]);
                }
            }
        });
        return this;
    }

    /**
     * Writes the cells for another instance to {@link #readFrom}: per breakdown value, per bucket, the event count,
     * the property values and the actors (a uuid in 16 bytes, any other id as text).
     */
    void writeTo(final DataOutputStream out) throws IOException {
        out.writeInt(cells.size());
        for (final Map.Entry<String, Cell[]> row : cells.entrySet()) {
            out.writeUTF(row.getKey());
            for (final Cell stored : row.getValue()) {
                final Cell cell = stored == null ? new Cell() : stored;
                out.writeLong(cell.events);
                out.writeInt(cell.valueCount);
                for (int i = 0; i < cell.valueCount; i++) {
                    out.writeDouble(cell.values[i]);
                }
                out.writeInt(cell.actors == null ? 0 : cell.actors.size());
                if (cell.actors != null) {
                    for (final String actor : cell.actors) {
                        dev.eddy.serde.Binary.writeId(out, actor);
                    }
                }
                if (math.perActor()) {
                    out.writeInt(cell.actorEvents == null ? 0 : cell.actorEvents.size());
                    if (cell.actorEvents != null) {
                        for (final Map.Entry<String, Long> actor : cell.actorEvents.entrySet()) {
                            dev.eddy.serde.Binary.writeId(out, actor.getKey());
                            out.writeLong(actor.getValue());
                        }
                    }
                }
            }
        }
    }

    /** Adds cells written by {@link #writeTo} of the same series and range into this partial. */
    void readFrom(final DataInputStream in) throws IOException {
        final int rows = in.readInt();
        for (int r = 0; r < rows; r++) {
            final Cell[] mine = cells.computeIfAbsent(in.readUTF(), k -> newCells());
            for (int b = 0; b < mine.length; b++) {
                final Cell cell = new Cell();
                cell.events = in.readLong();
                final int values = in.readInt();
                for (int i = 0; i < values; i++) {
                    cell.addValue(in.readDouble());
                }
                final int actors = in.readInt();
                if (actors > 0) {
                    cell.actors = new HashSet<>(Math.max(16, actors * 2));
                    for (int i = 0; i < actors; i++) {
                        cell.actors.add(dev.eddy.serde.Binary.readId(in));
                    }
                }
                final int counted = math.perActor() ? in.readInt() : 0;
                if (counted > 0) {
                    cell.actorEvents = new HashMap<>(Math.max(16, counted * 2));
                    for (int i = 0; i < counted; i++) {
                        cell.actorEvents.put(dev.eddy.serde.Binary.readId(in), in.readLong());
                    }
                }
                if (cell.events > 0 || cell.valueCount > 0 || cell.actors != null || cell.actorEvents != null) {
                    cell(mine, b).merge(cell);
                }
            }
        }
    }

    Map<String, Cell[]> cells() {
        return cells;
    }

    List<ZonedDateTime> buckets() {
        return buckets;
    }

    /** The math's value of one cell: 0 for a bucket without events, as in PostHog. */
    double value(final Cell cell) {
        if (cell == null) {
            return 0;
        }
        return switch (math) {
            case TOTAL -> cell.events;
            case DAU, WEEKLY_ACTIVE, MONTHLY_ACTIVE, UNIQUE_GROUP -> cell.actors == null ? 0 : cell.actors.size();
            case SUM -> cell.numbers == 0 ? 0 : cell.sum;
            case AVG -> cell.numbers == 0 ? 0 : cell.sum / cell.numbers;
            case MIN -> cell.numbers == 0 ? 0 : cell.min;
            case MAX -> cell.numbers == 0 ? 0 : cell.max;
            case MEDIAN, P75, P90, P95, P99 -> quantile(Arrays.copyOf(cell.values, cell.valueCount), math.quantile().getAsDouble());
            case AVG_COUNT_PER_ACTOR, MIN_COUNT_PER_ACTOR, MAX_COUNT_PER_ACTOR, MEDIAN_COUNT_PER_ACTOR, P75_COUNT_PER_ACTOR,
                 P90_COUNT_PER_ACTOR, P95_COUNT_PER_ACTOR, P99_COUNT_PER_ACTOR -> perActor(cell);
        };
    }

    /** The per-actor math over the bucket's actors' event counts; 0 without any. */
    private double perActor(final Cell cell) {
        if (cell.actorEvents == null || cell.actorEvents.isEmpty()) {
            return 0;
        }
        final double[] counts = cell.actorEvents.values().stream().mapToDouble(Long::doubleValue).toArray();
        return switch (math) {
            case AVG_COUNT_PER_ACTOR -> Arrays.stream(counts).sum() / counts.length;
            case MIN_COUNT_PER_ACTOR -> Arrays.stream(counts).min().getAsDouble();
            case MAX_COUNT_PER_ACTOR -> Arrays.stream(counts).max().getAsDouble();
            default -> quantile(counts, math.quantile().getAsDouble());
        };
    }

    /** ClickHouse's {@code quantile}: linear interpolation at (n − 1)·p of the values, which it sorts in place. */
    private static double quantile(final double[] sorted, final double p) {
        if (sorted.length == 0) {
            return 0;
        }
        Arrays.sort(sorted);
        final double position = (sorted.length - 1) * p;
        final int lower = (int) Math.floor(position);
        final int upper = Math.min(lower + 1, sorted.length - 1);
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
    }

    /** Per breakdown value, the actors' first buckets (for cumulative distinct-actor math). */
    Map<String, long[]> firstAppearances() {
        final Map<String, long[]> result = new HashMap<>();
        cells.forEach((breakdown, row) -> {
            final Set<String> seen = new HashSet<>();
            final long[] counts = new long[row.length];
            for (int i = 0; i < row.length; i++) {
                if (row[i] != null && row[i].actors != null) {
                    for (final String actor : row[i].actors) {
                        if (seen.add(actor)) {
                            counts[i]++;
                        }
                    }
                }
            }
            result.put(breakdown, counts);
        });
        return result;
    }
}
