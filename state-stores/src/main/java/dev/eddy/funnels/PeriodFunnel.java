package dev.eddy.funnels;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

/**
 * How one actor converts in each entrance period of a funnel trend ({@code funnel_viz_type: trends}), as PostHog's
 * funnel-trends aggregation computes it. An actor enters at most once per period, the period of a first-step event;
 * a later first-step event in the same period moves that entry's start (the progress made stays); reaching the
 * "to" step converts the period (1), and entries that reached the "from" step without converting count as -1.
 * Exclusions taint an entry as in {@link OrderedFunnel}; an actor with an entry that went on past an exclusion
 * ("fully excluded") keeps only its conversions, and entries whose furthest step was excluded are dropped.
 * Unordered funnels count distinct steps covered within the window instead, in the period of the oldest event
 * of the coverage.
 */
public final class PeriodFunnel {
    private final int steps;
    private final long windowMicros;
    private final String order;
    private final int fromStep;
    private final int toStep;

    /**
     * @param steps        number of steps
     * @param windowMicros conversion window, inclusive
     * @param order        {@code ordered}, {@code strict} or {@code unordered}
     * @param fromStep     0-based step an entry must reach to count
     * @param toStep       0-based step that converts
     */
    public PeriodFunnel(final int steps, final long windowMicros, final String order, final int fromStep, final int toStep) {
        if (fromStep < 0 || toStep <= fromStep || toStep >= steps) {
            throw new IllegalArgumentException("a funnel trend converts from a step to a later one");
        }
        this.steps = steps;
        this.windowMicros = windowMicros;
        this.order = order;
        this.fromStep = fromStep;
        this.toStep = toStep;
    }

    /** Everything that decides an actor's periods, written out. */
    @Override
    public String toString() {
        return "PeriodFunnel[steps " + steps + ", window " + windowMicros + ", " + order + ", from " + fromStep + " to " + toStep + "]";
    }

    private enum Taint { NOT, PARTIAL, FULL }

    /** One entrance period's entry: per step reached, the entry's start and whether an exclusion hit it. */
    private final class Entry {
        final long[] start = new long[steps + 1];
        final boolean[] set = new boolean[steps + 1];
        final boolean[] excluded = new boolean[steps + 1];
        int maxStep = 1;
        long maxTime;
        Taint taint = Taint.NOT;

        Entry(final long time) {
            start[1] = time;
            set[1] = true;
            maxTime = time;
        }
    }

    /**
     * @param events          the actor's events in timestamp order
     * @param periodOf        the entrance period (index) of an event
     * @param attributionStep the 0-based step whose event must carry {@code value} (step attribution), or -1
     * @param value           the breakdown value the actor is evaluated for
     * @return per period index (ascending): 1 converted, -1 reached the from step only
     */
    public Map<Integer, Integer> evaluate(final List<FunnelEvent> events, final ToIntFunction<FunnelEvent> periodOf,
                                          final int attributionStep, final List<String> value) {
        return "unordered".equals(order) ? unordered(events, periodOf, attributionStep, value)
                : ordered(events, periodOf, attributionStep, value);
    }

    private Map<Integer, Integer> ordered(final List<FunnelEvent> events, final ToIntFunction<FunnelEvent> periodOf,
                                          final int attributionStep, final List<String> value) {
        final Map<Integer, Entry> entries = new HashMap<>();
        final Map<Integer, Integer> results = new TreeMap<>();
        final int to = toStep + 1;
        for (final FunnelEvent event : events) {
            final long time = event.timeMicros();
            final int period = periodOf.applyAsInt(event);
            for (final int code : OrderedFunnel.encoded(event)) {
                final boolean exclusion = code < 0;
                final int step = Math.abs(code);
                if (step > steps) {
                    continue;
                }
                final boolean refused = attributionStep == step - 1 && !value.equals(event.breakdown());
                if (step == 1) {
                    if (refused || results.containsKey(period)) {
                        continue;
                    }
                    final Entry entry = entries.get(period);
                    if (entry == null || entry.maxStep == 1 && entry.taint != Taint.NOT) {
                        entries.put(period, new Entry(time));
                    } else {
                        entry.start[1] = time;
                        entry.set[1] = true;
                        entry.excluded[1] = false;
                    }
                    continue;
                }
                final Iterator<Map.Entry<Integer, Entry>> it = entries.entrySet().iterator();
                while (it.hasNext()) {
                    final Map.Entry<Integer, Entry> e = it.next();
                    final Entry entry = e.getValue();
                    final boolean inWindow = entry.set[step - 1] && time - entry.start[step - 1] <= windowMicros;
                    final boolean previousExcluded = entry.excluded[step - 1];
                    final boolean already = entry.set[step] == entry.set[step - 1] && entry.start[step] == entry.start[step - 1];
                    if (!inWindow || already) {
                        continue;
                    }
                    if (exclusion) {
                        if (!previousExcluded) {
                            entry.excluded[step - 1] = true;
                            if (entry.maxStep == step - 1 && time - entry.maxTime <= windowMicros) {
                                entry.taint = Taint.PARTIAL;
                            }
                        }
                        continue;
                    }
                    if (refused) {
                        continue;
                    }
                    if (!previousExcluded) {
                        entry.start[step] = entry.start[step - 1];
                        entry.set[step] = true;
                        entry.excluded[step] = false;
                    }
                    if (entry.set[to]) {
                        results.put(e.getKey(), 1);
                        it.remove();
                    } else if (step > entry.maxStep || step == entry.maxStep && entry.taint == Taint.PARTIAL) {
                        entry.maxStep = step;
                        entry.maxTime = time;
                        entry.taint = previousExcluded ? Taint.FULL : Taint.NOT;
                    }
                }
            }
            if ("strict".equals(order)) {
                for (final Entry entry : entries.values()) {
                    for (int i = 1; i <= steps; i++) {
                        if (!event.matches(i - 1)) {
                            entry.set[i] = false;
                            entry.start[i] = 0;
                            entry.excluded[i] = false;
                        }
                    }
                }
            }
        }
        final boolean fullyExcluded = entries.values().stream().anyMatch(e -> e.taint == Taint.FULL);
        if (!fullyExcluded) {
            entries.forEach((period, entry) -> {
                if (!results.containsKey(period) && entry.maxStep >= fromStep + 1 && entry.taint != Taint.PARTIAL) {
                    results.put(period, -1);
                }
            });
        }
        return results;
    }

    private Map<Integer, Integer> unordered(final List<FunnelEvent> events, final ToIntFunction<FunnelEvent> periodOf,
                                            final int attributionStep, final List<String> value) {
        // Per step, the events covering it (time, period), oldest first.
        @SuppressWarnings("unchecked")
        final ArrayDeque<long[]>[] covering = new ArrayDeque[steps];
        for (int i = 0; i < steps; i++) {
            covering[i] = new ArrayDeque<>();
        }
        final Map<Integer, Integer> best = new TreeMap<>();
        for (int i = 0; i < events.size(); i++) {
            final FunnelEvent event = events.get(i);
            evict(covering, best, event.timeMicros(), false);
            if (event.steps().length == 0) {
                for (final ArrayDeque<long[]> d : covering) {
                    d.clear();
                }
            } else {
                int chosen = -1;
                long chosenLast = Long.MAX_VALUE;
                for (final int step : event.steps()) {
                    final long last = covering[step].isEmpty() ? Long.MIN_VALUE : covering[step].peekLast()[0];
                    if (chosen < 0 || last < chosenLast) {
                        chosen = step;
                        chosenLast = last;
                    }
                }
                if (!(covered(covering) == attributionStep && !value.equals(event.breakdown()))) {
                    covering[chosen].addLast(new long[] {event.timeMicros(), periodOf.applyAsInt(event)});
                }
            }
            if (i == events.size() - 1) {
                evict(covering, best, event.timeMicros(), true);
            }
        }
        final Map<Integer, Integer> results = new TreeMap<>();
        best.forEach((period, max) -> {
            if (max >= fromStep + 1) {
                results.put(period, max >= toStep + 1 ? 1 : -1);
            }
        });
        return results;
    }

    /** Drops covers that fell out of the window (all of them at the end), recording the coverage per period first. */
    private void evict(final ArrayDeque<long[]>[] covering, final Map<Integer, Integer> best, final long latest, final boolean last) {
        while (true) {
            int oldest = -1;
            for (int s = 0; s < covering.length; s++) {
                if (!covering[s].isEmpty() && (oldest < 0 || covering[s].peekFirst()[0] < covering[oldest].peekFirst()[0])) {
                    oldest = s;
                }
            }
            if (oldest < 0) {
                return;
            }
            final long[] head = covering[oldest].peekFirst();
            final int count = covered(covering);
            if (!(last || count >= steps || head[0] + windowMicros < latest)) {
                return;
            }
            best.merge((int) head[1], count, Math::max);
            covering[oldest].pollFirst();
        }
    }

    private static int covered(final ArrayDeque<long[]>[] covering) {
        int n = 0;
        for (final ArrayDeque<long[]> d : covering) {
            if (!d.isEmpty()) {
                n++;
            }
        }
        return n;
    }
}
