package dev.eddy.funnels;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * How far one actor gets through an ordered or strict funnel, as PostHog's funnel aggregation computes it.
 *
 * <p>Every event can start an attempt. An attempt reaches step {@code k} with an event matching it at or after its
 * step {@code k - 1}, no later than the conversion window after its first step (inclusive). Per number of steps
 * completed one attempt goes on: the one that reached it last (the latest start has the most window left); the
 * actor's result is the first attempt to get furthest, and its step times give the conversion times. An exclusion event inside the window taints the attempt
 * that is between the exclusion's steps; an actor whose furthest attempt is tainted leaves the funnel entirely. In
 * a strict funnel every event the actor sent counts, and one that is not the next step ends the attempts in
 * progress. Events with the same timestamp are taken together: matching different steps, they may fill several
 * steps of one attempt (in step order), and exclusions at that instant are ignored.
 */
public final class OrderedFunnel {
    private final int steps;
    private final long windowMicros;
    private final boolean strict;
    /** Bits of each small field of a {@link Run#freeze frozen} run: a byte, or two for a funnel of over 60 steps. */
    private final int fieldBits;
    /**
     * The codes of the last arrays of steps and exclusions met ({@link #encoded}): a funnel's rows share those arrays,
     * so runs of events alike encode them once. Replaced whole, so runs on several threads at most encode again.
     */
    private volatile Coded coded = new Coded(null, null, null);

    private record Coded(int[] steps, int[] exclusions, int[] codes) {
    }

    /**
     * @param steps        number of steps (2 or more)
     * @param windowMicros conversion window, measured from the first step, inclusive
     * @param strict       whether any event that is not the next step ends an attempt
     */
    public OrderedFunnel(final int steps, final long windowMicros, final boolean strict) {
        if (steps < 1) {
            throw new IllegalArgumentException("a funnel has at least one step");
        }
        this.steps = steps;
        // A frozen run's fields hold up to steps + 2 (attempts) and an attempt's step count with two flags.
        this.fieldBits = (steps << 2 | 3) < 1 << Byte.SIZE ? Byte.SIZE : Short.SIZE;
        if ((steps << 2 | 3) >= 1 << Short.SIZE) {
            throw new IllegalArgumentException("a funnel of " + steps + " steps");
        }
        this.windowMicros = windowMicros;
        this.strict = strict;
    }

    /**
     * One attempt: when it started, the time of each step it completed (an array never changed once made), whether an
     * exclusion hit it. Kept per person between queries ({@link Run}), so it holds no more than that: which events
     * filled its steps matters only among events of one instant, and is tracked while they are taken.
     */
    private static final class Attempt {
        private static final long[] NO_TIMES = {};
        final long start;
        final long[] times;
        boolean excluded;

        Attempt(final long start, final long[] times, final boolean excluded) {
            this.start = start;
            this.times = times;
            this.excluded = excluded;
        }

        /** An attempt starting at {@code start}, before its first step. */
        static Attempt at(final long start) {
            return new Attempt(start, NO_TIMES, false);
        }

        Attempt plus(final long time) {
            final long[] t = java.util.Arrays.copyOf(times, times.length + 1);
            t[times.length] = time;
            return new Attempt(start, t, excluded);
        }
    }

    /**
     * @param events the actor's events in timestamp order
     */
    public FunnelOutcome evaluate(final List<FunnelEvent> events) {
        return evaluate(events, -1, List.of());
    }

    /**
     * With step attribution of a breakdown: the event filling step {@code attributionStep} must carry {@code value}.
     *
     * @param events          the actor's events in timestamp order
     * @param attributionStep the 0-based step whose event must carry the value, or -1
     * @param value           the breakdown value the actor is evaluated for
     */
    public FunnelOutcome evaluate(final List<FunnelEvent> events, final int attributionStep, final List<String> value) {
        final Run run = new Run(attributionStep, value);
        run.fold(events);
        return run.outcome();
    }

    /**
     * When the actor's furthest attempt completed each of its steps (its first step first), as {@link #evaluate}
     * picks that attempt; empty when the actor never entered or an exclusion removed it.
     *
     * @param events the actor's events in timestamp order
     */
    public long[] stepTimes(final List<FunnelEvent> events) {
        final Run run = run();
        run.fold(events);
        return run.furthestStep == 0 || run.furthest.excluded ? new long[0] : run.furthest.times.clone();
    }

    /** An evaluation without a breakdown, to go on with as later events come ({@link Run}). */
    public Run run() {
        return new Run(-1, List.of());
    }

    /**
     * The run (without a breakdown) that {@code frozen} holds, as {@link Run#freeze} made it from a run of a funnel with
     * as many steps: a run kept between queries for each of a partition's persons waits as an array of longs (a
     * fraction of its objects' heap) and is thawed only when the person's events change.
     */
    public Run thaw(final long[] frozen) {
        final Run run = run();
        run.lastTime = frozen[0];
        final int attemptCount = packedField(frozen, 1);
        run.furthestStep = packedField(frozen, 0);
        final int furthestIndex = packedField(frozen, 2);
        final Attempt[] attempts = new Attempt[attemptCount];
        int at = 1 + packedLongs(attemptCount);
        for (int a = 0; a < attemptCount; a++) {
            final int meta = packedField(frozen, 3 + steps + 1 + a);
            final int timeCount = meta >>> 2;
            final long start = timeCount == 0 || (meta & 2) != 0 ? frozen[at++] : frozen[at];
            final long[] times = timeCount == 0 ? Attempt.NO_TIMES : java.util.Arrays.copyOfRange(frozen, at, at + timeCount);
            at += timeCount;
            attempts[a] = new Attempt(start, times, (meta & 1) != 0);
        }
        for (int s = 0; s <= steps; s++) {
            final int index = packedField(frozen, 3 + s);
            run.entered[s] = index == 0 ? null : attempts[index - 1];
        }
        run.furthest = furthestIndex == 0 ? null : attempts[furthestIndex - 1];
        return run;
    }

    /**
     * How many longs after the first of a frozen run hold its bytes: the furthest step, the number of attempts and
     * which is the furthest; each step's attempt; each attempt's step count and flags.
     */
    private int packedLongs(final int attempts) {
        final int perLong = Long.SIZE / fieldBits;
        return (3 + steps + 1 + attempts + perLong - 1) / perLong;
    }

    private int packedField(final long[] frozen, final int i) {
        final int perLong = Long.SIZE / fieldBits;
        return (int) (frozen[1 + i / perLong] >>> (i % perLong * fieldBits) & ((1 << fieldBits) - 1));
    }

    private void packField(final long[] frozen, final int i, final int value) {
        final int perLong = Long.SIZE / fieldBits;
        frozen[1 + i / perLong] |= (long) value << (i % perLong * fieldBits);
    }

    /** Whether events from {@code timeMicros} on may be folded into the {@link Run#freeze frozen} run (thawed). */
    public static boolean continuesAt(final long[] frozen, final long timeMicros) {
        return timeMicros > frozen[0];
    }


    /**
     * One actor's evaluation, event after event: the attempts in progress, the furthest one, and the time of the last
     * event folded. Its {@link #outcome} after folding events in parts equals {@link #evaluate} over all of them when
     * each part comes strictly later than the one before ({@link #continuesAt}): events of one instant are taken
     * together, and a late event can change which attempt counts. So a funnel kept between queries goes on from
     * where a person's evaluation stopped when its new events are its latest (the usual case: events arrive in the
     * order they happen), as ClickHouse's {@code windowFunnel} state does, and evaluates the person again otherwise.
     */
    public final class Run {
        private final Attribution attribution;
        private final Attempt[] entered = new Attempt[steps + 1];
        private Attempt furthest;
        private int furthestStep;
        private long lastTime = Long.MIN_VALUE;

        private Run(final int attributionStep, final List<String> value) {
            this.attribution = attributionStep < 0 ? Attribution.NONE : new Attribution(attributionStep, value);
        }

        /** Whether events from {@code timeMicros} on may be {@link #fold folded} into this run. */
        public boolean continuesAt(final long timeMicros) {
            return timeMicros > lastTime;
        }

        /**
         * Goes on with {@code events} (in timestamp order, the first {@link #continuesAt later} than every event
         * folded before).
         */
        public void fold(final List<FunnelEvent> events) {
            if (events.isEmpty()) {
                return;
            }
            if (!continuesAt(events.get(0).timeMicros())) {
                throw new IllegalArgumentException("events at " + events.get(0).timeMicros() + " do not follow those folded up to " + lastTime);
            }
            lastTime = events.get(events.size() - 1).timeMicros();
            int i = 0;
            while (i < events.size() && entered[steps] == null) {
                // The events that share this timestamp.
                int j = i + 1;
                while (j < events.size() && events.get(j).timeMicros() == events.get(i).timeMicros()) {
                    j++;
                }
                group(events.subList(i, j));
                i = j;
            }
        }

        private void group(final List<FunnelEvent> group) {
            entered[0] = Attempt.at(group.get(0).timeMicros());
            boolean alike = true;
            for (int k = 1; k < group.size() && alike; k++) {
                alike = group.get(k).sameMatchesAs(group.get(0));
            }
            if (!alike) {
                // Each step of each event on its own, lowest step first, so one instant can fill several steps (but
                // never two of one attempt with the same event: which of the group's events each attempt holds).
                final Map<Attempt, java.util.BitSet> holding = new IdentityHashMap<>();
                final List<int[]> pseudo = new ArrayList<>();
                for (int e = 0; e < group.size(); e++) {
                    for (final int s : group.get(e).steps()) {
                        pseudo.add(new int[] {s + 1, e});
                    }
                }
                pseudo.sort((a, b) -> Integer.compare(a[0], b[0]));
                for (final int[] p : pseudo) {
                    process(group.get(p[1]), new int[] {p[0]}, p[1], holding);
                }
                return;
            }
            for (final FunnelEvent event : group) {
                // Events share their arrays of steps and exclusions (a funnel's rows intern them): encoded once per
                // run of events alike.
                Coded known = coded;
                if (event.steps() != known.steps() || event.exclusions() != known.exclusions()) {
                    known = new Coded(event.steps(), event.exclusions(), encoded(event));
                    coded = known;
                }
                process(event, known.codes(), -1, null);
                if (strict) {
                    for (int s = 1; s <= steps; s++) {
                        if (!event.matches(s - 1)) {
                            entered[s] = null;
                        }
                    }
                }
                if (entered[steps] != null) {
                    return;
                }
            }
        }

        /** Where the actor ends with the events folded so far. */
        public FunnelOutcome outcome() {
            if (furthestStep == 0) {
                return FunnelOutcome.NOT_ENTERED;
            }
            if (furthest.excluded) {
                return FunnelOutcome.EXCLUDED;
            }
            final long[] times = furthest.times;
            final double[] timings = new double[times.length - 1];
            for (int k = 1; k < times.length; k++) {
                timings[k - 1] = (times[k] - times[k - 1]) / 1_000_000.0;
            }
            return FunnelOutcome.reached(furthestStep - 1, timings);
        }

        /**
         * This run's state as longs, for {@link OrderedFunnel#thaw} (a run without a breakdown only): the time of the
         * last event folded; the furthest step, how many attempts and which is the furthest; each step's attempt; then
         * each attempt (shared ones once) as its start, its step count and exclusion, and its step times.
         */
        public long[] freeze() {
            if (attribution != Attribution.NONE) {
                throw new IllegalStateException("a run with a breakdown value is not kept");
            }
            // Each attempt once (an attempt is often both a step's and the furthest), by identity: a few a run.
            final Attempt[] attempts = new Attempt[steps + 2];
            final int[] indexOf = new int[steps + 2];
            int count = 0;
            int longs = 0;
            for (int s = 0; s <= steps + 1; s++) {
                final Attempt a = s <= steps ? entered[s] : furthest;
                if (a == null) {
                    continue;
                }
                int found = 0;
                while (found < count && attempts[found] != a) {
                    found++;
                }
                if (found == count) {
                    attempts[count++] = a;
                    longs += a.times.length + (startApart(a) ? 1 : 0);
                }
                indexOf[s] = found + 1;
            }
            final int packed = packedLongs(count);
            final long[] frozen = new long[1 + packed + longs];
            frozen[0] = lastTime;
            packField(frozen, 0, furthestStep);
            packField(frozen, 1, count);
            packField(frozen, 2, indexOf[steps + 1]);
            for (int s = 0; s <= steps; s++) {
                packField(frozen, 3 + s, indexOf[s]);
            }
            int at = 1 + packed;
            for (int a = 0; a < count; a++) {
                final Attempt attempt = attempts[a];
                final boolean apart = startApart(attempt);
                packField(frozen, 3 + steps + 1 + a, attempt.times.length << 2 | (apart ? 2 : 0) | (attempt.excluded ? 1 : 0));
                if (apart) {
                    frozen[at++] = attempt.start;
                }
                System.arraycopy(attempt.times, 0, frozen, at, attempt.times.length);
                at += attempt.times.length;
            }
            return frozen;
        }

        /**
         * Whether a frozen attempt needs its start apart from its step times: one before its first step does; one past
         * it started at its first step's time (entered with that step's event), which is then not written twice.
         */
        private static boolean startApart(final Attempt attempt) {
            return attempt.times.length == 0 || attempt.times[0] != attempt.start;
        }

        /**
         * @param member  the event's place in its instant's group when the group's events are taken step by step
         *                (-1 when not)
         * @param holding then, which of the group's events each attempt made in the group holds
         */
        private void process(final FunnelEvent event, final int[] codes, final int member, final Map<Attempt, java.util.BitSet> holding) {
            final boolean together = member >= 0;
            final long time = event.timeMicros();
            for (final int code : codes) {
                final boolean exclusion = code < 0;
                final int step = Math.abs(code);
                if (step > steps) {
                    continue;
                }
                final Attempt previous = entered[step - 1];
                if (previous == null || time - previous.start > windowMicros) {
                    continue;
                }
                if (entered[step] != null && entered[step].start == previous.start) {
                    // This attempt already has that step; its earliest time stays.
                    continue;
                }
                if (exclusion) {
                    if (together || previous.excluded) {
                        continue;
                    }
                    previous.excluded = true;
                    if (furthestStep == step - 1 && furthest != null && time - furthest.start <= windowMicros) {
                        furthest.excluded = true;
                    }
                    continue;
                }
                final java.util.BitSet held = together ? holding.get(previous) : null;
                if (attribution.refuses(step - 1, event) || held != null && held.get(member)) {
                    continue;
                }
                final Attempt next = previous.plus(time);
                if (together) {
                    final java.util.BitSet holds = held == null ? new java.util.BitSet() : (java.util.BitSet) held.clone();
                    holds.set(member);
                    holding.put(next, holds);
                }
                if (!previous.excluded) {
                    entered[step] = next;
                }
                if (step > furthestStep || step == furthestStep && furthest.excluded) {
                    furthest = next;
                    furthestStep = step;
                }
            }
        }
    }

    /** The step whose event must carry the breakdown value the actor is evaluated for (step attribution). */
    private record Attribution(int step, List<String> value) {
        /** No step attribution (no breakdown): shared by every run. */
        static final Attribution NONE = new Attribution(-1, List.of());

        boolean refuses(final int step0, final FunnelEvent event) {
            return step0 == step && !value.equals(event.breakdown());
        }
    }

    /**
     * PostHog's encoding of what an event matches: 1-based steps as positive numbers, the exclusion of gap
     * {@code g} as {@code -(g + 2)}, taken in the reverse of PostHog's list (steps ascending, then exclusions by gap
     * ascending): exclusions from the last gap down, then steps from the last down, so one event never fills two
     * consecutive steps, and an exclusion taints the attempt in progress before the same event starts a new one.
     */
    static int[] encoded(final FunnelEvent event) {
        final int[] steps = FunnelEvent.sorted(event.steps());
        final int[] gaps = FunnelEvent.sorted(event.exclusions());
        final int[] codes = new int[steps.length + gaps.length];
        int n = 0;
        for (int i = gaps.length - 1; i >= 0; i--) {
            codes[n++] = -(gaps[i] + 2);
        }
        for (int i = steps.length - 1; i >= 0; i--) {
            codes[n++] = steps[i] + 1;
        }
        return codes;
    }
}
