package dev.eddy.funnels;

/**
 * Where one actor ended in a funnel.
 *
 * @param stepReached the furthest 0-based step reached; -1 when the actor never entered or was excluded
 * @param excluded    whether an exclusion removed the actor from the whole funnel
 * @param timings     seconds from each step to the next, for the steps reached
 */
public record FunnelOutcome(int stepReached, boolean excluded, double[] timings) {
    public static final FunnelOutcome NOT_ENTERED = new FunnelOutcome(-1, false, new double[0]);
    public static final FunnelOutcome EXCLUDED = new FunnelOutcome(-1, true, new double[0]);

    public FunnelOutcome {
        timings = timings.clone();
    }

    /** The outcomes of the first steps without timings, shared (the first step's has none). */
    private static final FunnelOutcome[] UNTIMED = java.util.stream.IntStream.range(0, 8)
            .mapToObj(step -> new FunnelOutcome(step, false, new double[0])).toArray(FunnelOutcome[]::new);

    public static FunnelOutcome reached(final int step, final double[] timings) {
        // Most persons of a funnel stop at its first step: one outcome for them all (a kept funnel holds one a person).
        return timings.length == 0 && step >= 0 && step < UNTIMED.length ? UNTIMED[step] : new FunnelOutcome(step, false, timings);
    }

    /** Whether the actor counts in the funnel at all (entered and not excluded). */
    public boolean counts() {
        return stepReached >= 0;
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof FunnelOutcome other && stepReached == other.stepReached && excluded == other.excluded
                && java.util.Arrays.equals(timings, other.timings);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * stepReached + Boolean.hashCode(excluded)) + java.util.Arrays.hashCode(timings);
    }

    @Override
    public String toString() {
        return "FunnelOutcome[step " + stepReached + (excluded ? ", excluded" : "") + ", timings " + java.util.Arrays.toString(timings) + "]";
    }
}
