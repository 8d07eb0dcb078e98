package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The persons behind a funnel's numbers, on PostHog's own cases ({@code funnels/test/test_funnel_persons.py} and
 * {@code test_funnel_trends_persons.py}): who completed a step, who dropped off before it, custom step counts,
 * breakdown values, and a funnel trend's entrants; each also listed from two partials sent as bytes.
 */
class FunnelActorsTest {
    private static final Instant NOW = Instant.parse("2021-06-01T00:00:00Z");
    private static final String THREE_STEPS = "\"date_from\":\"2021-05-01 00:00:00\",\"date_to\":\"2021-05-07 00:00:00\",\"funnel_window_days\":7,"
            + "\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1},{\"id\":\"step three\",\"order\":2}]";

    /** {@code _create_sample_data_multiple_dropoffs}: 5 persons complete three steps, 10 two, 20 one. */
    private static Journeys multipleDropoffs() {
        final Journeys journeys = new Journeys();
        for (int i = 0; i < 35; i++) {
            final String person = String.format("user_%02d", i);
            journeys.event(person, "step one", "2021-05-01T00:00");
            if (i < 15) {
                journeys.event(person, "step two", "2021-05-03T00:00");
            }
            if (i < 5) {
                journeys.event(person, "step three", "2021-05-05T00:00");
            }
        }
        return journeys;
    }

    private static String steps(final String extra) {
        return "{" + THREE_STEPS + "," + extra + "}";
    }

    @Test
    void convertedAndDroppedPersonsOfEachStep() {
        final Journeys journeys = multipleDropoffs();
        // test_first_step, test_last_step, test_second_step_dropoff, test_last_step_dropoff
        assertThat(journeys.actors(steps("\"funnel_step\":1"), NOW)).hasSize(35);
        assertThat(journeys.actors(steps("\"funnel_step\":3"), NOW)).containsExactly("user_00", "user_01", "user_02", "user_03", "user_04");
        assertThat(journeys.actors(steps("\"funnel_step\":-2"), NOW)).hasSize(20).allMatch(p -> p.compareTo("user_15") >= 0);
        assertThat(journeys.actors(steps("\"funnel_step\":-3"), NOW)).hasSize(10).contains("user_05", "user_14").doesNotContain("user_04");
        assertThat(journeys.actors(steps("\"funnel_step\":\"2\""), NOW)).as("a query parameter's text").hasSize(15);
    }

    @Test
    void customStepsAreExactCountsOfStepsCompleted() {
        final Journeys journeys = multipleDropoffs();
        // test_steps_with_custom_steps_parameter_are_equivalent_to_funnel_step
        final Object[][] equivalent = {{1, "[1,2,3]", 35}, {2, "[2,3]", 15}, {3, "[3]", 5}, {-2, "[1]", 20}, {-3, "[2]", 10}};
        for (final Object[] c : equivalent) {
            final List<String> byStep = journeys.actors(steps("\"funnel_step\":" + c[0]), NOW);
            assertThat(journeys.actors(steps("\"funnel_custom_steps\":" + c[1]), NOW)).isEqualTo(byStep).hasSize((int) c[2]);
        }
        // test_steps_with_custom_steps_parameter_where_funnel_step_equivalence_isnt_possible
        assertThat(journeys.actors(steps("\"funnel_custom_steps\":[1,2]"), NOW)).hasSize(30);
        assertThat(journeys.actors(steps("\"funnel_custom_steps\":[1,3]"), NOW)).hasSize(25);
        assertThat(journeys.actors(steps("\"funnel_custom_steps\":[3,1]"), NOW)).hasSize(25);
        assertThat(journeys.actors(steps("\"funnel_custom_steps\":[1,3,3,1]"), NOW)).hasSize(25);
        // test_steps_with_custom_steps_parameter_overrides_funnel_step
        assertThat(journeys.actors(steps("\"funnel_step\":1,\"funnel_custom_steps\":[3]"), NOW)).hasSize(5);
    }

    @Test
    void pagesFollowTheIdOrder() {
        // test_basic_offset: 110 persons through every step, 100 a page.
        final Journeys journeys = new Journeys();
        for (int i = 0; i < 110; i++) {
            final String person = String.format("user_%03d", i);
            journeys.event(person, "step one", "2021-05-01T00:00").event(person, "step two", "2021-05-03T00:00")
                    .event(person, "step three", "2021-05-05T00:00");
        }
        final List<String> first = journeys.actors(steps("\"funnel_step\":1"), NOW);
        assertThat(first).hasSize(100).startsWith("user_000").endsWith("user_099");
        assertThat(journeys.actors(steps("\"funnel_step\":1,\"offset\":100"), NOW)).hasSize(10).startsWith("user_100").endsWith("user_109");
        assertThat(journeys.actorCount(steps("\"funnel_step\":1,\"offset\":100"), NOW)).isEqualTo(110);
    }

    /** {@code _create_browser_breakdown_events}. */
    private static Journeys browsers() {
        return new Journeys()
                .person("person1", "{\"$country\":\"PL\"}")
                .person("person2", "{\"$country\":\"EE\"}")
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\",\"$browser_version\":\"95\"}")
                .event("person1", "play movie", "2020-01-01T13:00", "{\"$browser\":\"Chrome\",\"$browser_version\":\"95\"}")
                .event("person1", "buy", "2020-01-01T15:00", "{\"$browser\":\"Chrome\",\"$browser_version\":\"95\"}")
                .event("person2", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Safari\",\"$browser_version\":\"14\"}")
                .event("person2", "play movie", "2020-01-02T16:00", "{\"$browser\":\"Safari\",\"$browser_version\":\"14\"}");
    }

    private static String browserFunnel(final String extra) {
        return "{\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\",\"funnel_window_days\":7,\"funnel_step\":1,"
                + "\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"play movie\",\"order\":1},{\"id\":\"buy\",\"order\":2}]," + extra + "}";
    }

    @Test
    void aBreakdownValuesPersons() {
        final Journeys journeys = browsers();
        final Instant now = Instant.parse("2020-02-01T00:00:00Z");
        // test_first_step_breakdowns
        final String browser = "\"breakdown_type\":\"event\",\"breakdown\":\"$browser\"";
        assertThat(journeys.actors(browserFunnel(browser), now)).containsExactly("person1", "person2");
        assertThat(journeys.actors(browserFunnel(browser + ",\"funnel_step_breakdown\":\"Chrome\""), now)).containsExactly("person1");
        assertThat(journeys.actors(browserFunnel(browser + ",\"funnel_step_breakdown\":[\"Safari\"]"), now)).containsExactly("person2");
        assertThat(journeys.actors(browserFunnel(browser + ",\"funnel_step_breakdown\":\"Opera\""), now)).isEmpty();
        // test_first_step_breakdowns_with_multi_property_breakdown
        final String both = "\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\",\"$browser_version\"]";
        assertThat(journeys.actors(browserFunnel(both + ",\"funnel_step_breakdown\":[\"Chrome\",\"95\"]"), now)).containsExactly("person1");
        assertThat(journeys.actors(browserFunnel(both + ",\"funnel_step_breakdown\":[\"Safari\",14]"), now)).containsExactly("person2");
        // test_first_step_breakdown_person, with custom steps giving the same
        final String country = "\"breakdown_type\":\"person\",\"breakdown\":\"$country\"";
        assertThat(journeys.actors(browserFunnel(country), now)).containsExactly("person1", "person2");
        assertThat(journeys.actors(browserFunnel(country + ",\"funnel_step_breakdown\":\"EE\""), now)).containsExactly("person2");
        assertThat(journeys.actors(browserFunnel(country + ",\"funnel_step_breakdown\":\"EE\",\"funnel_custom_steps\":[1,2,3]"), now))
                .containsExactly("person2");
        assertThat(journeys.actors(browserFunnel(country + ",\"funnel_step_breakdown\":\"PL\""), now)).containsExactly("person1");
        // Past the limit, the values shown as Other: Safari has fewer at the last step, so it is Other with a limit of 1.
        assertThat(journeys.actors(browserFunnel(browser + ",\"breakdown_limit\":1,\"funnel_step_breakdown\":\"Other\""), now))
                .containsExactly("person2");
        assertThat(journeys.actors(browserFunnel(browser + ",\"breakdown_limit\":1,\"funnel_step_breakdown\":\"Safari\""), now)).isEmpty();
    }

    @Test
    void aFunnelTrendsEntrantsWhoConvertedOrDroppedOff() {
        // test_funnel_trends_persons: user_one enters on 1 May and completes every step; user_two only enters.
        final Journeys journeys = new Journeys()
                .event("user_one", "step one", "2021-05-01T00:00").event("user_one", "step two", "2021-05-02T00:00")
                .event("user_one", "step three", "2021-05-03T00:00")
                .event("user_two", "step one", "2021-05-01T10:00");
        final String trend = "{\"funnel_viz_type\":\"trends\",\"interval\":\"day\",\"date_from\":\"2021-05-01 00:00:00\","
                + "\"date_to\":\"2021-05-07 23:59:59\",\"funnel_window_days\":14,\"funnel_from_step\":0,"
                + "\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1},{\"id\":\"step three\",\"order\":2}],";
        assertThat(journeys.actors(trend + "\"funnel_to_step\":1,\"entrance_period_start\":\"2021-05-01 00:00:00\",\"drop_off\":false}", NOW))
                .containsExactly("user_one");
        assertThat(journeys.actors(trend + "\"entrance_period_start\":\"2021-05-01 00:00:00\",\"drop_off\":false}", NOW)).containsExactly("user_one");
        assertThat(journeys.actors(trend + "\"entrance_period_start\":\"2021-05-01\",\"drop_off\":true}", NOW)).containsExactly("user_two");
        assertThat(journeys.actors(trend + "\"entrance_period_start\":\"2021-05-02 00:00:00\",\"drop_off\":\"false\"}", NOW)).isEmpty();
    }

    @Test
    void whatCannotBeListedIsRefusedByName() {
        final Journeys journeys = multipleDropoffs();
        assertThatThrownBy(() -> journeys.actors(steps("\"limit\":5"), NOW)).hasMessageContaining("funnel_step is required");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_step\":-1"), NOW)).hasMessageContaining("funnel_step -2");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_step\":4"), NOW)).hasMessageContaining("between 1 and 3");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_step\":\"two\""), NOW)).hasMessageContaining("funnel_step must be a number");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_custom_steps\":[\"x\"]"), NOW)).hasMessageContaining("funnel_custom_steps");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_viz_type\":\"trends\""), NOW)).hasMessageContaining("entrance_period_start");
        assertThatThrownBy(() -> journeys.actors(steps("\"funnel_step\":1,\"aggregation_group_type_index\":0"), NOW)).hasMessageContaining("groups");
    }
}
