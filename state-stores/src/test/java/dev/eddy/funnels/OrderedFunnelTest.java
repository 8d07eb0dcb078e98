package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Ordered and strict funnels on PostHog's own test cases (test_funnel.py, test_funnel_strict.py). */
class OrderedFunnelTest {
    private static final long DAY = Duration.ofDays(1).toNanos() / 1000;
    private static final AtomicInteger UUIDS = new AtomicInteger();

    @Test
    void theWindowIsInclusiveAndMeasuredFromTheFirstStep() {
        // test_funnel_conversion_window: 10 users convert after a day, 15 after nine; a 7-day window.
        final Map<String, List<FunnelEvent>> actors = new LinkedHashMap<>();
        for (int u = 0; u < 25; u++) {
            actors.put("user" + u, List.of(at("2021-05-01T00:00:00Z", 0), at(u < 10 ? "2021-05-02T00:00:00Z" : "2021-05-10T00:00:00Z", 1)));
        }
        assertThat(counts(3, 7 * DAY, false, actors)).containsExactly(25L, 10L, 0L);

        // Seconds: +10 s converts in a 15 s window, +20 s does not; exactly the window's length still does.
        final Map<String, List<FunnelEvent>> seconds = new LinkedHashMap<>();
        for (int u = 0; u < 25; u++) {
            seconds.put("user" + u, List.of(at("2021-05-01T00:00:00Z", 0), at(u < 10 ? "2021-05-01T00:00:10Z" : "2021-05-01T00:00:20Z", 1)));
        }
        assertThat(counts(3, 15_000_000L, false, seconds)).containsExactly(25L, 10L, 0L);
        assertThat(funnel(2, 10_000_000L, false).evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-01T00:00:10Z", 1)))
                .stepReached()).isEqualTo(1);
    }

    @Test
    void anExclusionInsideTheWindowRemovesTheActor() {
        // test_funnel_exclusion_no_end_event: [signup, paid], exclusion x between them, window one day.
        final Map<String, List<FunnelEvent>> actors = new LinkedHashMap<>();
        actors.put("p1", List.of(at("2021-05-01T01:00:00Z", 0), at("2021-05-01T02:00:00Z", 1)));
        actors.put("p2", List.of(at("2021-05-01T03:00:00Z", 0), excluded("2021-05-01T03:30:00Z", 0), at("2021-05-01T04:00:00Z", 1)));
        actors.put("p3", List.of(at("2021-05-01T05:00:00Z", 0), excluded("2021-05-01T06:00:00Z", 0)));
        actors.put("p4", List.of(at("2021-05-01T07:00:00Z", 0), excluded("2021-05-02T08:00:00Z", 0)));
        final OrderedFunnel funnel = funnel(2, DAY, false);
        assertThat(funnel.evaluate(actors.get("p2"))).isEqualTo(FunnelOutcome.EXCLUDED);
        assertThat(funnel.evaluate(actors.get("p3"))).isEqualTo(FunnelOutcome.EXCLUDED);
        assertThat(funnel.evaluate(actors.get("p4")).stepReached()).as("the exclusion came after the window").isZero();
        assertThat(counts(2, DAY, false, actors)).containsExactly(2L, 1L);

        // test_excluded_after_time_expires: neither the exclusion nor step two is within 10 s.
        assertThat(counts(2, 10_000_000L, false, Map.of("p", List.of(at("2021-05-01T00:00:00Z", 0),
                excluded("2021-05-01T00:00:11Z", 0), at("2021-05-01T00:00:12Z", 1))))).containsExactly(1L, 0L);
    }

    @Test
    void everyoneExcludedIsAnEmptyFunnel() {
        assertThat(FunnelSteps.of(2, List.of(funnel(2, DAY, false).evaluate(List.of(at("2021-05-01T00:00:00Z", 0),
                excluded("2021-05-01T01:00:00Z", 0)))))).isEmpty();
    }

    @Test
    void strictFunnelsEndAnAttemptAtAnyOtherEvent() {
        // test_basic_strict_funnel: [user signed up, $pageview, insight viewed]; -1 is an unrelated event.
        final Map<String, List<FunnelEvent>> actors = new LinkedHashMap<>();
        actors.put("p1", sequence(0));
        actors.put("p2", sequence(1, 0));
        actors.put("p3", sequence(0, 1, -1, 2));
        actors.put("p4", sequence(2, -1, 1, 0));
        actors.put("p5", sequence(1, 0, -1, 1, 2));
        actors.put("p6", sequence(-1, 0, -1, 1));
        actors.put("p7", sequence(-1, 0, 1, 2, -1));
        actors.put("p8", sequence(2, 1));
        final OrderedFunnel strict = funnel(3, 14 * DAY, true);
        assertThat(counts(3, 14 * DAY, true, actors)).containsExactly(7L, 2L, 1L);
        assertThat(strict.evaluate(actors.get("p3")).stepReached()).isEqualTo(1);
        assertThat(strict.evaluate(actors.get("p7")).stepReached()).isEqualTo(2);
        assertThat(strict.evaluate(actors.get("p8"))).isEqualTo(FunnelOutcome.NOT_ENTERED);
        // The same events in an ordered funnel: the unrelated ones do not matter.
        assertThat(funnel(3, 14 * DAY, false).evaluate(actors.get("p5")).stepReached()).isEqualTo(2);
    }

    @Test
    void conversionTimesLeaveOutZeroSecondsAndTheFirstStep() {
        // test_funnel_step_conversion_times (strict): 1 h and 2 h to step two, 2 h to step three.
        final List<FunnelOutcome> outcomes = new ArrayList<>();
        final OrderedFunnel strict = funnel(3, 14 * DAY, true);
        outcomes.add(strict.evaluate(List.of(at("2021-05-02T00:00:00Z", 0), at("2021-05-02T01:00:00Z", 1))));
        outcomes.add(strict.evaluate(List.of(at("2021-05-02T00:00:00Z", 0), at("2021-05-02T02:00:00Z", 1), at("2021-05-02T04:00:00Z", 2))));
        final List<FunnelSteps.Step> steps = FunnelSteps.of(3, outcomes);
        assertThat(steps.get(0).average()).isEmpty();
        assertThat(steps.get(1).average()).contains(5400.0);
        assertThat(steps.get(1).median()).contains(5400.0);
        assertThat(steps.get(2).average()).contains(7200.0);
        assertThat(steps.get(2).count()).isEqualTo(1);

        // Two steps at the same instant: counted, but the zero-second conversion takes no part in the times.
        final OrderedFunnel ordered = funnel(2, DAY, false);
        final List<FunnelSteps.Step> instant = FunnelSteps.of(2, List.of(
                ordered.evaluate(List.of(new FunnelEvent(0, "a", new int[] {0}, new int[0]), new FunnelEvent(0, "b", new int[] {1}, new int[0]))),
                ordered.evaluate(List.of(at("2021-05-02T00:00:00Z", 0), at("2021-05-02T00:00:30Z", 1)))));
        assertThat(instant.get(1).count()).isEqualTo(2);
        assertThat(instant.get(1).average()).contains(30.0);
    }

    @Test
    void aRepeatedStepNeedsTwoEvents() {
        // [signup, signup]: one signup reaches step one only; two reach both (test_funnel_with_repeat_steps).
        final OrderedFunnel funnel = funnel(2, 14 * DAY, false);
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0, 1))).stepReached()).isZero();
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0, 1), at("2021-05-01T01:00:00Z", 0, 1))).stepReached()).isEqualTo(1);
        // Any-event funnel, three steps: actors with 1, 2, 2, 1 and 3 events.
        final Map<String, List<FunnelEvent>> actors = new LinkedHashMap<>();
        final int[] sizes = {1, 2, 2, 1, 3};
        for (int a = 0; a < sizes.length; a++) {
            final List<FunnelEvent> events = new ArrayList<>();
            for (int e = 0; e < sizes[a]; e++) {
                events.add(at("2021-05-01T0" + e + ":00:00Z", 0, 1, 2));
            }
            actors.put("a" + a, events);
        }
        assertThat(counts(3, 14 * DAY, false, actors)).containsExactly(5L, 3L, 1L);
    }

    @Test
    void theLatestStartOfAStepIsTheOneThatGoesOn() {
        // Two starts before the conversion: the later one is kept for step one, so its time counts.
        final OrderedFunnel funnel = funnel(2, DAY, false);
        final FunnelOutcome outcome = funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-01T01:00:00Z", 0),
                at("2021-05-01T02:00:00Z", 1)));
        assertThat(outcome.timings()).containsExactly(3600.0);
        // A start that cannot convert within the window is superseded by a later one that can.
        final FunnelOutcome later = funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-03T00:00:00Z", 0),
                at("2021-05-03T05:00:00Z", 1)));
        assertThat(later.stepReached()).isEqualTo(1);
        assertThat(later.timings()).containsExactly(18000.0);
    }

    @Test
    void oneEventFillsOneStepOfAnAttemptEvenAmongEventsOfTheSameInstant() {
        // Events of one instant matching different steps fill them in step order, each event at most one step of an attempt.
        final OrderedFunnel funnel = funnel(3, DAY, false);
        final long t = Instant.parse("2021-05-01T00:00:00Z").toEpochMilli() * 1000;
        assertThat(funnel.evaluate(List.of(new FunnelEvent(t, "a", new int[] {0, 1}, new int[0]), new FunnelEvent(t, "b", new int[] {2}, new int[0])))
                .stepReached()).as("'a' cannot be both the first and the second step").isZero();
        assertThat(funnel.evaluate(List.of(new FunnelEvent(t, "a", new int[] {0, 1}, new int[0]), new FunnelEvent(t, "c", new int[] {1}, new int[0]),
                new FunnelEvent(t, "b", new int[] {2}, new int[0]))).stepReached()).as("'c' is the second").isEqualTo(2);
        // Folded in two parts, the second strictly later: the same as at once.
        final OrderedFunnel.Run run = funnel.run();
        run.fold(List.of(new FunnelEvent(t, "a", new int[] {0, 1}, new int[0]), new FunnelEvent(t, "b", new int[] {2}, new int[0])));
        run.fold(List.of(new FunnelEvent(t + 1, "d", new int[] {1}, new int[0]), new FunnelEvent(t + 2, "e", new int[] {2}, new int[0])));
        assertThat(run.outcome().stepReached()).isEqualTo(2);
    }

    @Test
    void aRunFrozenAndThawedBetweenPartsEndsAsOneEvaluationOfAllTheEvents() {
        // Random actors of a 4-step funnel with exclusions, events often sharing an instant; folded in parts, strictly
        // later each, frozen and thawed between them (as a kept funnel's persons wait between reads).
        final java.util.Random random = new java.util.Random(7);
        for (final boolean strict : new boolean[] {false, true}) {
            final OrderedFunnel funnel = funnel(4, 3 * DAY, strict);
            for (int actor = 0; actor < 2_000; actor++) {
                final List<FunnelEvent> events = new ArrayList<>();
                long time = 1_000_000L * random.nextInt(1_000);
                for (int e = random.nextInt(1, 25); e > 0; e--) {
                    time += random.nextInt(4) == 0 ? 0 : (long) random.nextInt(1, 40) * 3_600_000_000L;
                    final int[] steps = random.nextInt(6) == 0 ? new int[0] : random.nextInt(5) == 0
                            ? new int[] {0, random.nextInt(1, 4)} : new int[] {random.nextInt(4)};
                    final int[] gaps = random.nextInt(8) == 0 ? new int[] {random.nextInt(3)} : new int[0];
                    events.add(new FunnelEvent(time, uuid(), steps, gaps));
                }
                final OrderedFunnel.Run straight = funnel.run();
                straight.fold(events);
                final long[] frozenOnce = straight.freeze();
                assertThat(funnel.thaw(frozenOnce).freeze()).as("frozen again unchanged").containsExactly(frozenOnce);

                OrderedFunnel.Run run = funnel.run();
                int from = 0;
                while (from < events.size()) {
                    int to = Math.min(events.size(), from + random.nextInt(1, 6));
                    // A part ends after the last event of an instant: the next part must come strictly later.
                    while (to < events.size() && events.get(to).timeMicros() == events.get(to - 1).timeMicros()) {
                        to++;
                    }
                    run = funnel.thaw(run.freeze());
                    run.fold(events.subList(from, to));
                    from = to;
                }
                assertThat(run.outcome()).as("actor %d (%s)", actor, strict ? "strict" : "ordered").isEqualTo(funnel.evaluate(events));
                assertThat(run.freeze()).containsExactly(frozenOnce);
            }
        }
    }

    @Test
    void aRunOfAFunnelOfManyStepsFreezesWithWiderFields() {
        // 70 steps, one event each a minute apart (a step count past a byte's room with its flags), thawed at each.
        final OrderedFunnel funnel = funnel(70, DAY, false);
        final List<FunnelEvent> events = sequence(java.util.stream.IntStream.range(0, 70).toArray());
        OrderedFunnel.Run run = funnel.run();
        for (final FunnelEvent event : events) {
            run = funnel.thaw(run.freeze());
            run.fold(List.of(event));
        }
        assertThat(run.outcome().stepReached()).isEqualTo(69);
        assertThat(run.outcome()).isEqualTo(funnel.evaluate(events));
    }

    private static long[] counts(final int steps, final long window, final boolean strict, final Map<String, List<FunnelEvent>> actors) {
        final OrderedFunnel funnel = funnel(steps, window, strict);
        final List<FunnelSteps.Step> result = FunnelSteps.of(steps, actors.values().stream().map(funnel::evaluate).toList());
        return result.stream().mapToLong(FunnelSteps.Step::count).toArray();
    }

    private static OrderedFunnel funnel(final int steps, final long window, final boolean strict) {
        return new OrderedFunnel(steps, window, strict);
    }

    /** One event per minute matching the given steps (-1: none). */
    private static List<FunnelEvent> sequence(final int... steps) {
        final List<FunnelEvent> events = new ArrayList<>();
        for (int i = 0; i < steps.length; i++) {
            final long time = Instant.parse("2021-05-01T00:00:00Z").plusSeconds(60L * i).toEpochMilli() * 1000;
            events.add(steps[i] < 0 ? new FunnelEvent(time, uuid(), new int[0], new int[0])
                    : new FunnelEvent(time, uuid(), new int[] {steps[i]}, new int[0]));
        }
        return events;
    }

    private static FunnelEvent at(final String time, final int... steps) {
        return new FunnelEvent(Instant.parse(time).toEpochMilli() * 1000, uuid(), steps, new int[0]);
    }

    private static FunnelEvent excluded(final String time, final int gap) {
        return new FunnelEvent(Instant.parse(time).toEpochMilli() * 1000, uuid(), new int[0], new int[] {gap});
    }

    private static String uuid() {
        return "e" + UUIDS.incrementAndGet();
    }
}
