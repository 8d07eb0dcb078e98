package dev.eddy.columns;

import java.util.BitSet;
import java.util.Iterator;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * Reads a project's events from the {@code event-blocks} store's key range ({@link BlockKeys}): each sealed block asked
 * for (found by its entry, read by key or kept decoded by the reader) and
 * each part of a block being filled with the set of its rows no longer stored, and the tail rows of a block being
 * filled as one block built from them.
 */
public final class StoredBlocks {
    private StoredBlocks() {
    }

    /** Receives the blocks of a read, in block order. */
    @FunctionalInterface
    public interface Visitor {
        /**
         * @param deleted the rows of {@code block} that are not stored any more (skip them); empty for a tail
         */
        void block(EventBlock block, BitSet deleted);

        /**
         * A sealed block: {@link #block} with what {@code source} answers for it, unless a visitor knows its
         * contribution already (a sealed block never changes: the entry's id and the deleted rows name its content).
         *
         * @param deleted the block's rows that are not stored any more; not changed after this call
         */
        default void sealed(final long projectId, final long block, final BlockKeys.Sealed entry, final BitSet deleted, final Sealed source) {
            final EventBlock found = source.block(projectId, block, entry);
            if (found != null) {
                block(found, deleted);
            }
        }

        /**
         * A part of a block being filled ({@link BlockKeys#PART_ROWS} rows, written once): {@link #block} with it
         * decoded, unless a visitor knows its contribution already (its bytes and deleted rows name its content).
         *
         * @param encoded the part as stored ({@link EventBlock#encode}); not changed afterwards
         * @param deleted the part's rows that are not stored any more; not changed afterwards
         */
        default void part(final long projectId, final long block, final int part, final byte[] encoded, final BitSet deleted) {
            block(EventBlock.decode(encoded), deleted);
        }
    }

    /** Finds the sealed blocks a read visits. */
    @FunctionalInterface
    public interface Sealed {
        /**
         * @return the block {@code entry} stands for, or null to pass it by (outside a query's range, or removed
         *         since the read began)
         */
        EventBlock block(long projectId, long block, BlockKeys.Sealed entry);
    }

    /** Every sealed block, as {@code store} (the same store's reads by key) has it. */
    public static Sealed sealedIn(final Function<Bytes, byte[]> store) {
        return (projectId, block, entry) -> load(store, projectId, block);
    }

    /**
     * A sealed block from its store: its table of sections now, each section when a reader first asks for it; null if
     * the block is not stored (any more).
     */
    public static EventBlock load(final Function<Bytes, byte[]> store, final long projectId, final long block) {
        final byte[] header = store.apply(BlockKeys.sealedBlock(projectId, block));
        return header == null ? null : EventBlock.ofSections(header, name -> store.apply(BlockKeys.sealedSection(projectId, block, name)));
    }

    /**
     * @param entries   a project's range of the store, in key order
     * @param timelines the partition's timelines, where tail rows find their events
     * @param sealed    the sealed blocks of the entries; a block it answers null for is not visited
     * @param keep      which tail rows are worth building into a block, asked with the row's timeline event bytes
     *                  (queries skip rows outside their range or events unparsed)
     */
    public static void read(final Iterator<KeyValue<Bytes, byte[]>> entries, final Function<Bytes, byte[]> timelines,
                            final Sealed sealed, final Predicate<byte[]> keep, final Visitor visitor) {
        long current = Long.MIN_VALUE;
        long project = 0;
        BlockKeys.Sealed block = null;
        BitSet deleted = new BitSet();
        EventBlock.Builder tail = null;
        while (entries.hasNext()) {
            final KeyValue<Bytes, byte[]> entry = entries.next();
            final long number = BlockKeys.block(entry.key);
            if (number != current) {
                flush(project, current, block, deleted, sealed, tail, visitor);
                current = number;
                block = null;
                deleted = new BitSet();
                tail = null;
            }
            switch (BlockKeys.kind(entry.key)) {
                case SEALED -> {
                    project = BlockKeys.project(entry.key);
                    block = BlockKeys.Sealed.decode(entry.value);
                }
                case DELETED -> deleted = BlockKeys.deletedRows(entry.value);
                case PART -> {
                    final int part = BlockKeys.part(entry.key);
                    final int first = part * BlockKeys.PART_ROWS;
                    visitor.part(BlockKeys.project(entry.key), number, part, entry.value, deleted.get(first, first + BlockKeys.PART_ROWS));
                }
                case TAIL -> {
                    if (tail == null) {
                        tail = new EventBlock.Builder();
                    }
                    if (!deleted.get(BlockKeys.row(entry.key))) {
                        final Bytes timelineKey = TailRow.timelineKey(entry.value);
                        final byte[] event = timelines.apply(timelineKey);
                        if (event != null && keep.test(event)) {
                            tail.add(TailRow.row(timelineKey, event));
                        }
                    }
                }
            }
        }
        flush(project, current, block, deleted, sealed, tail, visitor);
    }

    private static void flush(final long project, final long number, final BlockKeys.Sealed entry, final BitSet deleted, final Sealed sealed,
                              final EventBlock.Builder tail, final Visitor visitor) {
        if (entry != null) {
            visitor.sealed(project, number, entry, deleted, sealed);
        }
        if (tail != null && tail.size() > 0) {
            visitor.block(tail.build(), new BitSet());
        }
    }
}
