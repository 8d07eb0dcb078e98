package dev.eddy.topology.trends;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.TailRow;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineKeys;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps a partition's events column by column in {@link StoreNames#EVENT_BLOCKS} (layout: {@link BlockKeys}), beside
 * the timelines and always equal to them: every event stored in a timeline here is one row, and an event that leaves
 * (moved by a merge, expired) is marked deleted in its block. Rows are numbered per project in the order they arrive;
 * each arrives as a tail row (a reference to its timeline entry), every {@link BlockKeys#PART_ROWS} tail rows become a part, and the block's last row
 * turns its parts and tail into one sealed {@link EventBlock}, stored apart from its entry in the project's range
 * ({@link BlockKeys.Sealed}: an id new with each sealing, so readers may keep it decoded, and its time span). A block whose rows are all deleted is removed. Which row holds an event is kept per timeline key in the same store ({@link BlockKeys#rowOfEvent}).
 *
 * <p>The store is derived from the timelines, and have no changelog: where they are missing (a new instance
 * or a failover restoring the timelines, an unclean stop, after which exactly-once wipes the task's whole state and
 * restores it) the timeline processor rebuilds them from the timelines before queries read them
 * ({@link BlockKeys#COMPLETE}). Pinot and Druid rebuild segments from the stream the same way; here the changelogged
 * timelines are that stream, and Kafka carries no second copy of every event.
 */
final class EventBlockWriter {
    /** The ledger's key of how many times the blocks changed, as of the last commit. */
    static final String CHANGES = dev.eddy.trends.TimelineMetadata.EVENT_BLOCK_CHANGES;
    /** The blocks' own record of the same count, written when the task closes cleanly and removed when it opens. */
    private static final Bytes CHANGES_AT_CLOSE = BlockKeys.meta("changes-at-close");

    private final KeyValueStore<Bytes, byte[]> timelines;
    private final KeyValueStore<Bytes, byte[]> blocks;
    private final KeyValueStore<String, String> ledger;
    /** Each project's next row number, read from the store once per task (a writer lives as long as its task's state). */
    private final java.util.Map<Long, Long> nextRows = new java.util.HashMap<>();
    private long changes;

    /**
     * Opens the task's blocks. They are kept only if they are the ones the timelines were last changed with: the
     * count of changes they recorded when their task last closed cleanly equals the count in {@code ledger}, a
     * changelogged store written with every change. A task whose partition was processed elsewhere since this
     * instance last had it (a rebalance handing it back), or that stopped uncleanly, finds them stale or missing:
     * they are cleared, and the timeline processor rebuilds them.
     *
     * @param timelines where tail rows find their events when their part is made
     * @param ledger    a changelogged store of the same task, where the count of changes is kept under {@link #CHANGES}
     */
    EventBlockWriter(final KeyValueStore<Bytes, byte[]> timelines, final KeyValueStore<Bytes, byte[]> blocks,
                     final KeyValueStore<String, String> ledger) {
        this.timelines = timelines;
        this.blocks = blocks;
        this.ledger = ledger;
        final String logged = ledger.get(CHANGES);
        this.changes = logged == null ? 0 : Long.parseLong(logged);
        final byte[] atClose = blocks.delete(CHANGES_AT_CLOSE);
        if (atClose == null || BlockKeys.number(atClose, -1) != changes || BlockKeys.number(blocks.get(FORMAT), -1) != BlockKeys.VERSION) {
            clear();
        }
    }

    private static final Bytes FORMAT = BlockKeys.meta(BlockKeys.FORMAT);

    /** Removes every key of the store (what a rebuild starts from), and records the layout the rebuild writes. */
    private void clear() {
        final List<Bytes> keys = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> all = blocks.all()) {
            all.forEachRemaining(entry -> keys.add(entry.key));
        }
        deleteAll(keys);
        blocks.put(FORMAT, BlockKeys.number(BlockKeys.VERSION));
    }

    /**
     * Deletes the keys in one write batch: a store's {@code delete} reads each key's value first to return it, which
     * nothing here needs.
     */
    private void deleteAll(final List<Bytes> keys) {
        for (int from = 0; from < keys.size(); from += DELETE_BATCH) {
            final List<Bytes> some = keys.subList(from, Math.min(keys.size(), from + DELETE_BATCH));
            final List<KeyValue<Bytes, byte[]>> deletes = new ArrayList<>(some.size());
            some.forEach(key -> deletes.add(KeyValue.pair(key, null)));
            blocks.putAll(deletes);
        }
    }

    /** The most deletes in one write batch (a store cleared whole would otherwise be one batch in memory). */
    private static final int DELETE_BATCH = 10_000;

    /** Records, as the task closes cleanly, which count of changes the blocks are at. */
    void close() {
        blocks.put(CHANGES_AT_CLOSE, BlockKeys.number(changes));
    }

    private void changed() {
        changes++;
        ledger.put(CHANGES, Long.toString(changes));
    }

    /** Whether the event stored under {@code timelineKey} has its row. */
    boolean has(final Bytes timelineKey) {
        return blocks.get(BlockKeys.rowOfEvent(timelineKey)) != null;
    }

    boolean complete() {
        return blocks.get(BlockKeys.meta(BlockKeys.COMPLETE)) != null;
    }

    void markComplete() {
        blocks.put(BlockKeys.meta(BlockKeys.COMPLETE), BlockKeys.number(1));
    }

    /** Adds the event stored under {@code timelineKey} unless it has its row (a rebuild meeting a live event's). */
    void append(final Bytes timelineKey) {
        if (!has(timelineKey)) {
            appendNew(timelineKey);
        }
    }

    /** Adds an event just stored in its timeline, which therefore has no row yet. */
    void appendNew(final Bytes timelineKey) {
        final long projectId = TimelineKeys.project(timelineKey);
        final long sequence = nextRows.computeIfAbsent(projectId, this::storedNextRow);
        nextRows.put(projectId, sequence + 1);
        changed();
        // One write batch, applied at once: a reader that finds this row the newest finds it in the tail.
        final List<KeyValue<Bytes, byte[]>> writes = new ArrayList<>(4);
        writes.add(KeyValue.pair(BlockKeys.rowOfEvent(timelineKey), BlockKeys.number(sequence)));
        if (sequence == 0) {
            writes.add(KeyValue.pair(BlockKeys.tailEnd(projectId), new byte[0]));
        }
        writes.add(KeyValue.pair(BlockKeys.tail(projectId, sequence), TailRow.encode(timelineKey)));
        writes.add(KeyValue.pair(BlockKeys.newest(projectId), BlockKeys.number(sequence)));
        blocks.putAll(writes);
        final long block = BlockKeys.blockOf(sequence);
        final int row = BlockKeys.rowOf(sequence);
        if (row == BlockKeys.ROWS - 1) {
            seal(projectId, block);
        } else if ((row + 1) % BlockKeys.PART_ROWS == 0) {
            sealPart(projectId, block, row / BlockKeys.PART_ROWS);
        }
    }

    /** The row after the project's newest one; 0 for a new project. */
    private long storedNextRow(final long projectId) {
        return BlockKeys.number(blocks.get(BlockKeys.newest(projectId)), -1) + 1;
    }

    /** Marks the row of the event that was stored under {@code timelineKey} deleted; nothing if it has none. */
    void remove(final Bytes timelineKey) {
        final byte[] at = blocks.delete(BlockKeys.rowOfEvent(timelineKey));
        if (at == null) {
            return;
        }
        changed();
        final long projectId = TimelineKeys.project(timelineKey);
        final long sequence = BlockKeys.number(at, 0);
        final long block = BlockKeys.blockOf(sequence);
        final Bytes key = BlockKeys.deleted(projectId, block);
        final BitSet deleted = BlockKeys.deletedRows(blocks.get(key));
        deleted.set(BlockKeys.rowOf(sequence));
        if (deleted.cardinality() == BlockKeys.ROWS) {
            // Every row was added, so the block is sealed: it goes whole.
            blocks.delete(BlockKeys.sealed(projectId, block));
            deleteSealed(projectId, block);
            blocks.delete(key);
        } else {
            blocks.put(key, BlockKeys.deletedValue(deleted));
        }
        entriesChanged(projectId);
    }

    /** Records that the project's range changed (after the change, before the tail rows it took over go). */
    private void entriesChanged(final long projectId) {
        blocks.put(BlockKeys.entriesChanged(projectId), BlockKeys.number(changes));
    }

    /** Turns the last {@link BlockKeys#PART_ROWS} tail rows into a part, then deletes them from the tail. */
    private void sealPart(final long projectId, final long block, final int part) {
        final EventBlock.Builder builder = new EventBlock.Builder();
        final List<Bytes> tail = tail(projectId, block * BlockKeys.ROWS + (long) part * BlockKeys.PART_ROWS, builder);
        blocks.put(BlockKeys.part(projectId, block, part), builder.build().encode());
        entriesChanged(projectId);
        deleteAll(tail);
    }

    /** Turns a full block's parts and tail into one sealed block, then deletes them; its deleted rows stay marked. */
    private void seal(final long projectId, final long block) {
        final EventBlock.Builder builder = new EventBlock.Builder();
        final List<Bytes> parts = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = blocks.range(BlockKeys.partsStart(projectId, block), BlockKeys.partsEnd(projectId, block))) {
            while (it.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (BlockKeys.part(entry.key) != parts.size()) {
                    throw new IllegalStateException("block " + block + " of project " + projectId + " lacks its part " + parts.size());
                }
                parts.add(entry.key);
                final EventBlock part = EventBlock.decode(entry.value);
                for (int r = 0; r < part.rows(); r++) {
                    builder.add(part.row(r));
                }
            }
        }
        final List<Bytes> tail = tail(projectId, block * BlockKeys.ROWS + builder.size(), builder);
        if (builder.size() != BlockKeys.ROWS) {
            throw new IllegalStateException("block " + block + " of project " + projectId + " sealed with " + builder.size() + " rows");
        }
        final Bytes deletedKey = BlockKeys.deleted(projectId, block);
        if (BlockKeys.deletedRows(blocks.get(deletedKey)).cardinality() == BlockKeys.ROWS) {
            // Every row left before the block filled: nothing to keep.
            deleteAll(parts);
            blocks.delete(deletedKey);
            entriesChanged(projectId);
            deleteAll(tail);
            return;
        }
        final EventBlock sealed = builder.build();
        final EventBlock.Stored stored = sealed.encodeSections();
        blocks.put(BlockKeys.sealedBlock(projectId, block), stored.header());
        stored.sections().forEach((name, bytes) -> blocks.put(BlockKeys.sealedSection(projectId, block, name), bytes));
        blocks.put(BlockKeys.sealed(projectId, block), new BlockKeys.Sealed(ThreadLocalRandom.current().nextLong(), sealed.firstMicros(),
                sealed.lastMicros()).encode());
        // Only now that the sealed block holds them: a reader meets each row once (a sealed block's parts are passed by).
        deleteAll(parts);
        entriesChanged(projectId);
        deleteAll(tail);
    }

    /** Removes a sealed block's table of sections and its sections. */
    private void deleteSealed(final long projectId, final long block) {
        final List<Bytes> keys = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = blocks.range(BlockKeys.sealedBlock(projectId, block), BlockKeys.sealedSectionsEnd(projectId, block))) {
            it.forEachRemaining(entry -> keys.add(entry.key));
        }
        deleteAll(keys);
    }

    /** Adds the tail rows of the complete part that starts at row {@code first}, in row order, to {@code builder}; their keys. */
    private List<Bytes> tail(final long projectId, final long first, final EventBlock.Builder builder) {
        final List<Bytes> keys = new ArrayList<>(BlockKeys.PART_ROWS);
        try (KeyValueIterator<Bytes, byte[]> it = blocks.range(BlockKeys.tail(projectId, first), BlockKeys.tail(projectId, first + BlockKeys.PART_ROWS - 1))) {
            while (keys.size() < BlockKeys.PART_ROWS && it.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (BlockKeys.tailSequence(entry.key) != first + keys.size()) {
                    break;
                }
                keys.add(entry.key);
                final Bytes event = TailRow.timelineKey(entry.value);
                builder.add(TailRow.row(event, timelines.get(event)));
            }
        }
        if (keys.size() != BlockKeys.PART_ROWS) {
            throw new IllegalStateException("the tail of project " + projectId + " lacks its row " + (first + keys.size()));
        }
        return keys;
    }
}
