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

/** Unordered funnels on PostHog's own test cases (test_funnel_unordered.py). */
class UnorderedFunnelTest {
    private static final long DAY = Duration.ofDays(1).toNanos() / 1000;
    private static final AtomicInteger UUIDS = new AtomicInteger();

    @Test
    void stepsCountDistinctStepsInAnyOrder() {
        // test_basic_unordered_funnel: [signup, pageview, insight, crying]; -1 events are not fed (not a step).
        final Map<String, List<FunnelEvent>> actors = new LinkedHashMap<>();
        actors.put("p1", sequence(0));
        actors.put("p2", sequence(1, 3));
        actors.put("p3", sequence(0, 1, 2));
        actors.put("p4", sequence(2, 3, 0));
        actors.put("p5", sequence(1, 0, 3, 2));
        actors.put("p6", sequence(2));
        actors.put("p7", sequence(1));
        actors.put("p8", sequence(2, 1));
        final UnorderedFunnel funnel = new UnorderedFunnel(4, 14 * DAY);
        final List<FunnelSteps.Step> steps = FunnelSteps.of(4, actors.values().stream().map(funnel::evaluate).toList());
        assertThat(steps.stream().mapToLong(FunnelSteps.Step::count)).containsExactly(8L, 5L, 3L, 1L);
        assertThat(funnel.evaluate(actors.get("p8")).stepReached()).isEqualTo(1);
    }

    @Test
    void theFirstFullConversionGivesTheTimes() {
        // test_funnel_step_conversion_times (unordered, window one day).
        final UnorderedFunnel funnel = new UnorderedFunnel(3, DAY);
        final List<FunnelOutcome> outcomes = new ArrayList<>();
        outcomes.add(funnel.evaluate(List.of(at("2021-05-02T00:00:00Z", 0))));
        outcomes.add(funnel.evaluate(List.of(at("2021-05-02T00:00:00Z", 1), at("2021-05-02T01:00:00Z", 0))));
        outcomes.add(funnel.evaluate(List.of(at("2021-05-02T00:00:00Z", 2), at("2021-05-02T02:00:00Z", 0),
                at("2021-05-02T04:00:00Z", 1), at("2021-05-03T00:00:00Z", 1), at("2021-05-03T03:00:00Z", 2),
                at("2021-05-03T06:00:00Z", 0))));
        final List<FunnelSteps.Step> steps = FunnelSteps.of(3, outcomes);
        assertThat(steps.stream().mapToLong(FunnelSteps.Step::count)).containsExactly(3L, 2L, 1L);
        assertThat(steps.get(1).average()).contains(5400.0);
        assertThat(steps.get(2).average()).contains(7200.0);
    }

    @Test
    void coverageCountsOnlyWithinTheWindow() {
        final UnorderedFunnel funnel = new UnorderedFunnel(3, DAY);
        // Two steps two days apart never cover together; the third day's pair does.
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-03T00:00:00Z", 1))).stepReached()).isZero();
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-03T00:00:00Z", 1),
                at("2021-05-03T05:00:00Z", 2))).timings()).containsExactly(18000.0);
        // The window's edge is inclusive.
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), at("2021-05-02T00:00:00Z", 1))).stepReached()).isEqualTo(1);
    }

    @Test
    void anExclusionClearsWhatWasCovered() {
        final UnorderedFunnel funnel = new UnorderedFunnel(3, DAY);
        final FunnelEvent exclusion = new FunnelEvent(micros("2021-05-01T01:00:00Z"), "x", new int[0], new int[] {0, 1});
        assertThat(funnel.evaluate(List.of(at("2021-05-01T00:00:00Z", 0), exclusion, at("2021-05-01T02:00:00Z", 1)))
                .stepReached()).as("step two comes after the exclusion cleared step one").isZero();
        assertThat(funnel.evaluate(List.of(exclusion)).stepReached()).isEqualTo(-1);
    }

    private static List<FunnelEvent> sequence(final int... steps) {
        final List<FunnelEvent> events = new ArrayList<>();
        for (int i = 0; i < steps.length; i++) {
            events.add(new FunnelEvent(micros("2021-05-01T00:00:00Z") + 60_000_000L * i, "e" + UUIDS.incrementAndGet(),
                    new int[] {steps[i]}, new int[0]));
        }
        return events;
    }

    private static FunnelEvent at(final String time, final int... steps) {
        return new FunnelEvent(micros(time), "e" + UUIDS.incrementAndGet(), steps, new int[0]);
    }

    private static long micros(final String time) {
        return Instant.parse(time).toEpochMilli() * 1000;
    }
}
