package dev.eddy.columns;

import java.util.BitSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Reads a project's events from the {@code event-blocks} store's key range ({@link BlockKeys}): each sealed block asked
 * for (found by its entry, read by key or kept decoded by the reader) and
 * each part of a block being filled with the set of its rows no longer stored, and the project's tail rows as one
 * block built from them, last.
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
     * One project's events in a partition's {@code event-blocks} store.
     *
     * @param blocks    the store, read by key and by range
     * @param timelines the partition's timelines' reads by key, where tail rows find their events
     */
    public record Source(long projectId, ReadOnlyKeyValueStore<Bytes, byte[]> blocks, Function<Bytes, byte[]> timelines, TailRows tailRows) {
        /** Tail rows parsed from their events at every read. */
        public Source(final long projectId, final ReadOnlyKeyValueStore<Bytes, byte[]> blocks, final Function<Bytes, byte[]> timelines) {
            this(projectId, blocks, timelines, TailRows.PARSED);
        }

        /** Opens the project's range of the store ({@link BlockKeys#projectStart}), in key order. */
        public KeyValueIterator<Bytes, byte[]> entries() {
            return blocks.range(BlockKeys.projectStart(projectId), BlockKeys.projectEnd(projectId));
        }
    }

    /** Where a read finds a tail row as a block takes it: parsed from its event at every read, or kept between reads. */
    @FunctionalInterface
    public interface TailRows {
        TailRows PARSED = (sequence, timelineKey, parse) -> parse.get();

        /**
         * The row numbered {@code sequence}, whose event its timeline keeps under {@code timelineKey} (which never
         * changes for a row: the same key is the same event); {@code parse} reads and parses it, null if it is gone.
         */
        EventBlock.Row row(long sequence, Bytes timelineKey, Supplier<EventBlock.Row> parse);
    }

    /**
     * Visits the project's blocks in block order: sealed blocks and parts as its entries list them, then its tail.
     * It reads the newest row first, then opens the tail's rows up to it, then the entries (each range a snapshot as
     * it opens), and takes the tail from after the newest row a part or sealed block it met holds. The writer deletes
     * a part's tail rows only after it stores the part, so a row is met once, in its part or in the tail, whenever its
     * part is made; rows stored after the read began are left for the next read.
     *
     * @param sealed the sealed blocks of the entries; a block it answers null for is not visited
     * @param keep   which tail rows are worth building into a block (queries skip rows outside their range or of events
     *               they do not count)
     */
    public static void read(final Source source, final Sealed sealed, final Predicate<EventBlock.Row> keep, final Visitor visitor) {
        final long projectId = source.projectId();
        final long newest = BlockKeys.number(source.blocks().get(BlockKeys.newest(projectId)), -1);
        long current = Long.MIN_VALUE;
        BitSet deleted = new BitSet();
        // The newest row a sealed block or part met holds: the tail starts after it.
        long covered = -1;
        // No tail when there is no row, or when the newest row completed its part.
        try (KeyValueIterator<Bytes, byte[]> tail = BlockKeys.tailFrom(newest) > newest ? null
                : source.blocks().range(BlockKeys.tail(projectId, BlockKeys.tailFrom(newest)), BlockKeys.tail(projectId, newest));
             KeyValueIterator<Bytes, byte[]> entries = source.entries()) {
            BlockKeys.Sealed block = null;
            while (entries.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = entries.next();
                final long number = BlockKeys.block(entry.key);
                if (number != current) {
                    flush(projectId, current, block, deleted, sealed, visitor);
                    current = number;
                    block = null;
                    deleted = new BitSet();
                }
                switch (BlockKeys.kind(entry.key)) {
                    case SEALED -> {
                        block = BlockKeys.Sealed.decode(entry.value);
                        covered = Math.max(covered, (number + 1) * BlockKeys.ROWS - 1);
                    }
                    case DELETED -> deleted = BlockKeys.deletedRows(entry.value);
                    // A sealed block's parts are left only while the writer removes them: the block holds their rows.
                    case PART -> {
                        if (block != null) {
                            continue;
                        }
                        final int part = BlockKeys.part(entry.key);
                        final int first = part * BlockKeys.PART_ROWS;
                        covered = Math.max(covered, number * BlockKeys.ROWS + first + BlockKeys.PART_ROWS - 1);
                        visitor.part(projectId, number, part, entry.value, deleted.get(first, first + BlockKeys.PART_ROWS));
                    }
                }
            }
            flush(projectId, current, block, deleted, sealed, visitor);
            if (tail != null && newest > covered) {
                // The tail's rows are of the newest block read, or of the next (which has no key yet).
                final EventBlock.Builder rows = tail(tail, source, covered, newest, current, deleted, keep);
                if (rows.size() > 0) {
                    visitor.block(rows.build(), new BitSet());
                }
            }
        }
    }

    /**
     * The tail's rows after {@code covered} up to {@code newest}, in sequence order, but the deleted ones
     * ({@code deleted} are the deleted rows of block {@code block}) and those whose event {@code keep} does not take.
     * Stops at {@code newest}: past it lie rows stored since, and the keys after them.
     */
    private static EventBlock.Builder tail(final KeyValueIterator<Bytes, byte[]> rows, final Source source, final long covered,
                                           final long newest, final long block, final BitSet deleted, final Predicate<EventBlock.Row> keep) {
        final EventBlock.Builder tail = new EventBlock.Builder();
        long sequence = -1;
        while (sequence < newest && rows.hasNext()) {
            final KeyValue<Bytes, byte[]> entry = rows.next();
            sequence = BlockKeys.tailSequence(entry.key);
            if (sequence <= covered || BlockKeys.blockOf(sequence) == block && deleted.get(BlockKeys.rowOf(sequence))) {
                continue;
            }
            final Bytes timelineKey = TailRow.timelineKey(entry.value);
            final EventBlock.Row row = source.tailRows().row(sequence, timelineKey, () -> {
                final byte[] event = source.timelines().apply(timelineKey);
                return event == null ? null : TailRow.row(timelineKey, event);
            });
            if (row != null && keep.test(row)) {
                tail.add(row);
            }
        }
        return tail;
    }

    private static void flush(final long project, final long number, final BlockKeys.Sealed entry, final BitSet deleted, final Sealed sealed,
                              final Visitor visitor) {
        if (entry != null) {
            visitor.sealed(project, number, entry, deleted, sealed);
        }
    }
}
