package dev.eddy.topology.trends;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.persons.PersonMerge;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.UniqueMarkers;
import java.time.Instant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each person's events in time order in {@link StoreNames#EVENT_TIMELINES}, the store funnels and filtered
 * trends read. Fed, on the partitions of {@code project:person}, by:
 * <ul>
 *   <li>the persons processor, in the same task, and {@code events.enriched} (personless events): the event joins
 *   its person's timeline;</li>
 *   <li>{@code persons.merges}: the merged-away person's timeline moves to the survivor (each event re-sent on
 *   {@code timelines.moves}, keyed by the survivor, and deleted here), and the person is remembered as redirected,
 *   so an event of it that arrives later (merges and events reach it by different paths, in no set order) follows;</li>
 *   <li>{@code timelines.moves}: moved events join the survivor's timeline (or follow it further if the survivor
 *   has since been merged too).</li>
 * </ul>
 * So an anonymous person's events before {@code $identify} are in the identified person's timeline, and funnels
 * and unique counts see one person. An event is stored under its own time and uuid: a re-delivered event
 * overwrites itself.
 *
 * <p>The partition's hourly counts in {@link StoreNames#HOURLY_COUNTS} and unique-person markers in
 * {@link StoreNames#UNIQUE_MARKERS} follow the timelines exactly: an event counts, and marks its person's hour, when
 * it first enters a timeline here, and stops when it leaves (moved to another partition, or expired), so unfiltered
 * trends answered from them equal trends scanned from the timelines. Each of those entries and departures also adds
 * one to the project's change counter there ({@link HourlyEventKey#changes}), which live dashboards poll.
 *
 * <p>Retention counts from the day an event was first stored here, which its stored form carries
 * ({@link TimelineEvent#storedDay}), moves included. {@link StoreNames#TIMELINE_EXPIRY} indexes, for each day, the
 * persons who had events stored that day, with the span of days those events happened in: one entry per person and
 * day, not per event, so a person's later events that day only read it (a cached read). A wall-clock punctuation
 * removes, a bounded batch at a time, the events stored longer ago than the retention, found through the index
 * entries of those days. (Entries of the first layout, one per event stored before the stored day was kept, are
 * still read and expire as they did.)
 */
public final class TimelineProcessor implements Processor<String, Object, String, byte[]> {
    /**
     * An event of a person the persons processor of this task holds, handed over in the task. Never of a person merged
     * away (the persons processor forwards those events to the survivor), so it joins the person's timeline without
     * looking for a redirect.
     */
    public record Append(long projectId, String person, TimelineEvent event) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(TimelineProcessor.class);
    public static final String TO_MOVES = "timelines-to-moves";
    /** Bounds the redirect chain followed for one event; chains are short (one per merge of the same person). */
    private static final int MAX_REDIRECTS = 64;
    /** How often expired events are looked for. */
    public static final Duration EXPIRY_INTERVAL = Duration.ofMinutes(10);
    /** The most events one punctuation removes, so processing never pauses long; the rest go next time. */
    static final int MAX_EXPIRED_PER_RUN = 50_000;
    private static final long MICROS_PER_DAY = 86_400_000_000L;
    /** An expiry entry of the first layout: {@code [stored day: 8][timeline key]}, one per event. */
    private static final int EVENT_ENTRY_LENGTH = Long.BYTES + TimelineKeys.LENGTH;
    /** An expiry entry: {@code [stored day: 8][project: 8][person: 16]}, one per person and day. */
    private static final int PERSON_ENTRY_LENGTH = Long.BYTES + Long.BYTES + 16;

    /** How often, and how many events at a time, rollups missing for stored events are rebuilt from the timelines. */
    static final Duration REBUILD_INTERVAL = Duration.ofMillis(200);
    static final int REBUILD_BATCH = 20_000;
    private final int rebuildBatch;
    /** Where a rebuild has got to (a timeline key, in hex), kept in the redirects store under a key no person has. */
    private static final String REBUILD_CURSOR = "#rollups-rebuilt-up-to";
    private static final Bytes LAST_KEY = Bytes.wrap(filled(TimelineKeys.LENGTH, (byte) 0xFF));

    private final Duration retention;
    /** While a rebuild runs: the last timeline key it has read; null when none runs. */
    private Bytes rebuiltUpTo;
    /** Whether the rollups are being rebuilt (and count a live event only once the rebuild has passed its key). */
    private boolean rollupsRebuilding;
    /** The last timeline key the rollups included when this rebuild started (an earlier one had got that far). */
    private Bytes rollupsFrom = Bytes.wrap(new byte[0]);
    /** Whether the event blocks are being completed (a live event gets its row at once; the rebuild skips it). */
    private boolean blocksRebuilding;
    private boolean builtFlagPending;
    private boolean completeFlagPending;
    private EventBlockWriter blocks;
    private org.apache.kafka.streams.processor.Cancellable rebuild;
    private long rebuildStarted;
    private ProcessorContext<String, byte[]> context;
    private KeyValueStore<Bytes, byte[]> timelines;
    private KeyValueStore<String, String> redirects;
    private KeyValueStore<HourlyEventKey, Long> rollups;
    private KeyValueStore<Bytes, byte[]> expiry;
    private KeyValueStore<Bytes, byte[]> markers;

    /**
     * @param retention how long an event is kept after it was stored; zero keeps events forever
     */
    public TimelineProcessor(final Duration retention) {
        this(retention, REBUILD_BATCH);
    }

    /** @param rebuildBatch how many stored events one rebuild punctuation indexes */
    TimelineProcessor(final Duration retention, final int rebuildBatch) {
        this.retention = retention;
        this.rebuildBatch = rebuildBatch;
    }

    @Override
    public void init(final ProcessorContext<String, byte[]> context) {
        this.context = context;
        this.timelines = context.getStateStore(StoreNames.EVENT_TIMELINES);
        this.redirects = context.getStateStore(StoreNames.TIMELINE_REDIRECTS);
        this.rollups = context.getStateStore(StoreNames.HOURLY_COUNTS);
        this.expiry = context.getStateStore(StoreNames.TIMELINE_EXPIRY);
        this.markers = context.getStateStore(StoreNames.UNIQUE_MARKERS);
        this.blocks = new EventBlockWriter(timelines, context.getStateStore(StoreNames.EVENT_BLOCKS), redirects);
        if (!retention.isZero()) {
            context.schedule(EXPIRY_INTERVAL, PunctuationType.WALL_CLOCK_TIME, this::expire);
        }
        rollupsRebuilding = rollups.get(HourlyEventKey.BUILT) == null;
        blocksRebuilding = !blocks.complete();
        if (rollupsRebuilding || blocksRebuilding) {
            startRebuild();
        }
    }

    /**
     * Rollups written by an earlier format (or none at all, before an upgrade) and event blocks missing rows (before
     * an upgrade that added them) are rebuilt from the partition's timelines in the background, a batch per
     * punctuation; meanwhile queries read this partition's timelines instead ({@link HourlyEventKey#BUILT} or
     * {@link dev.eddy.columns.BlockKeys#COMPLETE} is absent). Events stored or removed while it runs count in the rollups only
     * once the rebuild has passed their key, so nothing counts twice. They get their block rows at once; the rebuild
     * adds rows only to events without one, so a block rebuild may safely start over from the first key (it does
     * when the process restarts), while the rollups count only keys past the cursor they had reached.
     */
    private void startRebuild() {
        final String cursor = redirects.get(REBUILD_CURSOR);
        if (cursor == null) {
            try (KeyValueIterator<Bytes, byte[]> any = timelines.all()) {
                if (!any.hasNext()) {
                    // Nothing stored yet: complete as it stands; the flags are written with the first record.
                    builtFlagPending = rollupsRebuilding;
                    completeFlagPending = blocksRebuilding;
                    rollupsRebuilding = false;
                    blocksRebuilding = false;
                    return;
                }
            }
        }
        if (rollupsRebuilding && cursor != null) {
            rollupsFrom = Bytes.wrap(java.util.HexFormat.of().parseHex(cursor));
        }
        rebuiltUpTo = blocksRebuilding ? Bytes.wrap(new byte[0]) : rollupsFrom;
        rebuildStarted = System.nanoTime();
        LOG.info("task {}: rebuilding {} from the stored timelines; queries read the timelines meanwhile", context.taskId(),
                rollupsRebuilding && blocksRebuilding ? "the hourly rollups and the event blocks" : rollupsRebuilding ? "the hourly rollups" : "the event blocks");
        rebuild = context.schedule(REBUILD_INTERVAL, PunctuationType.WALL_CLOCK_TIME, now -> rebuildSome());
    }

    void rebuildSome() {
        if (rebuiltUpTo == null) {
            return;
        }
        Bytes last = null;
        boolean done;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(rebuiltUpTo, LAST_KEY)) {
            int indexed = 0;
            while (it.hasNext() && indexed < rebuildBatch) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (entry.key.equals(rebuiltUpTo)) {
                    continue;
                }
                if (rollupsRebuilding && entry.key.compareTo(rollupsFrom) > 0) {
                    index(TimelineKeys.project(entry.key), TimelineKeys.person(entry.key), TimelineEvent.decode(entry.value));
                }
                if (blocksRebuilding) {
                    blocks.append(entry.key);
                }
                last = entry.key;
                indexed++;
            }
            done = !it.hasNext();
        }
        if (last != null) {
            rebuiltUpTo = last;
        }
        if (done) {
            if (rollupsRebuilding) {
                rollups.put(HourlyEventKey.BUILT, 1L);
            }
            if (blocksRebuilding) {
                blocks.markComplete();
            }
            rollupsRebuilding = false;
            blocksRebuilding = false;
            redirects.delete(REBUILD_CURSOR);
            rebuiltUpTo = null;
            rebuild.cancel();
            LOG.info("task {}: rebuilt from the stored timelines in {} ms", context.taskId(), (System.nanoTime() - rebuildStarted) / 1_000_000);
        } else if (rollupsRebuilding) {
            redirects.put(REBUILD_CURSOR, java.util.HexFormat.of().formatHex(rollupsCursor().get()));
        }
    }

    /** Whether a stored event is in the rollups: always, except past the cursor of a rollup rebuild that is running. */
    private boolean counted(final Bytes key) {
        return !rollupsRebuilding || key.compareTo(rollupsCursor()) <= 0;
    }

    /** The last timeline key the rollups include while they are rebuilt. */
    private Bytes rollupsCursor() {
        return rebuiltUpTo == null || rebuiltUpTo.compareTo(rollupsFrom) < 0 ? rollupsFrom : rebuiltUpTo;
    }

    private static byte[] filled(final int length, final byte value) {
        final byte[] bytes = new byte[length];
        java.util.Arrays.fill(bytes, value);
        return bytes;
    }

    @Override
    public void close() {
        if (blocks != null) {
            blocks.close();
        }
    }

    @Override
    public void process(final Record<String, Object> record) {
        if (builtFlagPending) {
            rollups.put(HourlyEventKey.BUILT, 1L);
            builtFlagPending = false;
        }
        if (completeFlagPending) {
            blocks.markComplete();
            completeFlagPending = false;
        }
        final Object value = record.value();
        if (value instanceof Append append) {
            store(append.projectId(), append.person(), append.event(), append.event().encode(today()));
        } else if (value instanceof EnrichedEvent enriched) {
            add(record, enriched.event().projectId(), enriched.personId(), encode(enriched.event(), enriched.groups(), today()));
        } else if (value instanceof PersonMerge merge) {
            move(record, merge);
        } else if (value instanceof byte[] moved) {
            add(record, projectOf(record.key()), personOf(record.key()), moved);
        } else if (value != null) {
            throw new IllegalArgumentException("unexpected record " + value.getClass().getName());
        }
    }

    /** Stores the event in the person's timeline, or sends it on to the person it was merged into. */
    private void add(final Record<String, ?> record, final long projectId, final String person, final byte[] event) {
        final String target = resolve(projectId, person);
        if (!target.equals(person)) {
            context.forward(record.withKey(projectId + ":" + target).withValue(event), TO_MOVES);
            return;
        }
        store(projectId, person, TimelineEvent.decode(event), event);
    }

    /**
     * Stores the event ({@code decoded}, encoded as {@code encoded}) in the timeline of {@code person}, which has not
     * been merged away. A moved event keeps the day it was first stored (one moved in the first encoding, which has
     * none, counts from today).
     */
    private void store(final long projectId, final String person, final TimelineEvent decoded, final byte[] encoded) {
        final UUID personUuid = UUID.fromString(person);
        final Bytes key = TimelineKeys.of(projectId, personUuid, decoded.timeMicros(), decoded.uuid());
        final byte[] existing = timelines.get(key);
        // A re-delivered event overwrites itself: no count, no change, and its retention still counts from the first.
        final boolean added = existing == null;
        final int carried = TimelineEvent.storedDay(encoded);
        int storedDay = added ? carried : TimelineEvent.storedDay(existing);
        if (storedDay == TimelineEvent.NO_STORED_DAY) {
            storedDay = today();
        }
        final byte[] event = carried == storedDay ? encoded : TimelineEvent.withStoredDay(encoded, storedDay);
        if (added && counted(key)) {
            index(projectId, personUuid, decoded);
        }
        timelines.put(key, event);
        retain(projectId, personUuid, storedDay, decoded.timeMicros());
        if (added) {
            blocks.appendNew(key);
            changed(projectId, 1);
        }
    }

    /**
     * Adds {@code events} to the project's change counter ({@link HourlyEventKey#changes}): whatever entered or left
     * its timelines here, counted or not yet (a rebuild running), since queries read the timelines then.
     */
    private void changed(final long projectId, final long events) {
        add(HourlyEventKey.changes(projectId), events);
    }

    /**
     * Adds {@code delta} to the event's hourly count; a count that reaches zero is removed. A count of a settled hour
     * also counts a change of the project's settled hours ({@link HourlyEventKey#settled}), so queries know to read
     * them again.
     */
    private void count(final long projectId, final TimelineEvent event, final long delta) {
        final HourlyEventKey cell = HourlyEventKey.of(projectId, event.time(), event.event());
        final Long current = rollups.get(cell);
        final long updated = (current == null ? 0 : current) + delta;
        if (updated > 0) {
            rollups.put(cell, updated);
        } else {
            rollups.delete(cell);
        }
        if (cell.hour() < HourlyEventKey.settledBefore(context.currentSystemTimeMs())) {
            add(HourlyEventKey.settled(projectId), 1);
        }
    }

    private void add(final HourlyEventKey counter, final long n) {
        final Long current = rollups.get(counter);
        rollups.put(counter, (current == null ? 0 : current) + n);
    }

    /**
     * Counts a stored event in its hour and marks its person active then, for its name and for all events. An hour
     * marked for a name is marked for all events too (they are set together, and removed and recomputed together), so
     * when the name's marker had the hour already, so has the other.
     */
    private void index(final long projectId, final UUID person, final TimelineEvent event) {
        count(projectId, event, 1);
        if (mark(projectId, person, event.event(), event.time())) {
            mark(projectId, person, UniqueMarkers.ALL_EVENTS, event.time());
        }
    }

    /** Sets the hour of {@code time} in the person's marker of {@code event} for that day; whether it was not set. */
    private boolean mark(final long projectId, final UUID person, final String event, final Instant time) {
        final Bytes key = UniqueMarkers.key(projectId, event, UniqueMarkers.dayOf(time), person);
        final int hours = UniqueMarkers.hours(markers.get(key));
        final int updated = hours | UniqueMarkers.hourBit(time);
        if (updated == hours) {
            return false;
        }
        markers.put(key, UniqueMarkers.value(updated));
        return true;
    }

    /**
     * Indexes the person as having an event stored on {@code storedDay} that happened at {@code timeMicros}: the
     * person's entry of that day covers the event's day. Written only when it is new or its span widens (the first
     * event of the person that day, mostly), read from the cache otherwise.
     */
    private void retain(final long projectId, final UUID person, final int storedDay, final long timeMicros) {
        final Bytes entry = personEntry(storedDay, projectId, person);
        final int day = (int) Math.floorDiv(timeMicros, MICROS_PER_DAY);
        final byte[] span = expiry.get(entry);
        if (span == null) {
            expiry.put(entry, span(day, day));
        } else if (day < firstDay(span) || day > lastDay(span)) {
            expiry.put(entry, span(Math.min(day, firstDay(span)), Math.max(day, lastDay(span))));
        }
    }

    /**
     * Removes the events stored before the retention began, at most about {@link #MAX_EXPIRED_PER_RUN} of them (a
     * person's day is removed whole); the rest go next time.
     */
    void expire(final long nowMillis) {
        final long firstKept = Math.floorDiv(nowMillis - retention.toMillis(), Duration.ofDays(1).toMillis());
        final List<KeyValue<Bytes, byte[]>> due = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = expiry.range(dayStart(Long.MIN_VALUE), dayStart(firstKept))) {
            while (it.hasNext() && due.size() < MAX_EXPIRED_PER_RUN) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (storedDayOf(entry.key) < firstKept) {
                    due.add(entry);
                }
            }
        }
        int removed = 0;
        for (final KeyValue<Bytes, byte[]> entry : due) {
            if (removed >= MAX_EXPIRED_PER_RUN) {
                break;
            }
            final byte[] key = entry.key.get();
            if (key.length == EVENT_ENTRY_LENGTH) {
                final Bytes timelineKey = Bytes.wrap(java.util.Arrays.copyOfRange(key, Long.BYTES, key.length));
                removed += remove(TimelineKeys.project(timelineKey), TimelineKeys.person(timelineKey), List.of(timelineKey));
            } else if (key.length == PERSON_ENTRY_LENGTH) {
                final java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(key, Long.BYTES, key.length - Long.BYTES);
                final long projectId = b.getLong();
                final UUID person = new UUID(b.getLong(), b.getLong());
                removed += remove(projectId, person, storedBefore(projectId, person, entry.value, firstKept));
            }
            expiry.delete(entry.key);
        }
    }

    /** The person's events that happened on the days of {@code span} and were stored before {@code firstKept}. */
    private List<Bytes> storedBefore(final long projectId, final UUID person, final byte[] span, final long firstKept) {
        final List<Bytes> keys = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(
                TimelineKeys.of(projectId, person, (long) firstDay(span) * MICROS_PER_DAY, new UUID(0, 0)),
                TimelineKeys.of(projectId, person, (lastDay(span) + 1L) * MICROS_PER_DAY - 1, new UUID(-1, -1)))) {
            while (it.hasNext()) {
                final KeyValue<Bytes, byte[]> event = it.next();
                final int stored = TimelineEvent.storedDay(event.value);
                if (stored != TimelineEvent.NO_STORED_DAY && stored < firstKept) {
                    keys.add(event.key);
                }
            }
        }
        return keys;
    }

    /**
     * Removes expired events of one person with their counts, and recomputes the person's markers of the days they
     * happened on from the events it still has then; how many were still there.
     */
    private int remove(final long projectId, final UUID person, final List<Bytes> keys) {
        final java.util.Map<Long, java.util.Set<String>> days = new java.util.TreeMap<>();
        int removed = 0;
        for (final Bytes key : keys) {
            final byte[] stored = timelines.delete(key);
            if (stored == null) {
                continue;
            }
            removed++;
            blocks.remove(key);
            final TimelineEvent event = TimelineEvent.decode(stored);
            if (counted(key)) {
                count(projectId, event, -1);
            }
            days.computeIfAbsent(UniqueMarkers.dayOf(event.time()), day -> new java.util.HashSet<>()).add(event.event());
        }
        if (removed > 0) {
            changed(projectId, removed);
        }
        days.forEach((day, names) -> remark(projectId, person, day, names));
        return removed;
    }

    /** Sets the person's markers of {@code day} for {@code names} and for all events from the events it has then. */
    private void remark(final long projectId, final UUID person, final long day, final java.util.Set<String> names) {
        final java.util.Map<String, Integer> named = new java.util.HashMap<>();
        names.forEach(name -> named.put(name, 0));
        int all = 0;
        final long dayStart = day * MICROS_PER_DAY;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.of(projectId, person, dayStart, new UUID(0, 0)),
                TimelineKeys.of(projectId, person, dayStart + MICROS_PER_DAY - 1, new UUID(-1, -1)))) {
            while (it.hasNext()) {
                final TimelineEvent same = TimelineEvent.decode(it.next().value);
                final int hour = UniqueMarkers.hourBit(same.time());
                all |= hour;
                named.computeIfPresent(same.event(), (name, hours) -> hours | hour);
            }
        }
        named.forEach((name, hours) -> putMarker(UniqueMarkers.key(projectId, name, day, person), hours));
        putMarker(UniqueMarkers.key(projectId, UniqueMarkers.ALL_EVENTS, day, person), all);
    }

    private void putMarker(final Bytes key, final int hours) {
        if (hours == 0) {
            markers.delete(key);
        } else {
            markers.put(key, UniqueMarkers.value(hours));
        }
    }

    /** Today, in days since the epoch (UTC), by the wall clock. */
    private int today() {
        return Math.toIntExact(Math.floorDiv(context.currentSystemTimeMs(), Duration.ofDays(1).toMillis()));
    }

    /** The first expiry key of a stored day: {@code [day: 8, sign-flipped]}, so days sort in order. */
    private static Bytes dayStart(final long day) {
        return Bytes.wrap(java.nio.ByteBuffer.allocate(Long.BYTES).putLong(day ^ Long.MIN_VALUE).array());
    }

    private static Bytes personEntry(final long storedDay, final long projectId, final UUID person) {
        return Bytes.wrap(java.nio.ByteBuffer.allocate(PERSON_ENTRY_LENGTH).putLong(storedDay ^ Long.MIN_VALUE).putLong(projectId)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits()).array());
    }

    private static long storedDayOf(final Bytes expiryKey) {
        return java.nio.ByteBuffer.wrap(expiryKey.get()).getLong() ^ Long.MIN_VALUE;
    }

    /** An entry's value: the first and last day (since the epoch) the person's events stored that day happened on. */
    private static byte[] span(final int firstDay, final int lastDay) {
        return java.nio.ByteBuffer.allocate(2 * Integer.BYTES).putInt(firstDay).putInt(lastDay).array();
    }

    private static int firstDay(final byte[] span) {
        return java.nio.ByteBuffer.wrap(span).getInt();
    }

    private static int lastDay(final byte[] span) {
        return java.nio.ByteBuffer.wrap(span).getInt(Integer.BYTES);
    }

    private void move(final Record<String, ?> record, final PersonMerge merge) {
        if (merge.source().equals(merge.target())) {
            return;
        }
        redirects.put(merge.projectId() + ":" + merge.source(), merge.target());
        final UUID source = UUID.fromString(merge.source());
        final List<KeyValue<Bytes, byte[]>> events = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.personStart(merge.projectId(), source),
                TimelineKeys.personEnd(merge.projectId(), source))) {
            it.forEachRemaining(events::add);
        }
        final String target = merge.projectId() + ":" + merge.target();
        // Every event leaves, so every marker of the person goes: the survivor marks them again as they arrive.
        final java.util.Set<Bytes> marked = new java.util.HashSet<>();
        for (final KeyValue<Bytes, byte[]> event : events) {
            context.forward(record.withKey(target).withValue(event.value), TO_MOVES);
            timelines.delete(event.key);
            blocks.remove(event.key);
            final TimelineEvent moved = TimelineEvent.decode(event.value);
            if (counted(event.key)) {
                count(merge.projectId(), moved, -1);
            }
            final long day = UniqueMarkers.dayOf(moved.time());
            marked.add(UniqueMarkers.key(merge.projectId(), moved.event(), day, source));
            marked.add(UniqueMarkers.key(merge.projectId(), UniqueMarkers.ALL_EVENTS, day, source));
        }
        marked.forEach(markers::delete);
        if (!events.isEmpty()) {
            changed(merge.projectId(), events.size());
        }
    }

    /** The person whose timeline holds {@code person}'s events now: itself unless it was merged away. */
    private String resolve(final long projectId, final String person) {
        String current = person;
        for (int hops = 0; hops < MAX_REDIRECTS; hops++) {
            final String next = redirects.get(projectId + ":" + current);
            if (next == null || next.equals(person)) {
                return current;
            }
            current = next;
        }
        return current;
    }

    private static byte[] encode(final CapturedEvent event, final Map<String, String> groups, final int storedDay) {
        return TimelineEvent.of(event.timestamp(), event.uuid(), event.event(), event.distinctId(), groups,
                event.propertiesJson()).encode(storedDay);
    }

    private static long projectOf(final String key) {
        return Long.parseLong(key.substring(0, key.indexOf(':')));
    }

    private static String personOf(final String key) {
        return key.substring(key.indexOf(':') + 1);
    }
}
