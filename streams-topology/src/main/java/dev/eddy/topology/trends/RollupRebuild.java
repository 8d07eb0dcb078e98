package dev.eddy.topology.trends;

import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.TimelineMetadata;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds a partition's rollups and event blocks from its timelines where they are missing: rollups written by an
 * earlier format or none at all (before an upgrade; {@link TimelineMetadata#ROLLUPS_BUILT} absent), event blocks missing
 * rows (a new instance, a failover, an unclean stop: {@link dev.eddy.columns.BlockKeys#COMPLETE} absent). It runs in the
 * background, a batch per punctuation; meanwhile queries read this partition's timelines instead.
 *
 * <p>Events stored or removed while it runs count in the rollups only once the rebuild has passed their key
 * ({@link #counted}), so nothing counts twice; its cursor ({@link TimelineMetadata#ROLLUPS_REBUILT_UP_TO}) is kept, so a
 * restart continues from it. Events get their block rows at once; the rebuild adds rows only to events without one, so
 * a block rebuild may safely start over from the first key (it does when the process restarts).
 */
final class RollupRebuild {
    /** How often a batch is rebuilt. */
    static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Logger LOG = LoggerFactory.getLogger(RollupRebuild.class);
    private static final Bytes LAST_KEY = Bytes.wrap(filled(TimelineKeys.LENGTH, (byte) 0xFF));

    private final ProcessorContext<?, ?> context;
    private final KeyValueStore<Bytes, byte[]> timelines;
    private final KeyValueStore<String, String> metadata;
    private final Rollups rollups;
    private final EventBlockWriter blocks;
    private final int batch;

    /** Whether the rollups are being rebuilt (and count a live event only once the rebuild has passed its key). */
    private boolean rollupsRebuilding;
    /** Whether the event blocks are being completed (a live event gets its row at once; the rebuild skips it). */
    private boolean blocksRebuilding;
    /** While a rebuild runs: the last timeline key it has read; null when none runs. */
    private Bytes rebuiltUpTo;
    /** The last timeline key the rollups included when this rebuild started (an earlier one had got that far). */
    private Bytes rollupsFrom = Bytes.wrap(new byte[0]);
    /** Nothing was stored when the task opened: its rollups and blocks are complete, recorded with the first record. */
    private boolean builtPending;
    private boolean completePending;
    private Cancellable punctuation;
    private long started;

    /** @param batch how many stored events one punctuation rebuilds */
    RollupRebuild(final ProcessorContext<?, ?> context, final KeyValueStore<Bytes, byte[]> timelines,
                  final KeyValueStore<String, String> metadata, final Rollups rollups, final EventBlockWriter blocks, final int batch) {
        this.context = context;
        this.timelines = timelines;
        this.metadata = metadata;
        this.rollups = rollups;
        this.blocks = blocks;
        this.batch = batch;
    }

    /** Starts rebuilding what is missing, if anything is: on the task's opening. */
    void start() {
        rollupsRebuilding = metadata.get(TimelineMetadata.ROLLUPS_BUILT) == null;
        blocksRebuilding = !blocks.complete();
        if (!rollupsRebuilding && !blocksRebuilding) {
            return;
        }
        final String cursor = metadata.get(TimelineMetadata.ROLLUPS_REBUILT_UP_TO);
        if (cursor == null) {
            try (KeyValueIterator<Bytes, byte[]> any = timelines.all()) {
                if (!any.hasNext()) {
                    // Nothing stored yet: complete as it stands; recorded with the first record.
                    builtPending = rollupsRebuilding;
                    completePending = blocksRebuilding;
                    rollupsRebuilding = false;
                    blocksRebuilding = false;
                    return;
                }
            }
        }
        if (rollupsRebuilding && cursor != null) {
            rollupsFrom = Bytes.wrap(HexFormat.of().parseHex(cursor));
        }
        rebuiltUpTo = blocksRebuilding ? Bytes.wrap(new byte[0]) : rollupsFrom;
        started = System.nanoTime();
        LOG.info("task {}: rebuilding {} from the stored timelines; queries read the timelines meanwhile", context.taskId(),
                rollupsRebuilding && blocksRebuilding ? "the hourly rollups and the event blocks"
                        : rollupsRebuilding ? "the hourly rollups" : "the event blocks");
        punctuation = context.schedule(INTERVAL, PunctuationType.WALL_CLOCK_TIME, now -> rebuildSome());
    }

    /** Records what a task opened on empty stores found complete: with its first record, when writes are allowed. */
    void onRecord() {
        if (builtPending) {
            metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
            builtPending = false;
        }
        if (completePending) {
            blocks.markComplete();
            completePending = false;
        }
    }

    /** Whether a stored event is in the rollups: always, except past the cursor of a rollup rebuild that is running. */
    boolean counted(final Bytes key) {
        return !rollupsRebuilding || key.compareTo(rollupsCursor()) <= 0;
    }

    private void rebuildSome() {
        if (rebuiltUpTo == null) {
            return;
        }
        Bytes last = null;
        final boolean done;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(rebuiltUpTo, LAST_KEY)) {
            int rebuilt = 0;
            while (it.hasNext() && rebuilt < batch) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (entry.key.equals(rebuiltUpTo)) {
                    continue;
                }
                if (rollupsRebuilding && entry.key.compareTo(rollupsFrom) > 0) {
                    rollups.index(TimelineKeys.project(entry.key), TimelineKeys.person(entry.key), TimelineEvent.decode(entry.value));
                }
                if (blocksRebuilding) {
                    blocks.append(entry.key);
                }
                last = entry.key;
                rebuilt++;
            }
            done = !it.hasNext();
        }
        if (last != null) {
            rebuiltUpTo = last;
        }
        if (done) {
            if (rollupsRebuilding) {
                metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
            }
            if (blocksRebuilding) {
                blocks.markComplete();
            }
            rollupsRebuilding = false;
            blocksRebuilding = false;
            metadata.delete(TimelineMetadata.ROLLUPS_REBUILT_UP_TO);
            rebuiltUpTo = null;
            punctuation.cancel();
            LOG.info("task {}: rebuilt from the stored timelines in {} ms", context.taskId(), (System.nanoTime() - started) / 1_000_000);
        } else if (rollupsRebuilding) {
            metadata.put(TimelineMetadata.ROLLUPS_REBUILT_UP_TO, HexFormat.of().formatHex(rollupsCursor().get()));
        }
    }

    /** The last timeline key the rollups include while they are rebuilt. */
    private Bytes rollupsCursor() {
        return rebuiltUpTo == null || rebuiltUpTo.compareTo(rollupsFrom) < 0 ? rollupsFrom : rebuiltUpTo;
    }

    private static byte[] filled(final int length, final byte value) {
        final byte[] bytes = new byte[length];
        Arrays.fill(bytes, value);
        return bytes;
    }
}
