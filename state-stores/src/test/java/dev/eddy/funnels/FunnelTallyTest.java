package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A tally reports what the actors' outcomes listed one by one report (counts, exact averages, medians), however it
 * was merged; a running tally equals the tally of the outcomes added and not removed, through any sequence of both.
 */
class FunnelTallyTest {

    @Test
    void aRunningTallyAlwaysEqualsTheTallyOfItsOutcomes() {
        for (final long seed : new long[] {1, 2, 3}) {
            final SplittableRandom random = new SplittableRandom(seed);
            final FunnelTally.Running running = new FunnelTally.Running(3);
            final List<FunnelOutcome> added = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                if (!added.isEmpty() && random.nextInt(3) == 0) {
                    running.remove(added.remove(random.nextInt(added.size())));
                } else {
                    final FunnelOutcome outcome = outcome(random);
                    running.add(outcome);
                    added.add(outcome);
                }
                if (i % 2_000 == 0 || i == 19_999) {
                    assertThat(running.snapshot().report()).as("seed %d after %d changes", seed, i).isEqualTo(naive(3, added));
                }
            }
            // Everything removed: nothing counts, and nothing is left behind in the times.
            added.forEach(running::remove);
            assertThat(running.snapshot().report()).isEmpty();
            assertThat(running.snapshot().isEmpty()).isTrue();
        }
    }

    @Test
    void mergedTalliesReportAsOne() {
        final SplittableRandom random = new SplittableRandom(7);
        final List<FunnelOutcome> all = new ArrayList<>();
        final FunnelTally merged = new FunnelTally(3);
        for (int part = 0; part < 12; part++) {
            final List<FunnelOutcome> outcomes = new ArrayList<>();
            for (int i = random.nextInt(500); i > 0; i--) {
                outcomes.add(outcome(random));
            }
            all.addAll(outcomes);
            merged.merge(FunnelTally.of(3, outcomes));
        }
        assertThat(merged.report()).isEqualTo(naive(3, all));
        assertThat(merged.report()).as("reporting leaves the tally as it was").isEqualTo(naive(3, all));
        assertThat(FunnelSteps.of(3, List.of(FunnelOutcome.NOT_ENTERED, FunnelOutcome.EXCLUDED))).as("nobody counts: []").isEmpty();
    }

    @Test
    void aRunningTallySnapshottedOftenMergesItsChangesIntoTheLastSnapshot() {
        // Snapshots a few changes apart take the merge path (the last snapshot's sorted times plus and minus what
        // changed); every one must equal the plain computation, and the ones before must not change with it.
        final SplittableRandom random = new SplittableRandom(5);
        final FunnelTally.Running running = new FunnelTally.Running(3);
        final List<FunnelOutcome> added = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            added.add(outcome(random));
            running.add(added.get(i));
        }
        FunnelTally before = running.snapshot();
        List<FunnelSteps.Step> reportedBefore = naive(3, added);
        for (int round = 0; round < 400; round++) {
            for (int change = 1 + random.nextInt(round % 10 == 0 ? 2_000 : 40); change > 0; change--) {
                if (!added.isEmpty() && random.nextBoolean()) {
                    running.remove(added.remove(random.nextInt(added.size())));
                } else {
                    final FunnelOutcome outcome = outcome(random);
                    running.add(outcome);
                    added.add(outcome);
                }
            }
            final FunnelTally now = running.snapshot();
            assertThat(now.report()).as("round %d", round).isEqualTo(naive(3, added));
            assertThat(before.report()).as("an earlier snapshot keeps its answer").isEqualTo(reportedBefore);
            assertThat(running.snapshot()).as("nothing changed: the same snapshot").isSameAs(now);
            before = now;
            reportedBefore = naive(3, added);
        }
        // A time added and taken out again between two snapshots cancels out.
        final FunnelOutcome once = FunnelOutcome.reached(2, new double[] {1.5, 2.5});
        running.add(once);
        running.remove(once);
        assertThat(running.snapshot().report()).isEqualTo(naive(3, added));
    }

    @Test
    void smallestFindsTheKthSmallestAcrossSortedRuns() {
        final SplittableRandom random = new SplittableRandom(11);
        for (int round = 0; round < 300; round++) {
            final List<long[]> runs = new ArrayList<>();
            final List<Long> all = new ArrayList<>();
            final long spread = round % 3 == 0 ? 5 : round % 3 == 1 ? 1_000_000 : Long.MAX_VALUE;
            for (int r = 1 + random.nextInt(14); r > 0; r--) {
                final long[] run = new long[random.nextInt(200)];
                for (int i = 0; i < run.length; i++) {
                    run[i] = 1 + random.nextLong(spread);
                    all.add(run[i]);
                }
                Arrays.sort(run);
                runs.add(run);
            }
            if (all.isEmpty()) {
                continue;
            }
            all.sort(null);
            final int k = random.nextInt(all.size());
            assertThat(FunnelTally.smallest(runs, k)).as("round %d, k %d of %d", round, k, all.size()).isEqualTo(all.get(k));
        }
    }

    @Test
    void changedSortedTimesAddAndTakeOutAsAMultiset() {
        final long[] was = {1, 3, 3, 7, 9};
        assertThat(FunnelTally.Running.changed(was, new long[] {0, 3, 10}, new long[] {3, 9})).containsExactly(0, 1, 3, 3, 7, 10);
        assertThat(FunnelTally.Running.changed(was, new long[] {4}, new long[] {4})).as("added and taken out again").containsExactly(was);
        assertThatThrownBy(() -> FunnelTally.Running.changed(was, new long[0], new long[] {2})).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> FunnelTally.Running.changed(was, new long[0], new long[] {10})).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void removingWhatWasNeverAddedIsAnError() {
        final FunnelTally.Running running = new FunnelTally.Running(2);
        running.add(FunnelOutcome.reached(1, new double[] {5}));
        assertThatThrownBy(() -> running.remove(FunnelOutcome.reached(1, new double[] {6}))).isInstanceOf(IllegalStateException.class);
    }

    /** An outcome of a three-step funnel: times of whole microseconds, some zero, many repeated. */
    private static FunnelOutcome outcome(final SplittableRandom random) {
        final int kind = random.nextInt(10);
        if (kind == 0) {
            return FunnelOutcome.NOT_ENTERED;
        }
        if (kind == 1) {
            return FunnelOutcome.EXCLUDED;
        }
        final int step = random.nextInt(3);
        final double[] timings = new double[step];
        for (int s = 0; s < step; s++) {
            final int shape = random.nextInt(4);
            final long micros = shape == 0 ? 0 : shape == 1 ? 60_000_000L * random.nextInt(5) : random.nextLong(1, 14L * 86_400_000_000L);
            timings[s] = micros / 1_000_000.0;
        }
        return FunnelOutcome.reached(step, timings);
    }

    /** The steps as PostHog defines them, computed the plain way: every time listed, sorted, summed in microseconds. */
    private static List<FunnelSteps.Step> naive(final int steps, final List<FunnelOutcome> outcomes) {
        final List<FunnelOutcome> counted = outcomes.stream().filter(FunnelOutcome::counts).toList();
        if (counted.isEmpty()) {
            return List.of();
        }
        final List<FunnelSteps.Step> result = new ArrayList<>();
        for (int s = 0; s < steps; s++) {
            final int step = s;
            final long count = counted.stream().filter(o -> o.stepReached() >= step).count();
            final long[] micros = s == 0 ? new long[0] : counted.stream().filter(o -> o.stepReached() >= step)
                    .mapToLong(o -> Math.round(o.timings()[step - 1] * 1e6)).filter(t -> t > 0).sorted().toArray();
            if (micros.length == 0) {
                result.add(new FunnelSteps.Step(s, count, Optional.empty(), Optional.empty()));
                continue;
            }
            final int mid = micros.length / 2;
            final double median = micros.length % 2 == 1 ? micros[mid] / 1e6 : (micros[mid - 1] / 1e6 + micros[mid] / 1e6) / 2;
            result.add(new FunnelSteps.Step(s, count, Optional.of(Arrays.stream(micros).sum() / 1e6 / micros.length), Optional.of(median)));
        }
        return result;
    }
}
