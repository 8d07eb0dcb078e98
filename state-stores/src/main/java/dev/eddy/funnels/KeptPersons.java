package dev.eddy.funnels;

import java.util.Arrays;
import java.util.BitSet;
import java.util.UUID;
import java.util.function.IntPredicate;

/**
 * What a {@link FunnelProgress} keeps of each person with funnel rows in a partition, in arrays indexed by a number
 * the person is given here (numbers of persons gone are given again): its uuid, its rows, its evaluation (a run
 * frozen to longs, an outcome, or a contribution) and what that takes. A partition's tile keeps hundreds of thousands of
 * persons; as objects (a record, a map entry and a uuid each, a run of several objects, a list of rows as longs) they
 * took about 630 bytes a person, and two large tiles did not fit the answer cache together.
 *
 * <p>A person is found by its uuid through an open-addressed table of numbers (an int a slot) whose uuids are in two
 * arrays of longs. Not thread-safe.
 */
final class KeptPersons {
    private static final int[] NO_ROWS = {};
    private static final int FREE = -1;

    /** Per slot, a person's number + 1; 0 for an empty slot. Never more than half full. */
    private int[] slots = new int[1 << 10];
    private long[] high = new long[256];
    private long[] low = new long[256];
    private int[][] rows = new int[256][];
    private int[] rowCount = new int[256];
    private long[][] runs = new long[256][];
    private FunnelOutcome[] outcomes = new FunnelOutcome[256];
    private FunnelProgress.Contribution[] contributions = new FunnelProgress.Contribution[256];
    private int[] weights = new int[256];
    /** The numbers of persons kept. */
    private final BitSet live = new BitSet();
    /** The kept persons whose evaluation is from their rows as they are. */
    private final BitSet evaluated = new BitSet();
    /** Numbers given and no longer in use, to give again (a chain through {@link #rowCount}), or {@link #FREE}. */
    private int freeHead = FREE;
    private int numbers;
    private int size;
    private long weight;

    /** The number of {@code person}, or -1 when it is not kept. */
    int numberOf(final UUID person) {
        final long h = person.getMostSignificantBits();
        final long l = person.getLeastSignificantBits();
        for (int slot = slot(h, l, slots.length); slots[slot] != 0; slot = (slot + 1) & (slots.length - 1)) {
            final int number = slots[slot] - 1;
            if (high[number] == h && low[number] == l) {
                return number;
            }
        }
        return -1;
    }

    /** The number of {@code person}, kept from now on (with no rows) if it was not. */
    int add(final UUID person) {
        final int found = numberOf(person);
        if (found >= 0) {
            return found;
        }
        final int number;
        if (freeHead != FREE) {
            number = freeHead;
            freeHead = rowCount[number];
        } else {
            number = numbers++;
            if (number == high.length) {
                grow(number + (number >> 1));
            }
        }
        high[number] = person.getMostSignificantBits();
        low[number] = person.getLeastSignificantBits();
        rows[number] = NO_ROWS;
        rowCount[number] = 0;
        live.set(number);
        if (++size * 2 > slots.length) {
            rehash(slots.length * 2);
        } else {
            place(number);
        }
        reweigh(number);
        return number;
    }

    /** Forgets a person (its rows, evaluation and weight); its number may be given to another. */
    void drop(final int number) {
        // Backward-shift deletion: every slot after it in its run moves back if its home allows.
        int hole = find(number);
        slots[hole] = 0;
        for (int slot = (hole + 1) & (slots.length - 1); slots[slot] != 0; slot = (slot + 1) & (slots.length - 1)) {
            final int other = slots[slot] - 1;
            final int home = slot(high[other], low[other], slots.length);
            // Moves back when its home is not in (hole, slot] cyclically.
            if (hole <= slot ? home <= hole || home > slot : home <= hole && home > slot) {
                slots[hole] = slots[slot];
                slots[slot] = 0;
                hole = slot;
            }
        }
        weight -= weights[number];
        weights[number] = 0;
        rows[number] = null;
        runs[number] = null;
        outcomes[number] = null;
        contributions[number] = null;
        live.clear(number);
        evaluated.clear(number);
        rowCount[number] = freeHead;
        freeHead = number;
        size--;
    }

    UUID uuid(final int number) {
        return new UUID(high[number], low[number]);
    }

    /** The numbers of the persons kept. */
    BitSet live() {
        return live;
    }

    int size() {
        return size;
    }

    // Rows: each the unit's ordinal shifted by the row bits, or'ed with the row (FunnelProgress decides).

    int rowCount(final int number) {
        return rowCount[number];
    }

    int row(final int number, final int i) {
        return rows[number][i];
    }

    void setRow(final int number, final int i, final int entry) {
        rows[number][i] = entry;
    }

    void append(final int number, final int[] more) {
        final int count = rowCount[number];
        if (count + more.length > rows[number].length) {
            // A quarter again to spare: a live dashboard adds a few rows a person at a read, and most persons have a
            // dozen or two (little left unused).
            final int needed = count + more.length;
            rows[number] = Arrays.copyOf(rows[number], needed + (needed >> 2) + 1);
        }
        System.arraycopy(more, 0, rows[number], count, more.length);
        rowCount[number] = count + more.length;
    }

    /** Forgets the rows {@code drop} says; whether there were any. */
    boolean removeRowsIf(final int number, final IntPredicate drop) {
        final int[] entries = rows[number];
        final int count = rowCount[number];
        int kept = 0;
        for (int i = 0; i < count; i++) {
            if (!drop.test(entries[i])) {
                entries[kept++] = entries[i];
            }
        }
        rowCount[number] = kept;
        return kept < count;
    }

    // Evaluation.

    long[] run(final int number) {
        return runs[number];
    }

    FunnelOutcome outcome(final int number) {
        return outcomes[number];
    }

    FunnelProgress.Contribution contribution(final int number) {
        return contributions[number];
    }

    boolean evaluated(final int number) {
        return evaluated.get(number);
    }

    /** Sets a person's evaluation from its rows as they are (each part null when none), and weighs it again. */
    void evaluate(final int number, final long[] run, final FunnelOutcome outcome, final FunnelProgress.Contribution contribution) {
        runs[number] = run;
        outcomes[number] = outcome;
        contributions[number] = contribution;
        evaluated.set(number);
        reweigh(number);
    }

    void forgetEvaluation(final int number) {
        runs[number] = null;
        outcomes[number] = null;
        contributions[number] = null;
        evaluated.clear(number);
    }

    /** Weighs a person again, after its rows or evaluation changed. */
    void reweigh(final int number) {
        // Its slot at most half full, uuid, row count, weight and four references; its rows, run, outcome, contribution.
        long bytes = 8 + 16 + 4 + 4 + 16 + 16 + 4L * rows[number].length
                + (runs[number] == null ? 0 : 16 + 8L * runs[number].length)
                + (outcomes[number] == null || outcomes[number].timings().length == 0 ? 0 : 40 + 8L * outcomes[number].timings().length)
                + (contributions[number] == null ? 0 : contributions[number].memoryBytes());
        weight += bytes - weights[number];
        weights[number] = (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    /** What the persons take, as last weighed. */
    long memoryBytes() {
        return weight + 64L + 4L * slots.length;
    }

    private int find(final int number) {
        for (int slot = slot(high[number], low[number], slots.length); ; slot = (slot + 1) & (slots.length - 1)) {
            if (slots[slot] == number + 1) {
                return slot;
            }
            if (slots[slot] == 0) {
                throw new IllegalStateException("person number " + number + " is not in the table");
            }
        }
    }

    private void place(final int number) {
        int slot = slot(high[number], low[number], slots.length);
        while (slots[slot] != 0) {
            slot = (slot + 1) & (slots.length - 1);
        }
        slots[slot] = number + 1;
    }

    private void rehash(final int length) {
        slots = new int[length];
        for (int number = live.nextSetBit(0); number >= 0; number = live.nextSetBit(number + 1)) {
            place(number);
        }
    }

    private void grow(final int length) {
        high = Arrays.copyOf(high, length);
        low = Arrays.copyOf(low, length);
        rows = Arrays.copyOf(rows, length);
        rowCount = Arrays.copyOf(rowCount, length);
        runs = Arrays.copyOf(runs, length);
        outcomes = Arrays.copyOf(outcomes, length);
        contributions = Arrays.copyOf(contributions, length);
        weights = Arrays.copyOf(weights, length);
    }

    /** The home slot of a uuid's two halves in an open-addressed table of {@code length} (a power of two) slots. */
    static int slot(final long high, final long low, final int length) {
        final long mixed = (high ^ Long.rotateLeft(low, 32)) * 0x9E3779B97F4A7C15L;
        return (int) (mixed >>> 40) & (length - 1);
    }
}
