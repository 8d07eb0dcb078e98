package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.eddy.funnels.FunnelCorrelation.Counts;
import dev.eddy.funnels.FunnelCorrelation.Odds;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** PostHog's odds ratios, significance and ordering ({@code get_entity_odds_ratio}, {@code are_results_insignificant}). */
class FunnelCorrelationTest {
    @Test
    void oddsRatioAddsOnePriorActorToEveryCell() {
        // PostHog's test_basic_funnel_correlation_with_events: 10 successes, 10 failures.
        assertThat(FunnelCorrelation.oddsRatio(new Counts(5, 0), 10, 10)).isEqualTo(11.0);
        assertThat(FunnelCorrelation.oddsRatio(new Counts(0, 5), 10, 10)).isCloseTo(1.0 / 11, within(1e-15));
        // test_event_correlation_endpoint_picks_up_events_for_odds_ratios: (1 + 1)(1 - 1 + 1) / ((2 - 1 + 1)(1 + 1)).
        assertThat(FunnelCorrelation.oddsRatio(new Counts(1, 1), 2, 1)).isEqualTo(0.5);
        // A candidate every actor has: the prior alone decides.
        assertThat(FunnelCorrelation.oddsRatio(new Counts(3, 1), 3, 1)).isEqualTo(4.0 * 1 / (1 * 2));
    }

    @Test
    void candidatesOfFewerThanTwentyFiveActorsOrTwoPercentAreLeftOut() {
        // 20 actors: 2% is 0.4, so one actor is enough.
        assertThat(FunnelCorrelation.insignificant(new Counts(1, 0), 10, 10)).isFalse();
        assertThat(FunnelCorrelation.insignificant(new Counts(0, 0), 10, 10)).isTrue();
        // 2,000 actors: 2% is 40, so the count of 25 decides.
        assertThat(FunnelCorrelation.insignificant(new Counts(12, 12), 1000, 1000)).isTrue();
        assertThat(FunnelCorrelation.insignificant(new Counts(13, 12), 1000, 1000)).isFalse();
        // 1,000 actors: 2% is 20.
        assertThat(FunnelCorrelation.insignificant(new Counts(10, 9), 500, 500)).isTrue();
        assertThat(FunnelCorrelation.insignificant(new Counts(10, 10), 500, 500)).isFalse();
    }

    @Test
    void successesComeFirstDescendingThenFailuresAscending() {
        final Map<String, Counts> candidates = new LinkedHashMap<>();
        // PostHog's test_correlation_with_multiple_properties: 16 successes, 6 failures.
        candidates.put("$nice::smh", new Counts(0, 5));
        candidates.put("$browser::Positive", new Counts(15, 1));
        candidates.put("$nice::", new Counts(1, 1));
        candidates.put("$nice::very", new Counts(5, 0));
        candidates.put("$browser::Negative", new Counts(1, 5));
        candidates.put("$nice::not", new Counts(10, 0));
        final FunnelCorrelation.Result result = FunnelCorrelation.of(candidates, 16, 6);
        assertThat(result.skewed()).isFalse();
        assertThat(result.events()).extracting(Odds::name).containsExactly("$browser::Positive", "$nice::not", "$nice::very", "$nice::smh",
                "$browser::Negative", "$nice::");
        assertThat(result.events()).extracting(Odds::success).containsExactly(true, true, true, false, false, false);
        final double[] expected = {(16.0 / 2) * ((7.0 - 1) / (17 - 15)), (11.0 / 1) * ((7.0 - 0) / (17 - 10)), (6.0 / 1) * ((7.0 - 0) / (17 - 5)),
            (1.0 / 6) * ((7.0 - 5) / (17 - 0)), (2.0 / 6) * ((7.0 - 5) / (17 - 1)), (2.0 / 2) * ((7.0 - 1) / (17 - 1))};
        for (int i = 0; i < expected.length; i++) {
            assertThat(result.events().get(i).oddsRatio()).isCloseTo(expected[i], within(1e-12));
        }
    }

    @Test
    void anOddsRatioOfExactlyOneIsAFailure() {
        final FunnelCorrelation.Result result = FunnelCorrelation.of(Map.of("even", new Counts(1, 1)), 2, 2);
        assertThat(result.events()).containsExactly(new Odds("even", 1, 1, 1.0, false));
    }

    @Test
    void tenOfEachDirectionAtMost() {
        final Map<String, Counts> candidates = new LinkedHashMap<>();
        for (int i = 0; i < 15; i++) {
            candidates.put("up" + i, new Counts(10 + i, 0));
            candidates.put("down" + i, new Counts(0, 10 + i));
        }
        final List<Odds> events = FunnelCorrelation.of(candidates, 100, 100).events();
        assertThat(events).hasSize(20);
        assertThat(events.subList(0, 10)).extracting(Odds::name).containsExactly("up14", "up13", "up12", "up11", "up10", "up9", "up8", "up7",
                "up6", "up5");
        assertThat(events.subList(10, 20)).extracting(Odds::name).containsExactly("down14", "down13", "down12", "down11", "down10", "down9",
                "down8", "down7", "down6", "down5");
    }

    @Test
    void equalRatiosAreOrderedByName() {
        final Map<String, Counts> candidates = new LinkedHashMap<>();
        candidates.put("b", new Counts(3, 0));
        candidates.put("a", new Counts(3, 0));
        assertThat(FunnelCorrelation.of(candidates, 5, 5).events()).extracting(Odds::name).containsExactly("a", "b");
    }

    @Test
    void totalsMoreThanTenTimesApartAreSkewed() {
        assertThat(FunnelCorrelation.of(Map.of(), 10, 1).skewed()).isFalse();
        assertThat(FunnelCorrelation.of(Map.of(), 11, 1).skewed()).isTrue();
        assertThat(FunnelCorrelation.of(Map.of(), 1, 11).skewed()).isTrue();
        assertThat(FunnelCorrelation.of(Map.of(), 3, 30).skewed()).isFalse();
    }

    @Test
    void noSuccessOrNoFailureAnswersNothingSkewed() {
        assertThat(FunnelCorrelation.of(Map.of("a", new Counts(3, 0)), 3, 0)).isEqualTo(new FunnelCorrelation.Result(List.of(), true));
        assertThat(FunnelCorrelation.of(Map.of("a", new Counts(0, 3)), 0, 3)).isEqualTo(new FunnelCorrelation.Result(List.of(), true));
        assertThat(FunnelCorrelation.of(Map.of(), 0, 0)).isEqualTo(new FunnelCorrelation.Result(List.of(), true));
    }
}
