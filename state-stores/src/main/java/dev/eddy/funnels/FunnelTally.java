package dev.eddy.funnels;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A funnel's figures over many actors without one entry per actor: how many reached each step, and the conversion
 * times above zero into each step after the first (in microseconds, one per actor converting). What
 * {@link FunnelSteps} reports follows from it: counts, exact averages, and medians. Tallies merge by adding counts and
 * joining times, so partitions' and instances' partials of a funnel merge without the actors' outcomes; a
 * {@link Running} tally is what a kept funnel ({@link FunnelProgress}) changes as persons' outcomes change.
 *
 * <p>A step's times are held as sorted runs that are never written once made, so merging tallies shares their runs
 * instead of copying times, a kept funnel hands out the same runs until its persons change, and a median is found by
 * searching the runs (counting the times at most a value in each) instead of gathering and selecting every time.
 */
public final class FunnelTally {
    /** Past this many runs a step's runs are sorted into one when tallies merge. */
    private static final int MAX_RUNS = 32;

    private final long[] reached;
    /** Per step {@code s >= 1}: its times as sorted runs (shared with other tallies: never written). */
    private final List<List<long[]>> runs;
    /** Per step: how many times it holds, and their sum in microseconds. */
    private final long[] counts;
    private final long[] sums;

    public FunnelTally(final int steps) {
        reached = new long[steps];
        runs = new ArrayList<>(steps);
        for (int s = 0; s < steps; s++) {
            runs.add(new ArrayList<>(2));
        }
        counts = new long[steps];
        sums = new long[steps];
    }

    /** The tally of {@code outcomes} (those that do not count are left out). */
    public static FunnelTally of(final int steps, final Collection<FunnelOutcome> outcomes) {
        final Builder builder = new Builder(steps);
        outcomes.forEach(builder::add);
        return builder.build();
    }

    /** A tally made by adding outcomes one at a time; {@link #build} once, then leave it. */
    public static final class Builder {
        private final FunnelTally tally;
        /** Per step {@code s >= 1}: its times as added, unsorted. */
        private final LongList[] times;

        public Builder(final int steps) {
            tally = new FunnelTally(steps);
            times = new LongList[steps];
            for (int s = 1; s < steps; s++) {
                times[s] = new LongList();
            }
        }

        /** Adds one actor's outcome (nothing if it does not count). */
        public void add(final FunnelOutcome outcome) {
            if (!outcome.counts()) {
                return;
            }
            final int top = Math.min(outcome.stepReached(), times.length - 1);
            for (int s = 0; s <= top; s++) {
                tally.reached[s]++;
                final long t = s == 0 ? 0 : micros(outcome.timings()[s - 1]);
                if (t > 0) {
                    times[s].add(t);
                    tally.sums[s] += t;
                }
            }
        }

        /** Whether no outcome added counts. */
        public boolean isEmpty() {
            return tally.isEmpty();
        }

        /** The tally of the outcomes added. */
        public FunnelTally build() {
            for (int s = 1; s < times.length; s++) {
                if (times[s].size > 0) {
                    tally.runs.get(s).add(times[s].sorted());
                    tally.counts[s] = times[s].size;
                }
            }
            return tally;
        }
    }

    /** A conversion time as a tally keeps it: a timing (seconds from a difference of microseconds) in microseconds. */
    static long micros(final double seconds) {
        return Math.round(seconds * 1_000_000.0);
    }

    public int steps() {
        return reached.length;
    }

    /** Adds {@code other}'s actors to this (sharing its runs); returns this. */
    public FunnelTally merge(final FunnelTally other) {
        if (other.reached.length != reached.length) {
            throw new IllegalArgumentException("tallies of funnels of " + reached.length + " and " + other.reached.length + " steps");
        }
        for (int s = 0; s < reached.length; s++) {
            reached[s] += other.reached[s];
            counts[s] += other.counts[s];
            sums[s] += other.sums[s];
            final List<long[]> mine = runs.get(s);
            mine.addAll(other.runs.get(s));
            if (mine.size() > MAX_RUNS) {
                final long[] one = joined(mine, counts[s]);
                Arrays.sort(one);
                mine.clear();
                mine.add(one);
            }
        }
        return this;
    }

    /** The runs one after another. */
    private static long[] joined(final List<long[]> runs, final long count) {
        final long[] all = new long[Math.toIntExact(count)];
        int at = 0;
        for (final long[] run : runs) {
            System.arraycopy(run, 0, all, at, run.length);
            at += run.length;
        }
        return all;
    }

    /** About what it takes on the heap (runs shared with other tallies are counted in each). */
    public long memoryBytes() {
        long bytes = 64 + 40L * reached.length;
        for (final List<long[]> step : runs) {
            for (final long[] run : step) {
                bytes += 24 + 8L * run.length;
            }
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
            final long n = counts[s];
            if (n == 0) {
                result.add(new FunnelSteps.Step(s, reached[s], Optional.empty(), Optional.empty()));
                continue;
            }
            final long upper = smallest(runs.get(s), n / 2);
            final double median = n % 2 == 1 ? seconds(upper) : (seconds(smallest(runs.get(s), n / 2 - 1)) + seconds(upper)) / 2;
            result.add(new FunnelSteps.Step(s, reached[s], Optional.of(sums[s] / 1_000_000.0 / n), Optional.of(median)));
        }
        return result;
    }

    private static double seconds(final long micros) {
        return micros / 1_000_000.0;
    }

    /**
     * The {@code k}-th smallest (0-based) of the times in {@code runs}, sorted runs that hold more than {@code k}
     * together: the least value with more than {@code k} times at most it, found by halving the range of values (at
     * most 64 rounds of one binary search a run).
     */
    static long smallest(final List<long[]> runs, final long k) {
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (final long[] run : runs) {
            if (run.length > 0) {
                lo = Math.min(lo, run[0]);
                hi = Math.max(hi, run[run.length - 1]);
            }
        }
        while (lo < hi) {
            // The midpoint rounded down, without overflow for any pair of longs.
            final long mid = (lo & hi) + ((lo ^ hi) >> 1);
            long atMost = 0;
            for (final long[] run : runs) {
                atMost += above(run, mid);
            }
            if (atMost > k) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** The index of the first value of sorted {@code run} above {@code value} (how many are at most it). */
    private static int above(final long[] run, final long value) {
        int lo = 0;
        int hi = run.length;
        while (lo < hi) {
            final int mid = (lo + hi) >>> 1;
            if (run[mid] <= value) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * {@code [steps: 2]([reached: 8][times: 4][time: 8]*)*}: the first step's times count is always 0; a step's times
     * are its runs one after another (each sorted, the whole not necessarily).
     */
    void write(final DataOutputStream out) throws IOException {
        out.writeShort(reached.length);
        for (int s = 0; s < reached.length; s++) {
            out.writeLong(reached[s]);
            out.writeInt(Math.toIntExact(counts[s]));
            for (final long[] run : runs.get(s)) {
                for (final long t : run) {
                    out.writeLong(t);
                }
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
            if (count == 0) {
                continue;
            }
            final long[] run = new long[count];
            long sum = 0;
            for (int i = 0; i < count; i++) {
                run[i] = in.readLong();
                if (run[i] <= 0) {
                    throw new IllegalArgumentException("funnel partial has a conversion time of " + run[i] + " µs");
                }
                sum += run[i];
            }
            // Runs written one after another: sorting finds them and merges (linear when already sorted).
            Arrays.sort(run);
            tally.runs.get(s).add(run);
            tally.counts[s] = count;
            tally.sums[s] = sum;
        }
        return tally;
    }

    /**
     * A tally kept as actors' outcomes come and go: each outcome added, and removed again when the actor's outcome
     * changes, so it always equals the tally of the outcomes currently added. The times are counted per distinct
     * value, so removing one costs no more than adding it. A snapshot's sorted times are kept with the times added and
     * removed since, so the next snapshot merges those few into them (one pass) instead of sorting every time again.
     */
    public static final class Running {
        private final long[] reached;
        private final LongCounts[] times;
        private final long[] sums;
        /** Moves on at every change, so a snapshot can be known to be current. */
        private long version;
        /** Per step: the last snapshot's sorted times; null before one, or when too much changed to merge. */
        private final long[][] sorted;
        /** Per step: the times added and removed since the last snapshot (while its sorted times are kept). */
        private final LongList[] added;
        private final LongList[] removed;
        private FunnelTally last;
        private long lastVersion;

        public Running(final int steps) {
            reached = new long[steps];
            times = new LongCounts[steps];
            sums = new long[steps];
            sorted = new long[steps][];
            added = new LongList[steps];
            removed = new LongList[steps];
            for (int s = 1; s < steps; s++) {
                times[s] = new LongCounts();
                added[s] = new LongList();
                removed[s] = new LongList();
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
                        sums[s] += by * t;
                        note(s, t, by);
                    }
                }
            }
        }

        /** Notes a change of a step's times for the next snapshot, or lets its sorted times go when many changed. */
        private void note(final int step, final long micros, final int by) {
            if (sorted[step] == null) {
                return;
            }
            (by > 0 ? added[step] : removed[step]).add(micros);
            if (added[step].size + removed[step].size > sorted[step].length / 4 + 64) {
                sorted[step] = null;
                added[step].clear();
                removed[step].clear();
            }
        }

        /** A number that changes whenever the sum does (and sometimes when it does not). */
        public long version() {
            return version;
        }

        /** What it holds now, as a tally of its own (the same one while nothing changed: never change it). */
        public FunnelTally snapshot() {
            if (last != null && lastVersion == version) {
                return last;
            }
            final FunnelTally tally = new FunnelTally(reached.length);
            System.arraycopy(reached, 0, tally.reached, 0, reached.length);
            for (int s = 1; s < reached.length; s++) {
                sorted[s] = sorted[s] == null ? expanded(times[s]) : changed(sorted[s], added[s].sorted(), removed[s].sorted());
                added[s].clear();
                removed[s].clear();
                if (sorted[s].length > 0) {
                    tally.runs.get(s).add(sorted[s]);
                }
                tally.counts[s] = sorted[s].length;
                tally.sums[s] = sums[s];
            }
            last = tally;
            lastVersion = version;
            return tally;
        }

        /** Every time counted, sorted. */
        private static long[] expanded(final LongCounts counts) {
            final long[] all = new long[Math.toIntExact(counts.total())];
            final int[] at = {0};
            counts.forEach((value, count) -> {
                Arrays.fill(all, at[0], at[0] + count, value);
                at[0] += count;
            });
            Arrays.sort(all);
            return all;
        }

        /** Sorted {@code was} with sorted {@code plus} added and sorted {@code minus} (each in it or in plus) taken out. */
        static long[] changed(final long[] was, final long[] plus, final long[] minus) {
            final long[] result = new long[was.length + plus.length - minus.length];
            int i = 0;
            int p = 0;
            int m = 0;
            int out = 0;
            while (i < was.length || p < plus.length) {
                // The next value in order, from the old times or the added ones; a removed time cancels it.
                final boolean fromPlus = i == was.length || p < plus.length && plus[p] < was[i];
                final long v = fromPlus ? plus[p++] : was[i++];
                if (m < minus.length && minus[m] < v) {
                    throw new IllegalStateException("removing " + minus[m] + ", which the tally does not hold");
                }
                if (m < minus.length && minus[m] == v) {
                    m++;
                } else if (out == result.length) {
                    // More kept than room for: a removed time came after every one held.
                    throw new IllegalStateException("removing " + minus[m] + ", which the tally does not hold");
                } else {
                    result[out++] = v;
                }
            }
            if (m < minus.length) {
                throw new IllegalStateException("removing " + minus[m] + ", which the tally does not hold");
            }
            return result;
        }

        /** About what it takes on the heap (the last snapshot's times included). */
        public long memoryBytes() {
            long bytes = 64 + 16L * reached.length;
            for (int s = 1; s < reached.length; s++) {
                bytes += times[s].memoryBytes() + added[s].memoryBytes() + removed[s].memoryBytes() + (sorted[s] == null ? 0 : 16 + 8L * sorted[s].length);
            }
            return bytes;
        }
    }

    /** A growing list of longs. */
    private static final class LongList {
        private long[] values = new long[0];
        private int size;

        void add(final long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, Math.max(8, size * 2));
            }
            values[size++] = value;
        }

        long[] sorted() {
            final long[] copy = Arrays.copyOf(values, size);
            Arrays.sort(copy);
            return copy;
        }

        void clear() {
            size = 0;
            if (values.length > 1_024) {
                values = new long[0];
            }
        }

        long memoryBytes() {
            return 32 + 8L * values.length;
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

        /** How many values it holds, repeats counted. */
        long total() {
            long total = 0;
            for (final int count : counts) {
                total += count;
            }
            return total;
        }

        long memoryBytes() {
            return 48 + 12L * keys.length;
        }
    }
}
