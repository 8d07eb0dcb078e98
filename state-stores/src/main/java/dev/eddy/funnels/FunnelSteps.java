package dev.eddy.funnels;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The per-step figures of a funnel over its actors: how many reached each step, and the average and median time
 * from the previous step among those who reached it. As in PostHog, conversions of zero seconds take no part in the
 * times, and the first step has none.
 */
public final class FunnelSteps {
    private FunnelSteps() {
    }

    /**
     * @param count   actors that reached this step
     * @param average mean seconds from the previous step; empty for the first step or when no time is above zero
     * @param median  median seconds from the previous step (interpolated between the middle two)
     */
    public record Step(int order, long count, Optional<Double> average, Optional<Double> median) {
    }

    /** The steps of a funnel of {@code steps} steps; empty when no actor counts (PostHog answers {@code []}). */
    public static List<Step> of(final int steps, final Collection<FunnelOutcome> outcomes) {
        final List<FunnelOutcome> counted = outcomes.stream().filter(FunnelOutcome::counts).toList();
        if (counted.isEmpty()) {
            return List.of();
        }
        final List<Step> result = new ArrayList<>(steps);
        for (int s = 0; s < steps; s++) {
            final int step = s;
            final long count = counted.stream().filter(o -> o.stepReached() >= step).count();
            if (step == 0) {
                result.add(new Step(0, count, Optional.empty(), Optional.empty()));
                continue;
            }
            final double[] times = counted.stream().filter(o -> o.stepReached() >= step)
                    .mapToDouble(o -> o.timings()[step - 1]).filter(t -> t > 0).sorted().toArray();
            result.add(new Step(step, count, average(times), median(times)));
        }
        return result;
    }

    private static Optional<Double> average(final double[] sorted) {
        if (sorted.length == 0) {
            return Optional.empty();
        }
        double sum = 0;
        for (final double t : sorted) {
            sum += t;
        }
        return Optional.of(sum / sorted.length);
    }

    private static Optional<Double> median(final double[] sorted) {
        if (sorted.length == 0) {
            return Optional.empty();
        }
        final int mid = sorted.length / 2;
        return Optional.of(sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2);
    }
}
