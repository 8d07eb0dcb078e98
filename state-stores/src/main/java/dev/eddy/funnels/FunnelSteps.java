package dev.eddy.funnels;

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
        return FunnelTally.of(steps, outcomes).report();
    }
}
