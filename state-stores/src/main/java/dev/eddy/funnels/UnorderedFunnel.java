package dev.eddy.funnels;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

/**
 * How far one actor gets through an unordered funnel, as PostHog's funnel aggregation computes it: the most distinct
 * steps the actor covered within one conversion window, in any order. Step {@code k} of the answer means "completed
 * {@code k + 1} steps"; the times are between the covering events in time order, from the first time the furthest
 * count was reached. An exclusion event clears what the actor had covered so far (exclusions of an unordered
 * funnel span all of it).
 */
public final class UnorderedFunnel {
    private final int steps;
    private final long windowMicros;

    /**
     * @param steps        number of steps (2 or more)
     * @param windowMicros conversion window, inclusive
     */
    public UnorderedFunnel(final int steps, final long windowMicros) {
        if (steps < 1) {
            throw new IllegalArgumentException("a funnel has at least one step");
        }
        this.steps = steps;
        this.windowMicros = windowMicros;
    }

    /** @param events the actor's events in timestamp order */
    public FunnelOutcome evaluate(final List<FunnelEvent> events) {
        return evaluate(events, -1, List.of());
    }

    /**
     * With step attribution of a breakdown ({@code attributionStep} 0, the only one an unordered funnel allows): an
     * event that would cover that many steps is taken only if it carries {@code value}.
     *
     * @param events          the actor's events in timestamp order
     * @param attributionStep how many steps must be covered when the value is checked, or -1
     * @param value           the breakdown value the actor is evaluated for
     */
    public FunnelOutcome evaluate(final List<FunnelEvent> events, final int attributionStep, final List<String> value) {
        final Best best = best(events, attributionStep, value);
        if (best.count == 0) {
            return FunnelOutcome.NOT_ENTERED;
        }
        return FunnelOutcome.reached(best.count - 1, best.timings);
    }

    /**
     * When the events of the actor's furthest coverage happened, earliest first, as {@link #evaluate} picks it; empty
     * when the actor never entered.
     *
     * @param events the actor's events in timestamp order
     */
    public long[] stepTimes(final List<FunnelEvent> events) {
        return best(events, -1, List.of()).heads.clone();
    }

    private Best best(final List<FunnelEvent> events, final int attributionStep, final List<String> value) {
        // Per step, the times of the events that cover it, oldest first.
        final ArrayDeque<Long>[] covering = newDeques();
        final Best best = new Best();
        for (final FunnelEvent event : events) {
            final long time = event.timeMicros();
            // Drop what fell out of the window (and, once every step is covered, the oldest cover), recording the
            // best coverage before each drop; exclusions too see this first, so what they clear was recorded.
            while (true) {
                final int oldest = oldestHead(covering);
                if (oldest < 0) {
                    break;
                }
                final boolean expired = covering[oldest].peekFirst() + windowMicros < time;
                if (!expired && !allCovered(covering)) {
                    break;
                }
                best.record(covering);
                covering[oldest].pollFirst();
            }
            if (event.steps().length == 0) {
                // An exclusion starts the actor over (events matching nothing are not fed to unordered funnels).
                for (final ArrayDeque<Long> d : covering) {
                    d.clear();
                }
                continue;
            }
            // The event covers the step it matches whose latest cover is oldest.
            int chosen = -1;
            long chosenLast = Long.MAX_VALUE;
            for (final int step : event.steps()) {
                if (step < 0 || step >= steps) {
                    continue;
                }
                final long last = covering[step].isEmpty() ? Long.MIN_VALUE : covering[step].peekLast();
                if (chosen < 0 || last < chosenLast) {
                    chosen = step;
                    chosenLast = last;
                }
            }
            if (chosen < 0 || covered(covering) == attributionStep && !value.equals(event.breakdown())) {
                continue;
            }
            covering[chosen].addLast(time);
            if (best.count == steps) {
                break;
            }
        }
        best.record(covering);
        return best;
    }

    private static int covered(final ArrayDeque<Long>[] covering) {
        int n = 0;
        for (final ArrayDeque<Long> d : covering) {
            if (!d.isEmpty()) {
                n++;
            }
        }
        return n;
    }

    /** The furthest coverage seen: how many steps, and the seconds between the covering events. */
    private static final class Best {
        int count;
        double[] timings = new double[0];
        long[] heads = new long[0];

        void record(final ArrayDeque<Long>[] covering) {
            final long[] heads = Arrays.stream(covering).filter(d -> !d.isEmpty()).mapToLong(ArrayDeque::peekFirst).sorted().toArray();
            if (heads.length <= count) {
                return;
            }
            count = heads.length;
            this.heads = heads;
            timings = new double[heads.length - 1];
            for (int i = 1; i < heads.length; i++) {
                timings[i - 1] = (heads[i] - heads[i - 1]) / 1_000_000.0;
            }
        }
    }

    @SuppressWarnings("unchecked")
    private ArrayDeque<Long>[] newDeques() {
        final ArrayDeque<Long>[] deques = new ArrayDeque[steps];
        for (int i = 0; i < steps; i++) {
            deques[i] = new ArrayDeque<>();
        }
        return deques;
    }

    private static int oldestHead(final ArrayDeque<Long>[] covering) {
        int oldest = -1;
        for (int i = 0; i < covering.length; i++) {
            if (!covering[i].isEmpty() && (oldest < 0 || covering[i].peekFirst() < covering[oldest].peekFirst())) {
                oldest = i;
            }
        }
        return oldest;
    }

    private static boolean allCovered(final ArrayDeque<Long>[] covering) {
        for (final ArrayDeque<Long> d : covering) {
            if (d.isEmpty()) {
                return false;
            }
        }
        return true;
    }
}
