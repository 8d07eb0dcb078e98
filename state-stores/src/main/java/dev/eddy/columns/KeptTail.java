package dev.eddy.columns;

import java.util.BitSet;

/**
 * The tail rows of one project in one partition's {@code event-blocks} store ({@link BlockKeys#tail}), kept parsed
 * between reads, and the last block built from them: a refreshed dashboard reads from the store only the rows stored
 * since its last read, and its tiles share one tail block per partition while nothing in the tail changed.
 *
 * <p>It holds the rows of one run of sequences, {@code [low, upTo]}, each with its row as parsed (a row never changes
 * for its sequence within a store generation: the writer numbers rows once, and only a rebuild, which starts a new
 * generation, numbers them again; callers keep one per generation). A read asks {@link #readFrom} where to start
 * reading the store, reads those rows itself (the store's iterator opened before its walk of the entries, as
 * {@link StoredBlocks#read} requires), and hands them to {@link #block}, which answers the read's tail from the rows
 * kept before it began and the rows it read itself, never from rows another read added meanwhile, so each read sees
 * the tail as of its own snapshot. Rows more than a part behind the newest are let go; a read slower than a part's
 * worth of writes that needed them is told to read again ({@link Gone}).
 *
 * <p>Thread-safe: tiles of a dashboard read the same partition side by side.
 */
public final class KeptTail {
    /** Rows are kept back to this many before the newest row's part. */
    private static final int KEPT_BEHIND = BlockKeys.PART_ROWS;

    /** Rows the tail needed were let go by a read that moved on meanwhile: read again. */
    public static final class Gone extends RuntimeException {
        Gone(final String message) {
            super(message);
        }
    }

    /** Whether the kept rows are to be used at all: a throwaway tail reads every row from the store each time. */
    private final boolean keeps;
    private long low;
    private long upTo = -1;
    /** Row {@code s} is {@code rows[s - low]}, for {@code s} in {@code [low, upTo]}. */
    private EventBlock.Row[] rows = new EventBlock.Row[0];
    private long builtFrom = -1;
    private long builtTo = -1;
    private BitSet builtDeleted;
    private EventBlock built;
    /**
     * What {@link #built} was built with: a later read of the same first row, with no row up to {@link #builtTo}
     * deleted since, adds only its newer rows to it.
     */
    private EventBlock.Builder builder;

    private KeptTail(final boolean keeps) {
        this.keeps = keeps;
    }

    /** A tail kept between reads. */
    public static KeptTail kept() {
        return new KeptTail(true);
    }

    /** A tail for one read only: every row read and parsed from the store. */
    public static KeptTail none() {
        return new KeptTail(false);
    }

    /**
     * Where a read whose newest row is {@code newest} starts reading the tail's rows from the store: after the rows
     * kept, or at the newest row's part.
     */
    public synchronized long readFrom(final long newest) {
        final long start = BlockKeys.tailFrom(newest);
        // A read that began before another kept rows past its newest reads its own rows (the kept ones stay).
        return !keeps || newest < upTo || upTo < low || start > upTo + 1 || start < low ? start : upTo + 1;
    }

    /**
     * The tail of a read: its rows from {@code first} to {@code newest} (those after the sealed blocks and parts it met)
     * but the deleted ones, as one block; null when no row is left.
     *
     * @param from    where the read started reading the store ({@link #readFrom})
     * @param read    the rows it read from {@code from}, in sequence order, each with its sequence
     *                ({@code sequences[i]} is {@code read[i]}'s); rows of events no longer stored are deleted rows
     * @param deleted whether the row of a sequence is deleted
     * @throws Gone when rows before {@code from} the read needs were let go since it asked
     */
    public synchronized EventBlock block(final long first, final long newest, final long from, final long[] sequences,
                                         final EventBlock.Row[] read, final int count, final java.util.function.LongPredicate deleted) {
        if (first > newest) {
            return null;
        }
        if (first < from && (first < low || from - 1 > upTo)) {
            throw new Gone("the tail's rows " + first + " to " + (from - 1) + " were let go while a query read them");
        }
        if (keeps) {
            append(from, sequences, read, count);
        }
        final boolean allKept = keeps && first >= low && newest <= upTo && (count == 0 || sequences[count - 1] <= upTo);
        final BitSet deletedRows = deletedIn(first, newest, deleted);
        if (allKept && built != null && builtFrom == first && builtTo == newest && deletedRows.equals(builtDeleted)) {
            return built;
        }
        // Rows arrived after the last block built (and none of its rows was deleted since): it goes on from there.
        final boolean goesOn = allKept && builder != null && builtFrom == first && builtTo < newest
                && deletedRows.get(0, (int) (builtTo - first + 1)).equals(builtDeleted);
        final EventBlock.Builder rowsOf = goesOn ? builder : new EventBlock.Builder();
        int next = 0;
        for (long s = goesOn ? builtTo + 1 : first; s <= newest; s++) {
            final EventBlock.Row row;
            if (s < from) {
                row = rows[(int) (s - low)];
            } else {
                while (next < count && sequences[next] < s) {
                    next++;
                }
                if (next == count) {
                    break;
                }
                if (sequences[next] != s) {
                    // Not in the tail as read: its part was made after the read's walk began (left for the next read).
                    continue;
                }
                row = read[next];
            }
            if (row != null && !deleted.test(s)) {
                rowsOf.add(row);
            }
        }
        if (rowsOf.size() == 0) {
            return null;
        }
        final EventBlock block = rowsOf.build();
        if (allKept) {
            builtFrom = first;
            builtTo = newest;
            builtDeleted = deletedRows;
            built = block;
            builder = rowsOf;
        }
        return block;
    }

    /** Which sequences between the two are deleted, as offsets from {@code first}. */
    private static BitSet deletedIn(final long first, final long newest, final java.util.function.LongPredicate deleted) {
        final BitSet found = new BitSet();
        for (long s = first; s <= newest; s++) {
            if (deleted.test(s)) {
                found.set((int) (s - first));
            }
        }
        return found;
    }

    /** Keeps the rows read that extend the kept run without a gap; lets go of rows more than a part behind. */
    private void append(final long from, final long[] sequences, final EventBlock.Row[] read, final int count) {
        int i = 0;
        while (i < count && sequences[i] <= upTo && upTo >= low) {
            i++;
        }
        if (i == count) {
            return;
        }
        if (upTo < low || sequences[i] != upTo + 1) {
            // Not contiguous with the kept run (a part made since, or nothing kept): a new run from here, if the read's
            // rows are contiguous from their first.
            if (i != 0 || sequences[0] != from) {
                return;
            }
            clear();
            low = from;
            upTo = from - 1;
        }
        long expected = upTo + 1;
        int end = i;
        while (end < count && sequences[end] == expected) {
            end++;
            expected++;
        }
        final long keepFrom = Math.max(low, BlockKeys.tailFrom(expected - 1) - KEPT_BEHIND);
        final int kept = (int) (upTo - keepFrom + 1);
        final EventBlock.Row[] next = new EventBlock.Row[Math.max(0, kept) + end - i];
        if (kept > 0) {
            System.arraycopy(rows, (int) (keepFrom - low), next, 0, kept);
        }
        System.arraycopy(read, i, next, Math.max(0, kept), end - i);
        rows = next;
        low = keepFrom;
        upTo = expected - 1;
    }

    private void clear() {
        low = 0;
        upTo = -1;
        rows = new EventBlock.Row[0];
        built = null;
        builder = null;
        builtDeleted = null;
        builtFrom = -1;
        builtTo = -1;
    }

    /** What this holds on the heap, about: its rows' properties and the block built from them. */
    public synchronized long memoryBytes() {
        long bytes = 128 + 8L * rows.length;
        for (final EventBlock.Row row : rows) {
            bytes += row == null ? 0 : 256 + 128L * row.properties().size();
        }
        return bytes + (built == null ? 0 : built.memoryBytes());
    }

    /** The rows kept, for tests: from the first to the last sequence kept. */
    synchronized long[] keptRange() {
        return new long[] {low, upTo};
    }
}
