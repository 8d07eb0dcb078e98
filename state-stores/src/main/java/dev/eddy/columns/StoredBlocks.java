package dev.eddy.columns;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.function.Function;
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
     * @param tail      the project's tail rows in this partition as kept between reads ({@link KeptTail#none} keeps none)
     * @param kept      the project's range as walked by an earlier read ({@link KeptEntries#none} keeps none)
     */
    public record Source(long projectId, ReadOnlyKeyValueStore<Bytes, byte[]> blocks, Function<Bytes, byte[]> timelines, KeptTail tail,
                         KeptEntries kept) {
        /** Every read walks the range, and reads and parses its tail rows. */
        public Source(final long projectId, final ReadOnlyKeyValueStore<Bytes, byte[]> blocks, final Function<Bytes, byte[]> timelines) {
            this(projectId, blocks, timelines, KeptTail.none(), KeptEntries.none());
        }

        /** Opens the project's range of the store ({@link BlockKeys#projectStart}), in key order. */
        public KeyValueIterator<Bytes, byte[]> entries() {
            return blocks.range(BlockKeys.projectStart(projectId), BlockKeys.projectEnd(projectId));
        }
    }

    /**
     * Visits the project's blocks in block order: sealed blocks and parts as its entries list them, then its tail (every
     * tail row, whatever the query: visitors skip rows they do not count, as in any block, and a tail built once serves
     * every query until it changes). It reads the newest row first, then opens the tail's rows up to it (those not kept
     * from earlier reads: {@link KeptTail}), then the count of the range's changes, then the entries (each range a
     * snapshot as it opens; a walk kept under the same count stands for the entries: {@link KeptEntries}), and takes
     * the tail from after the newest row a part or sealed block it met holds. The writer deletes a part's tail rows only
     * after it stores the part and counts the change, so a row is met once, in its part or in the tail, whenever its
     * part is made; rows stored after the read began are left for the next read.
     *
     * @param sealed the sealed blocks of the entries; a block it answers null for is not visited
     * @throws KeptTail.Gone when tail rows this read needed were let go by a faster one meanwhile (read again)
     */
    public static void read(final Source source, final Sealed sealed, final Visitor visitor) {
        final long projectId = source.projectId();
        final long newest = BlockKeys.number(source.blocks().get(BlockKeys.newest(projectId)), -1);
        final long from = newest < 0 ? Long.MAX_VALUE : source.tail().readFrom(newest);
        // No tail when there is no row, or when the newest row completed its part.
        try (KeyValueIterator<Bytes, byte[]> tail = BlockKeys.tailFrom(newest) > newest || from > newest ? null
                : source.blocks().range(BlockKeys.tail(projectId, from), BlockKeys.tail(projectId, newest))) {
            final byte[] counted = source.blocks().get(BlockKeys.entriesChanged(projectId));
            final long changes = BlockKeys.number(counted, -1);
            KeptEntries.Walk walk = counted == null ? null : source.kept().walk(changes);
            if (walk == null) {
                walk = walk(source);
                if (counted != null) {
                    source.kept().keep(changes, walk);
                }
            }
            for (final KeptEntries.Visit visit : walk.visits()) {
                if (visit instanceof KeptEntries.SealedVisit v) {
                    visitor.sealed(projectId, v.block(), v.entry(), v.deleted(), sealed);
                } else if (visit instanceof KeptEntries.PartVisit v) {
                    visitor.part(projectId, v.block(), v.part(), v.encoded(), v.deleted());
                }
            }
            final long first = Math.max(walk.covered() + 1, BlockKeys.tailFrom(newest));
            if (newest >= 0 && first <= newest) {
                final EventBlock rows = tail(tail, source, first, newest, from, walk.lastBlock(), walk.lastDeleted());
                if (rows != null) {
                    visitor.block(rows, new BitSet());
                }
            }
        }
    }

    /** The project's range as the store has it now: its sealed blocks and parts to visit, in key order. */
    private static KeptEntries.Walk walk(final Source source) {
        final List<KeptEntries.Visit> visits = new ArrayList<>();
        long current = Long.MIN_VALUE;
        BitSet deleted = new BitSet();
        // The newest row a sealed block or part met holds: the tail starts after it.
        long covered = -1;
        try (KeyValueIterator<Bytes, byte[]> entries = source.entries()) {
            BlockKeys.Sealed block = null;
            while (entries.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = entries.next();
                final long number = BlockKeys.block(entry.key);
                if (number != current) {
                    if (block != null) {
                        visits.add(new KeptEntries.SealedVisit(current, block, deleted));
                    }
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
                        visits.add(new KeptEntries.PartVisit(number, part, entry.value, deleted.get(first, first + BlockKeys.PART_ROWS)));
                    }
                }
            }
            if (block != null) {
                visits.add(new KeptEntries.SealedVisit(current, block, deleted));
            }
        }
        return new KeptEntries.Walk(List.copyOf(visits), covered, current, deleted);
    }

    /**
     * The tail's rows from {@code first} up to {@code newest} but the deleted ones (the tail's rows are of block
     * {@code block} read last, whose deleted rows are {@code deleted}, or of the next, which has no key yet): those
     * kept before {@code from}, and those {@code rows} holds from it, read and parsed now. Stops at {@code newest}: past
     * it lie rows stored since, and the keys after them.
     */
    private static EventBlock tail(final KeyValueIterator<Bytes, byte[]> rows, final Source source, final long first, final long newest,
                                   final long from, final long block, final BitSet deleted) {
        final int most = (int) Math.max(0, Math.min(BlockKeys.PART_ROWS, newest - from + 1));
        final long[] sequences = new long[most];
        final EventBlock.Row[] read = new EventBlock.Row[most];
        int count = 0;
        long sequence = -1;
        while (rows != null && sequence < newest && count < most && rows.hasNext()) {
            final KeyValue<Bytes, byte[]> entry = rows.next();
            sequence = BlockKeys.tailSequence(entry.key);
            if (sequence > newest) {
                break;
            }
            final Bytes timelineKey = TailRow.timelineKey(entry.value);
            final byte[] event = source.timelines().apply(timelineKey);
            sequences[count] = sequence;
            // An event no longer stored: its row is marked deleted (or about to be).
            read[count++] = event == null ? null : TailRow.row(timelineKey, event);
        }
        return source.tail().block(first, newest, from, sequences, read, count,
                s -> BlockKeys.blockOf(s) == block && deleted.get(BlockKeys.rowOf(s)));
    }
}
