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
 * <p>Retention: each stored event is indexed in {@link StoreNames#TIMELINE_EXPIRY} by the day it was stored; a
 * wall-clock punctuation removes the events stored longer ago than the retention, a bounded batch at a time.
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
    private static final byte[] NOTHING = new byte[0];

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
            store(append.projectId(), append.person(), append.event(), append.event().encode());
        } else if (value instanceof EnrichedEvent enriched) {
            add(record, enriched.event().projectId(), enriched.personId(), encode(enriched.event(), enriched.groups()));
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

    /** Stores the event ({@code decoded}, encoded as {@code event}) in the timeline of {@code person}, which has not been merged away. */
    private void store(final long projectId, final String person, final TimelineEvent decoded, final byte[] event) {
        final UUID personUuid = UUID.fromString(person);
        final Bytes key = TimelineKeys.of(projectId, personUuid, decoded.timeMicros(), decoded.uuid());
        // A re-delivered event overwrites itself: no count, no change.
        final boolean added = timelines.get(key) == null;
        if (added && counted(key)) {
            index(projectId, personUuid, decoded);
        }
        timelines.put(key, event);
        expiry.put(expiryKey(today(), key), NOTHING);
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
     * Removes an expired event with its count, and recomputes the person's markers of that day from the events it
     * still has then.
     */
    private void expire(final Bytes key) {
        final byte[] stored = timelines.delete(key);
        if (stored == null) {
            return;
        }
        blocks.remove(key);
        final TimelineEvent event = TimelineEvent.decode(stored);
        final long projectId = TimelineKeys.project(key);
        final UUID person = TimelineKeys.person(key);
        if (counted(key)) {
            count(projectId, event, -1);
        }
        changed(projectId, 1);
        final long day = UniqueMarkers.dayOf(event.time());
        int named = 0;
        int all = 0;
        final long dayStart = TimelineEvent.micros(Instant.ofEpochSecond(day * 86_400));
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.of(projectId, person, dayStart, new UUID(0, 0)),
                TimelineKeys.of(projectId, person, dayStart + 86_400_000_000L - 1, new UUID(-1, -1)))) {
            while (it.hasNext()) {
                final TimelineEvent same = TimelineEvent.decode(it.next().value);
                all |= UniqueMarkers.hourBit(same.time());
                if (same.event().equals(event.event())) {
                    named |= UniqueMarkers.hourBit(same.time());
                }
            }
        }
        putMarker(UniqueMarkers.key(projectId, event.event(), day, person), named);
        putMarker(UniqueMarkers.key(projectId, UniqueMarkers.ALL_EVENTS, day, person), all);
    }

    private void putMarker(final Bytes key, final int hours) {
        if (hours == 0) {
            markers.delete(key);
        } else {
            markers.put(key, UniqueMarkers.value(hours));
        }
    }

    /** Removes the events stored before the retention began, at most {@link #MAX_EXPIRED_PER_RUN} of them. */
    void expire(final long nowMillis) {
        final long firstKept = Math.floorDiv(nowMillis - retention.toMillis(), Duration.ofDays(1).toMillis());
        final List<Bytes> expired = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = expiry.range(expiryKey(Long.MIN_VALUE, null), expiryKey(firstKept, null))) {
            while (it.hasNext() && expired.size() < MAX_EXPIRED_PER_RUN) {
                final Bytes key = it.next().key;
                if (dayOf(key) < firstKept) {
                    expired.add(key);
                }
            }
        }
        for (final Bytes key : expired) {
            expire(Bytes.wrap(java.util.Arrays.copyOfRange(key.get(), Long.BYTES, key.get().length)));
            expiry.delete(key);
        }
    }

    private long today() {
        return Math.floorDiv(context.currentSystemTimeMs(), Duration.ofDays(1).toMillis());
    }

    /** {@code [day: 8, sign-flipped][timeline key]}; without a timeline key, the first key of the day. */
    private static Bytes expiryKey(final long day, final Bytes timelineKey) {
        final java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(Long.BYTES + (timelineKey == null ? 0 : TimelineKeys.LENGTH));
        b.putLong(day ^ Long.MIN_VALUE);
        if (timelineKey != null) {
            b.put(timelineKey.get());
        }
        return Bytes.wrap(b.array());
    }

    private static long dayOf(final Bytes expiryKey) {
        return java.nio.ByteBuffer.wrap(expiryKey.get()).getLong() ^ Long.MIN_VALUE;
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

    private static byte[] encode(final CapturedEvent event, final Map<String, String> groups) {
        return TimelineEvent.of(event.timestamp(), event.uuid(), event.event(), event.distinctId(), groups,
                event.propertiesJson()).encode();
    }

    private static long projectOf(final String key) {
        return Long.parseLong(key.substring(0, key.indexOf(':')));
    }

    private static String personOf(final String key) {
        return key.substring(key.indexOf(':') + 1);
    }
}
