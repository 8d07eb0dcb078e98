package dev.eddy.funnels;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * A funnel's figures over many actors without one entry per actor: how many reached each step, and the conversion
 * times above zero into each step after the first (in microseconds, unordered, one per actor converting). What
 * {@link FunnelSteps} reports follows from it: counts, averages, and medians (selected, not sorted). Tallies merge by
 * adding counts and joining times, so partitions' and instances' partials of a funnel merge without the actors'
 * outcomes; a {@link Running} tally is what a kept funnel ({@link FunnelProgress}) changes as persons' outcomes change.
 */
public final class FunnelTally {
    private final long[] reached;
    /** Per step {@code s >= 1}: the first {@code sizes[s]} of {@code times[s]}. */
    private final long[][] times;
    private final int[] sizes;

    public FunnelTally(final int steps) {
        reached = new long[steps];
        times = new long[steps][];
        sizes = new int[steps];
        for (int s = 1; s < steps; s++) {
            times[s] = new long[16];
        }
    }

    /** The tally of {@code outcomes} (those that do not count are left out). */
    public static FunnelTally of(final int steps, final Collection<FunnelOutcome> outcomes) {
        final FunnelTally tally = new FunnelTally(steps);
        outcomes.forEach(tally::add);
        return tally;
    }

    /** A conversion time as a tally keeps it: a timing (seconds from a difference of microseconds) in microseconds. */
    static long micros(final double seconds) {
        return Math.round(seconds * 1_000_000.0);
    }

    public int steps() {
        return reached.length;
    }

    /** Adds one actor's outcome (nothing if it does not count). */
    public void add(final FunnelOutcome outcome) {
        if (!outcome.counts()) {
            return;
        }
        final int top = Math.min(outcome.stepReached(), reached.length - 1);
        for (int s = 0; s <= top; s++) {
            reached[s]++;
            if (s > 0) {
                final long t = micros(outcome.timings()[s - 1]);
                if (t > 0) {
                    time(s, t, 1);
                }
            }
        }
    }

    private void time(final int step, final long micros, final int count) {
        if (sizes[step] + count > times[step].length) {
            times[step] = Arrays.copyOf(times[step], Math.max(sizes[step] + count, times[step].length * 2));
        }
        Arrays.fill(times[step], sizes[step], sizes[step] + count, micros);
        sizes[step] += count;
    }

    /** Adds {@code other}'s actors to this; returns this. */
    public FunnelTally merge(final FunnelTally other) {
        if (other.reached.length != reached.length) {
            throw new IllegalArgumentException("tallies of funnels of " + reached.length + " and " + other.reached.length + " steps");
        }
        for (int s = 0; s < reached.length; s++) {
            reached[s] += other.reached[s];
            if (s > 0 && other.sizes[s] > 0) {
                if (sizes[s] + other.sizes[s] > times[s].length) {
                    times[s] = Arrays.copyOf(times[s], sizes[s] + other.sizes[s]);
                }
                System.arraycopy(other.times[s], 0, times[s], sizes[s], other.sizes[s]);
                sizes[s] += other.sizes[s];
            }
        }
        return this;
    }

    /** About what it takes on the heap. */
    public long memoryBytes() {
        long bytes = 64 + 12L * reached.length;
        for (final long[] t : times) {
            bytes += t == null ? 0 : 16 + 8L * t.length;
        }
        return bytes;
    }

    /** Whether no actor counts (PostHog answers {@code []}). */
    public boolean isEmpty() {
        return reached.length == 0 || reached[0] == 0;
    }

    /**
     * The figures per step ({@link FunnelSteps.Step}); empty when no actor counts. The average of a step's times is
     * their exact sum over their number; the median the middle time (the mean of the middle two).
     */
    public List<FunnelSteps.Step> report() {
        if (isEmpty()) {
            return List.of();
        }
        final List<FunnelSteps.Step> result = new ArrayList<>(reached.length);
        for (int s = 0; s < reached.length; s++) {
            if (s == 0 || sizes[s] == 0) {
                result.add(new FunnelSteps.Step(s, reached[s], Optional.empty(), Optional.empty()));
                continue;
            }
            final long[] t = Arrays.copyOf(times[s], sizes[s]);
            long sum = 0;
            for (final long v : t) {
                sum += v;
            }
            final int mid = t.length / 2;
            final long upper = select(t, mid);
            double median = seconds(upper);
            if (t.length % 2 == 0) {
                // Everything left of the middle is at most it: the lower middle is the largest of those.
                long lower = Long.MIN_VALUE;
                for (int i = 0; i < mid; i++) {
                    lower = Math.max(lower, t[i]);
                }
                median = (seconds(lower) + seconds(upper)) / 2;
            }
            result.add(new FunnelSteps.Step(s, reached[s], Optional.of(sum / 1_000_000.0 / t.length), Optional.of(median)));
        }
        return result;
    }

    private static double seconds(final long micros) {
        return micros / 1_000_000.0;
    }

    /**
     * The {@code k}-th smallest of {@code a} (0-based), leaving it at {@code a[k]} with nothing larger before it and
     * nothing smaller after (quickselect, random pivots: linear on average whatever the order of the times).
     */
    static long select(final long[] a, final int k) {
        final SplittableRandom random = new SplittableRandom(a.length);
        int lo = 0;
        int hi = a.length - 1;
        while (lo < hi) {
            final long pivot = a[lo + random.nextInt(hi - lo + 1)];
            // Three ways: below, equal and above the pivot, so runs of equal times end the search at once.
            int lt = lo;
            int gt = hi;
            int i = lo;
            while (i <= gt) {
                if (a[i] < pivot) {
                    swap(a, lt++, i++);
                } else if (a[i] > pivot) {
                    swap(a, i, gt--);
                } else {
                    i++;
                }
            }
            if (k < lt) {
                hi = lt - 1;
            } else if (k > gt) {
                lo = gt + 1;
            } else {
                return a[k];
            }
        }
        return a[k];
    }

    private static void swap(final long[] a, final int i, final int j) {
        final long t = a[i];
        a[i] = a[j];
        a[j] = t;
    }

    /** {@code [steps: 2]([reached: 8][times: 4][time: 8]*)*}: the first step's times count is always 0. */
    void write(final DataOutputStream out) throws IOException {
        out.writeShort(reached.length);
        for (int s = 0; s < reached.length; s++) {
            out.writeLong(reached[s]);
            out.writeInt(sizes[s]);
            for (int i = 0; i < sizes[s]; i++) {
                out.writeLong(times[s][i]);
            }
        }
    }

    /** A tally {@link #write} wrote for a funnel of {@code steps} steps. */
    static FunnelTally read(final DataInputStream in, final int steps) throws IOException {
        if (in.readUnsignedShort() != steps) {
            throw new IllegalArgumentException("funnel partial has a tally of another number of steps");
        }
        final FunnelTally tally = new FunnelTally(steps);
        for (int s = 0; s < steps; s++) {
            tally.reached[s] = in.readLong();
            final int count = in.readInt();
            if (count < 0 || count > in.available() / Long.BYTES || s == 0 && count > 0) {
                throw new IllegalArgumentException("funnel partial has a count past its end");
            }
            for (int i = 0; i < count; i++) {
                tally.time(s, in.readLong(), 1);
            }
        }
        return tally;
    }

    /**
     * A tally kept as actors' outcomes come and go: each outcome added, and removed again when the actor's outcome
     * changes, so it always equals the tally of the outcomes currently added. The times are counted per distinct
     * value, so removing one costs no more than adding it.
     */
    public static final class Running {
        private final long[] reached;
        private final LongCounts[] times;
        /** Moves on at every change, so a snapshot can be known to be current. */
        private long version;

        public Running(final int steps) {
            reached = new long[steps];
            times = new LongCounts[steps];
            for (int s = 1; s < steps; s++) {
                times[s] = new LongCounts();
            }
        }

        public void add(final FunnelOutcome outcome) {
            change(outcome, 1);
        }

        /** Removes an outcome added before. */
        public void remove(final FunnelOutcome outcome) {
            change(outcome, -1);
        }

        private void change(final FunnelOutcome outcome, final int by) {
            if (!outcome.counts()) {
                return;
            }
            version++;
            final int top = Math.min(outcome.stepReached(), reached.length - 1);
            for (int s = 0; s <= top; s++) {
                reached[s] += by;
                if (s > 0) {
                    final long t = micros(outcome.timings()[s - 1]);
                    if (t > 0) {
                        times[s].add(t, by);
                    }
                }
            }
        }

        /** What it holds now, as a tally of its own. */
        /** A number that changes whenever the sum does (and sometimes when it does not). */
        public long version() {
            return version;
        }

        public FunnelTally snapshot() {
            final FunnelTally tally = new FunnelTally(reached.length);
            System.arraycopy(reached, 0, tally.reached, 0, reached.length);
            for (int s = 1; s < reached.length; s++) {
                final int step = s;
                times[s].forEach((value, count) -> tally.time(step, value, count));
            }
            return tally;
        }

        /** About what it takes on the heap. */
        public long memoryBytes() {
            long bytes = 64 + 8L * reached.length;
            for (final LongCounts t : times) {
                bytes += t == null ? 0 : t.memoryBytes();
            }
            return bytes;
        }
    }

    /** A multiset of longs: counts per value in an open-addressed table (linear probing, deletion by shifting back). */
    static final class LongCounts {
        private long[] keys = new long[16];
        private int[] counts = new int[16];
        private int size;

        interface Visitor {
            void accept(long value, int count);
        }

        void add(final long value, final int by) {
            int i = slot(value);
            while (counts[i] != 0 && keys[i] != value) {
                i = (i + 1) & (keys.length - 1);
            }
            if (counts[i] == 0) {
                if (by < 0) {
                    throw new IllegalStateException("removing " + value + ", which was never added");
                }
                keys[i] = value;
                counts[i] = by;
                if (++size * 2 > keys.length) {
                    grow();
                }
                return;
            }
            counts[i] += by;
            if (counts[i] < 0) {
                throw new IllegalStateException("removing " + value + " more often than it was added");
            }
            if (counts[i] == 0) {
                size--;
                shiftBack(i);
            }
        }

        /** Fills the hole at {@code hole} with later entries of its probe run that belong before it. */
        private void shiftBack(int hole) {
            final int mask = keys.length - 1;
            int i = hole;
            while (true) {
                i = (i + 1) & mask;
                if (counts[i] == 0) {
                    return;
                }
                final int home = slot(keys[i]);
                // The entry at i may move to the hole if its home is not in (hole, i] (cyclically).
                if (hole <= i ? home <= hole || home > i : home <= hole && home > i) {
                    keys[hole] = keys[i];
                    counts[hole] = counts[i];
                    counts[i] = 0;
                    hole = i;
                }
            }
        }

        private int slot(final long value) {
            final long h = value * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32)) & (keys.length - 1);
        }

        private void grow() {
            final long[] oldKeys = keys;
            final int[] oldCounts = counts;
            keys = new long[oldKeys.length * 2];
            counts = new int[oldKeys.length * 2];
            size = 0;
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldCounts[i] != 0) {
                    add(oldKeys[i], oldCounts[i]);
                }
            }
        }

        void forEach(final Visitor visitor) {
            for (int i = 0; i < keys.length; i++) {
                if (counts[i] != 0) {
                    visitor.accept(keys[i], counts[i]);
                }
            }
        }

        long memoryBytes() {
            return 48 + 12L * keys.length;
        }
    }
}
