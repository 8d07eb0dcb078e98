package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Funnel partials as bytes between instances: they round-trip, merge to the single-partial answer, and refuse garbage. */
class FunnelPartialTest {
    private static final Instant NOW = Instant.parse("2021-06-30T00:00:00Z");
    private static final String TIME_TO_CONVERT = "{\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1}],"
            + "\"date_from\":\"2021-06-07\",\"date_to\":\"2021-06-13\",\"funnel_window_interval\":7,\"funnel_window_interval_unit\":\"day\","
            + "\"funnel_viz_type\":\"time_to_convert\"}";

    private static Journeys conversions() {
        // test_funnel_time_to_convert: a converts in 1 h, b in 37 min, c in 23 h.
        return new Journeys()
                .event("a", "step one", "2021-06-08T18:00").event("a", "step two", "2021-06-08T19:00")
                .event("b", "step one", "2021-06-09T13:00").event("b", "step two", "2021-06-09T13:37")
                .event("c", "step one", "2021-06-11T07:00").event("c", "step two", "2021-06-12T06:00");
    }

    @Test
    void timeToConvertSplitOverPartialsIsTheSame() {
        assertThat(conversions().runBoth(TIME_TO_CONVERT, NOW).get("bins").toString()).isEqualTo("[[2220,2],[42510,0],[82800,1]]");
    }

    @Test
    void aPartialRoundTrips() {
        final Journeys journeys = FunnelBreakdownTest.groupJourneys("buy");
        for (final String query : List.of(
                "{\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"buy\",\"order\":1}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\","
                        + "\"breakdown\":[\"$browser\"]}",
                "{\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"buy\",\"order\":1}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\","
                        + "\"aggregation_group_type_index\":0,\"exclusions\":[{\"id\":\"play movie\",\"funnel_from_step\":0,\"funnel_to_step\":1}]}",
                "{\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"buy\",\"order\":1}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\","
                        + "\"funnel_viz_type\":\"trends\"}")) {
            final FunnelQuery funnel = journeys.parse(query, NOW);
            final FunnelQuery.Partial partial = journeys.fill(funnel, funnel.partial(), NOW);
            final byte[] bytes = partial.encode();
            final FunnelQuery.Partial decoded = funnel.decode(bytes);
            assertThat(decoded.encode()).as(query).isEqualTo(bytes);
            assertThat(funnel.result(decoded)).as(query).isEqualTo(funnel.result(partial));
            assertThat(funnel.result(funnel.partial().merge(decoded))).as(query).isEqualTo(funnel.result(partial));
        }
    }

    @Test
    void garbageIsRefused() {
        final Journeys journeys = conversions();
        final FunnelQuery funnel = journeys.parse(TIME_TO_CONVERT, NOW);
        final byte[] bytes = journeys.fill(funnel, funnel.partial(), NOW).encode();
        assertThatThrownBy(() -> funnel.decode(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> funnel.decode(new byte[] {9, 0, 0, 0, 0})).hasMessage("not a funnel partial of version 3");
        assertThatThrownBy(() -> funnel.decode(Arrays.copyOf(bytes, bytes.length - 3))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> funnel.decode(Arrays.copyOf(bytes, bytes.length + 1))).hasMessage("trailing bytes after a funnel partial");
        assertThatThrownBy(() -> funnel.decode(new byte[] {3, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}))
                .hasMessage("funnel partial has a count past its end");
        // A partial of a three-step funnel names steps a two-step one does not have.
        final FunnelQuery three = journeys.parse(TIME_TO_CONVERT.replace("{\"id\":\"step two\",\"order\":1}",
                "{\"id\":\"step two\",\"order\":1},{\"id\":\"step three\",\"order\":2}").replace("\"funnel_viz_type\":\"time_to_convert\"",
                "\"funnel_viz_type\":\"steps\""), NOW);
        final FunnelQuery.Partial threeSteps = three.partial();
        threeSteps.outcomes.put(List.of(), List.of(FunnelOutcome.reached(2, new double[] {1, 2})));
        assertThatThrownBy(() -> funnel.decode(threeSteps.encode())).hasMessageContaining("step the funnel does not have");
        final FunnelQuery.Partial threeTallied = three.partial();
        threeTallied.add(FunnelTally.of(3, List.of(FunnelOutcome.reached(2, new double[] {1, 2}))));
        assertThatThrownBy(() -> funnel.decode(threeTallied.encode())).hasMessageContaining("tally of another number of steps");
    }

    @Test
    void actorsSummedUpAnswerAsActorsListed() {
        // A kept funnel's persons travel as a tally: the same steps, counts, average and median times.
        final Journeys journeys = conversions().event("d", "step one", "2021-06-10T10:00").event("e", "step one", "2021-06-10T11:00")
                .event("e", "step two", "2021-06-10T11:00");
        final FunnelQuery steps = journeys.parse(TIME_TO_CONVERT.replace("time_to_convert", "steps"), NOW);
        assertThat(steps.tallied()).isTrue();
        final FunnelQuery.Partial listed = journeys.fill(steps, steps.partial(), NOW);
        final List<FunnelOutcome> outcomes = listed.outcomes.get(List.of());
        assertThat(outcomes).hasSize(5);
        final FunnelQuery.Partial summed = steps.partial();
        summed.add(FunnelTally.of(2, outcomes.subList(0, 3)));
        final FunnelQuery.Partial rest = steps.partial();
        rest.outcomes.put(List.of(), List.copyOf(outcomes.subList(3, 5)));
        final FunnelQuery.Partial decoded = steps.decode(summed.merge(rest).encode());
        assertThat(steps.result(decoded)).isEqualTo(steps.result(listed));
        // Five entered, four converted, one at the same instant (no time): 37 min, 1 h, 23 h.
        assertThat(steps.result(decoded).get(1).path("count").asLong()).isEqualTo(4);
        assertThat(steps.result(decoded).get(1).path("median_conversion_time").asDouble()).isEqualTo(3600.0);
        assertThat(steps.result(decoded).get(1).path("average_conversion_time").asDouble()).isEqualTo((2220.0 + 3600 + 82800) / 3);
        assertThat(journeys.parse(TIME_TO_CONVERT, NOW).tallied()).as("time to convert needs each actor's times").isFalse();
    }
}
