package dev.eddy.topology.trends;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.persons.PersonMerge;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.TimelineMetadata;
import dev.eddy.trends.UniqueMarkers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

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
 * <p>Beside the timelines it keeps, through parts of its own: the rollups ({@link Rollups}: an event counts when it
 * first enters a timeline here and stops when it leaves, moved or expired), the event blocks ({@link EventBlockWriter}),
 * the retention index ({@link RetentionIndex}: a wall-clock punctuation removes the events stored longer ago than the
 * retention), the rebuild of rollups and blocks where they are missing ({@link RollupRebuild}), and the redirects of
 * merged-away persons. What it records about those stores is in their metadata store ({@link TimelineMetadata}).
 */
public final class TimelineProcessor implements Processor<String, Object, String, byte[]> {
    /**
     * An event of a person the persons processor of this task holds, handed over in the task. Never of a person merged
     * away (the persons processor forwards those events to the survivor), so it joins the person's timeline without
     * looking for a redirect.
     */
    public record Append(long projectId, String person, TimelineEvent event) {
    }

    public static final String TO_MOVES = "timelines-to-moves";
    /** Bounds the redirect chain followed for one event; chains are short (one per merge of the same person). */
    private static final int MAX_REDIRECTS = 64;
    /** How often expired events are looked for. */
    public static final Duration EXPIRY_INTERVAL = Duration.ofMinutes(10);
    /** How many stored events one rebuild punctuation indexes. */
    static final int REBUILD_BATCH = 20_000;

    private final Duration retention;
    private final int rebuildBatch;
    private ProcessorContext<String, byte[]> context;
    private KeyValueStore<Bytes, byte[]> timelines;
    private KeyValueStore<String, String> redirects;
    private Rollups rollups;
    private EventBlockWriter blocks;
    private RetentionIndex retained;
    private RollupRebuild rebuild;

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
        final KeyValueStore<HourlyEventKey, Long> counts = context.getStateStore(StoreNames.HOURLY_COUNTS);
        final KeyValueStore<String, String> metadata = context.getStateStore(StoreNames.TIMELINE_METADATA);
        LegacyMetadata.migrate(counts, redirects, metadata);
        this.rollups = new Rollups(counts, context.getStateStore(StoreNames.UNIQUE_MARKERS), context::currentSystemTimeMs);
        this.blocks = new EventBlockWriter(timelines, context.getStateStore(StoreNames.EVENT_BLOCKS), metadata);
        this.retained = new RetentionIndex(context.getStateStore(StoreNames.TIMELINE_EXPIRY), timelines, retention);
        if (!retention.isZero()) {
            context.schedule(EXPIRY_INTERVAL, PunctuationType.WALL_CLOCK_TIME, now -> retained.expire(now, this::remove));
        }
        this.rebuild = new RollupRebuild(context, timelines, metadata, rollups, blocks, rebuildBatch);
        rebuild.start();
    }

    @Override
    public void close() {
        if (blocks != null) {
            blocks.close();
        }
    }

    @Override
    public void process(final Record<String, Object> record) {
        rebuild.onRecord();
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
        if (added && rebuild.counted(key)) {
            rollups.index(projectId, personUuid, decoded);
        }
        timelines.put(key, event);
        retained.retain(projectId, personUuid, storedDay, decoded.timeMicros());
        if (added) {
            blocks.appendNew(key);
            rollups.changed(projectId, 1);
        }
    }

    /**
     * Removes expired events of one person with their counts, and recomputes the person's markers of the days they
     * happened on from the events it still has then; how many were still there.
     */
    private int remove(final long projectId, final UUID person, final List<Bytes> keys) {
        final Map<Long, Set<String>> days = new TreeMap<>();
        int removed = 0;
        for (final Bytes key : keys) {
            final byte[] stored = timelines.delete(key);
            if (stored == null) {
                continue;
            }
            removed++;
            blocks.remove(key);
            final TimelineEvent event = TimelineEvent.decode(stored);
            if (rebuild.counted(key)) {
                rollups.uncount(projectId, event);
            }
            days.computeIfAbsent(UniqueMarkers.dayOf(event.time()), day -> new HashSet<>()).add(event.event());
        }
        if (removed > 0) {
            rollups.changed(projectId, removed);
        }
        days.forEach((day, names) -> rollups.remark(timelines, projectId, person, day, names));
        return removed;
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
        final Set<Bytes> marked = new HashSet<>();
        for (final KeyValue<Bytes, byte[]> event : events) {
            context.forward(record.withKey(target).withValue(event.value), TO_MOVES);
            timelines.delete(event.key);
            blocks.remove(event.key);
            final TimelineEvent moved = TimelineEvent.decode(event.value);
            if (rebuild.counted(event.key)) {
                rollups.uncount(merge.projectId(), moved);
            }
            Rollups.addMarkerKeys(marked, merge.projectId(), source, moved);
        }
        rollups.unmark(marked);
        if (!events.isEmpty()) {
            rollups.changed(merge.projectId(), events.size());
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

    /** Today, in days since the epoch (UTC), by the wall clock. */
    private int today() {
        return Math.toIntExact(Math.floorDiv(context.currentSystemTimeMs(), Duration.ofDays(1).toMillis()));
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
