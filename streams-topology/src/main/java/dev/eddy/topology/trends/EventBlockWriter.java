package dev.eddy.topology.trends;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.TailRow;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineKeys;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps a partition's events column by column in {@link StoreNames#EVENT_BLOCKS} (layout: {@link BlockKeys}), beside
 * the timelines and always equal to them: every event stored in a timeline here is one row, and an event that leaves
 * (moved by a merge, expired) is marked deleted in its block. Rows are numbered per project in the order they arrive;
 * each arrives as a tail row, and the block's last row seals the tail into one {@link EventBlock}. A block whose rows
 * are all deleted is removed. Which row holds an event is kept per timeline key in {@link StoreNames#EVENT_BLOCK_ROWS}.
 *
 * <p>All three stores are changelogged and written in the processor's exactly-once transaction, so after a restore or
 * an unclean stop they equal the timelines again.
 */
final class EventBlockWriter {

    private final KeyValueStore<Bytes, byte[]> blocks;
    private final KeyValueStore<Bytes, byte[]> rows;
    private final KeyValueStore<String, Long> meta;

    EventBlockWriter(final KeyValueStore<Bytes, byte[]> blocks, final KeyValueStore<Bytes, byte[]> rows,
                     final KeyValueStore<String, Long> meta) {
        this.blocks = blocks;
        this.rows = rows;
        this.meta = meta;
    }

    /** Whether the event stored under {@code timelineKey} has its row. */
    boolean has(final Bytes timelineKey) {
        return rows.get(timelineKey) != null;
    }

    boolean complete() {
        return meta.get(BlockKeys.COMPLETE) != null;
    }

    void markComplete() {
        meta.put(BlockKeys.COMPLETE, 1L);
    }

    /** Adds the event stored under {@code timelineKey} (once: an event that has its row is left alone). */
    void append(final Bytes timelineKey, final byte[] timelineEvent) {
        if (has(timelineKey)) {
            return;
        }
        final long projectId = TimelineKeys.project(timelineKey);
        final UUID person = TimelineKeys.person(timelineKey);
        final String next = BlockKeys.NEXT_ROW + projectId;
        final Long stored = meta.get(next);
        final long sequence = stored == null ? 0 : stored;
        meta.put(next, sequence + 1);
        rows.put(timelineKey, ByteBuffer.allocate(Long.BYTES).putLong(sequence).array());
        final long block = BlockKeys.blockOf(sequence);
        final int row = BlockKeys.rowOf(sequence);
        blocks.put(BlockKeys.tail(projectId, block, row), TailRow.encode(person, timelineEvent));
        if (row == BlockKeys.ROWS - 1) {
            seal(projectId, block);
        }
    }

    /** Marks the row of the event that was stored under {@code timelineKey} deleted; nothing if it has none. */
    void remove(final Bytes timelineKey) {
        final byte[] at = rows.delete(timelineKey);
        if (at == null) {
            return;
        }
        final long projectId = TimelineKeys.project(timelineKey);
        final long sequence = ByteBuffer.wrap(at).getLong();
        final long block = BlockKeys.blockOf(sequence);
        final Bytes key = BlockKeys.deleted(projectId, block);
        final BitSet deleted = BlockKeys.deletedRows(blocks.get(key));
        deleted.set(BlockKeys.rowOf(sequence));
        if (deleted.cardinality() == BlockKeys.ROWS) {
            // Every row was added, so the block is sealed: it goes whole.
            blocks.delete(BlockKeys.block(projectId, block));
            blocks.delete(key);
        } else {
            blocks.put(key, BlockKeys.deletedValue(deleted));
        }
    }

    /** Turns a full tail into one sealed block; its deleted rows stay marked. */
    private void seal(final long projectId, final long block) {
        final List<Bytes> tail = new ArrayList<>(BlockKeys.ROWS);
        final EventBlock.Builder builder = new EventBlock.Builder();
        try (KeyValueIterator<Bytes, byte[]> it = blocks.range(BlockKeys.tailStart(projectId, block), BlockKeys.tailEnd(projectId, block))) {
            while (it.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (BlockKeys.row(entry.key) != tail.size()) {
                    throw new IllegalStateException("block " + block + " of project " + projectId + " lacks its row " + tail.size());
                }
                tail.add(entry.key);
                builder.add(TailRow.decode(entry.value).row());
            }
        }
        if (tail.size() != BlockKeys.ROWS) {
            throw new IllegalStateException("block " + block + " of project " + projectId + " sealed with " + tail.size() + " rows");
        }
        tail.forEach(blocks::delete);
        final Bytes deletedKey = BlockKeys.deleted(projectId, block);
        if (BlockKeys.deletedRows(blocks.get(deletedKey)).cardinality() == BlockKeys.ROWS) {
            // Every row left before the block filled: nothing to keep.
            blocks.delete(deletedKey);
            return;
        }
        blocks.put(BlockKeys.block(projectId, block), builder.build().encode());
    }
}
