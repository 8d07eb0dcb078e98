package dev.eddy.columns;

import java.util.BitSet;
import java.util.List;

/**
 * A project's range of one partition's {@code event-blocks} store ({@link BlockKeys#projectStart}: its sealed blocks'
 * entries, deleted rows and parts) as a walk last found it, under the count of the range's changes it found
 * ({@link BlockKeys#entriesChanged}): a read that finds the same count visits the same entries without walking the
 * store. RocksDB steps over every deleted part and every older version of a block's deleted rows in that range until
 * compaction drops them, and opens the range through every file of the store's first level; at 1M events that walk
 * was a fifth of a refreshed dashboard's CPU, and it grows with the store.
 *
 * <p>Callers keep one per store generation (a rebuild starts another store, whose count starts again). Thread-safe.
 */
public final class KeptEntries {
    /** An entry of the range as a read visits it. */
    sealed interface Visit permits SealedVisit, PartVisit {
    }

    /** A sealed block's entry, with its deleted rows. */
    record SealedVisit(long block, BlockKeys.Sealed entry, BitSet deleted) implements Visit {
    }

    /** A part of the block being filled, with its deleted rows. */
    record PartVisit(long block, int part, byte[] encoded, BitSet deleted) implements Visit {
    }

    /**
     * What a walk found: the entries to visit in order, the newest row a sealed block or part holds ({@code covered}),
     * and the last block met with its deleted rows (where the tail's rows are).
     */
    record Walk(List<Visit> visits, long covered, long lastBlock, BitSet lastDeleted) {
        long memoryBytes() {
            long bytes = 96;
            for (final Visit visit : visits) {
                bytes += 64 + (visit instanceof PartVisit part ? part.encoded().length : 0);
            }
            return bytes;
        }
    }

    private final boolean keeps;
    private long changes = -1;
    private Walk walk;

    private KeptEntries(final boolean keeps) {
        this.keeps = keeps;
    }

    /** Entries kept between reads. */
    public static KeptEntries kept() {
        return new KeptEntries(true);
    }

    /** Entries walked at every read. */
    public static KeptEntries none() {
        return new KeptEntries(false);
    }

    /** The walk kept for this count of changes, if it is the one kept. */
    synchronized Walk walk(final long changesNow) {
        return keeps && walk != null && changes == changesNow ? walk : null;
    }

    /** Keeps a walk made after the count of changes was found at {@code changesNow}. */
    synchronized void keep(final long changesNow, final Walk made) {
        if (keeps && changesNow >= changes) {
            changes = changesNow;
            walk = made;
        }
    }

    /** What this holds on the heap, about. */
    public synchronized long memoryBytes() {
        return 64 + (walk == null ? 0 : walk.memoryBytes());
    }
}
