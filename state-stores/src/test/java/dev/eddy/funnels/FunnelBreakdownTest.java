package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Broken-down funnels on PostHog's own cases ({@code funnels/test/breakdown_cases.py}, ordered funnels): one step
 * list per value, values ordered by how many reached the last step, then the one before; each case also run split
 * over two partials sent as bytes.
 */
class FunnelBreakdownTest {
    private static final Instant NOW = Instant.parse("2020-02-01T00:00:00Z");
    private static final String THREE_STEPS = "\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"play movie\",\"order\":1},"
            + "{\"id\":\"buy\",\"order\":2}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\",\"funnel_window_days\":7";
    private static final String TWO_STEPS = "\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"buy\",\"order\":1}],"
            + "\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\",\"funnel_window_days\":7";

    private static Journeys browsers() {
        return new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"key\":\"val\",\"$browser\":\"Chrome\"}")
                .event("person1", "play movie", "2020-01-01T13:00", "{\"key\":\"val\",\"$browser\":\"Chrome\"}")
                .event("person1", "buy", "2020-01-01T15:00", "{\"key\":\"val\",\"$browser\":\"Chrome\"}")
                .event("person2", "sign up", "2020-01-02T14:00", "{\"key\":\"val\",\"$browser\":\"Safari\"}")
                .event("person2", "play movie", "2020-01-02T16:00", "{\"key\":\"val\",\"$browser\":\"Safari\"}")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"key\":\"val\",\"$browser\":\"Safari\"}");
    }

    @Test
    void normalizedUrlsLoseTheirTrailingSeparatorsInLinearTime() {
        assertThat(dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators("https://x.test/a/?#")).isEqualTo("https://x.test/a");
        assertThat(dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators("https://x.test/a?b=1")).isEqualTo("https://x.test/a?b=1");
        assertThat(dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators("//?")).isEqualTo("/");
        assertThat(dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators("")).isEqualTo("/");
        // A million separators not at the end: the regex this replaces needed minutes; this is one pass.
        final String hostile = "/".repeat(1_000_000) + "x";
        assertThat(dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators(hostile)).isSameAs(hostile);
    }

    @Test
    void eachValueHasItsStepsWithTheValue() {
        // test_funnel_step_breakdown_event_with_string_only_breakdown
        final JsonNode result = browsers().runBoth("{" + THREE_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":\"$browser\"}", NOW);
        assertThat(summary(result)).containsExactly(
                "[\"Chrome\"] 1,1,1 avg null,3600.0,7200.0 median null,3600.0,7200.0",
                "[\"Safari\"] 2,1,0 avg null,7200.0,null median null,7200.0,null");
        final JsonNode step = result.get(0).get(1);
        assertThat(step.get("name").asText()).isEqualTo("play movie");
        assertThat(step.get("order").asInt()).isEqualTo(1);
        assertThat(step.get("breakdown_value").toString()).isEqualTo("[\"Chrome\"]");
        // A FUNNELS insight on the legacy endpoint too: a list of the one value, as PostHog's query runner answers.
        final JsonNode legacy = browsers().run("{\"insight\":\"FUNNELS\"," + THREE_STEPS
                + ",\"breakdown_type\":\"event\",\"breakdown\":\"$browser\"}", NOW);
        assertThat(legacy.get(1).get(0).get("breakdown").toString()).isEqualTo("[\"Safari\"]");
        assertThat(legacy.get(1).get(0).get("breakdown_value").toString()).isEqualTo("[\"Safari\"]");
        final JsonNode person = browsers().run("{\"insight\":\"FUNNELS\"," + THREE_STEPS
                + ",\"breakdown_type\":\"person\",\"breakdown\":\"$browser\"}", NOW);
        assertThat(person.get(0).get(0).get("breakdown_value").isArray()).isTrue();
    }

    @Test
    void aListBreakdownGivesListValues() {
        // test_funnel_step_multi_property_breakdown_event: ordered by the last step reached, then the one before.
        final Journeys journeys = new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\",\"$browser_version\":95}")
                .event("person1", "play movie", "2020-01-01T13:00", "{\"$browser\":\"Chrome\",\"$browser_version\":95}")
                .event("person1", "buy", "2020-01-01T15:00", "{\"$browser\":\"Chrome\",\"$browser_version\":95}")
                .event("person2", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Safari\",\"$browser_version\":15}")
                .event("person2", "play movie", "2020-01-02T16:00", "{\"$browser\":\"Safari\",\"$browser_version\":15}")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Safari\",\"$browser_version\":14}");
        final JsonNode result = journeys.runBoth("{" + THREE_STEPS
                + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\",\"$browser_version\"]}", NOW);
        assertThat(summary(result)).containsExactly(
                "[\"Chrome\",\"95\"] 1,1,1 avg null,3600.0,7200.0 median null,3600.0,7200.0",
                "[\"Safari\",\"15\"] 1,1,0 avg null,7200.0,null median null,7200.0,null",
                "[\"Safari\",\"14\"] 1,0,0 avg null,null,null median null,null,null");
    }

    @Test
    void personPropertiesBreakDownByTheCurrentPerson() {
        // test_funnel_step_breakdown_person
        final Journeys journeys = new Journeys()
                .person("person1", "{\"$browser\":\"Chrome\"}")
                .person("person2", "{\"$browser\":\"Safari\"}")
                .event("person1", "sign up", "2020-01-01T12:00").event("person1", "play movie", "2020-01-01T13:00")
                .event("person1", "buy", "2020-01-01T15:00")
                .event("person2", "sign up", "2020-01-02T14:00").event("person2", "play movie", "2020-01-02T16:00");
        assertThat(summary(journeys.runBoth("{" + THREE_STEPS + ",\"breakdown_type\":\"person\",\"breakdown\":[\"$browser\"]}", NOW)))
                .containsExactly("[\"Chrome\"] 1,1,1 avg null,3600.0,7200.0 median null,3600.0,7200.0",
                        "[\"Safari\"] 1,1,0 avg null,7200.0,null median null,7200.0,null");
    }

    @Test
    void valuesPastTheLimitAreSummedUpAsOther() {
        // test_funnel_step_breakdown_limit: value n has n persons who all convert; limit 5 keeps 5 to 9.
        final Journeys journeys = new Journeys();
        for (int num = 0; num < 10; num++) {
            for (int i = 0; i < num; i++) {
                final String props = "{\"some_breakdown_val\":\"" + num + "\"}";
                journeys.event("person_" + num + "_" + i, "sign up", "2020-01-01T12:00", props)
                        .event("person_" + num + "_" + i, "play movie", "2020-01-01T13:00", props)
                        .event("person_" + num + "_" + i, "buy", "2020-01-01T15:00", props);
            }
        }
        final JsonNode result = journeys.runBoth("{" + THREE_STEPS
                + ",\"breakdown_type\":\"event\",\"breakdown\":[\"some_breakdown_val\"],\"breakdown_limit\":5}", NOW);
        // Other (1 + 2 + 3 + 4 persons) has the most conversions, so it comes first.
        assertThat(values(result)).containsExactly("[\"Other\"]", "[\"9\"]", "[\"8\"]", "[\"7\"]", "[\"6\"]", "[\"5\"]");
        assertThat(result.get(0).get(2).get("count").asLong()).isEqualTo(10);

        // test_funnel_step_custom_breakdown_limit_with_nulls_included: a missing value is "", within a limit of 6.
        final Journeys nulls = new Journeys();
        for (int num = 0; num < 5; num++) {
            for (int i = 0; i < num; i++) {
                final String props = "{\"some_breakdown_val\":\"" + num + "\"}";
                nulls.event("person_" + num + "_" + i, "sign up", "2020-01-01T12:00", props)
                        .event("person_" + num + "_" + i, "play movie", "2020-01-01T13:00", props)
                        .event("person_" + num + "_" + i, "buy", "2020-01-01T15:00", props);
            }
        }
        nulls.event("person_null", "sign up", "2020-01-01T12:00").event("person_null", "play movie", "2020-01-01T13:00")
                .event("person_null", "buy", "2020-01-01T15:00");
        final JsonNode withNull = nulls.runBoth("{" + THREE_STEPS
                + ",\"breakdown_type\":\"event\",\"breakdown\":[\"some_breakdown_val\"],\"breakdown_limit\":6}", NOW);
        assertThat(values(withNull)).containsExactly("[\"4\"]", "[\"3\"]", "[\"2\"]", "[\"\"]", "[\"1\"]");
        // The default limit is 25.
        assertThat(values(journeys.run("{" + THREE_STEPS + ",\"breakdown\":[\"some_breakdown_val\"]}", NOW))).hasSize(9);
    }

    private static Journeys touches() {
        return touchesWithoutPerson5()
                .event("person5", "sign up", "2020-01-02T15:00")
                .event("person5", "buy", "2020-01-02T16:00");
    }

    private static Journeys touchesWithoutPerson5() {
        return new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\"}")
                .event("person1", "buy", "2020-01-01T13:00")
                .event("person2", "sign up", "2020-01-01T13:00")
                .event("person2", "buy", "2020-01-02T13:00", "{\"$browser\":\"Safari\"}")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Mac\"}")
                .event("person3", "buy", "2020-01-02T15:00")
                .event("person4", "sign up", "2020-01-02T15:00", "{\"$browser\":0}")
                .event("person4", "buy", "2020-01-02T16:00", "{\"$browser\":\"alakazam\"}");
    }

    @Test
    void firstTouchTakesTheFirstNonEmptyValue() {
        // test_funnel_step_breakdown_with_first_touch_attribution
        assertThat(summary(touches().runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\"],"
                + "\"breakdown_attribution_type\":\"first_touch\"}", NOW))).containsExactly(
                "[\"\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"0\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Chrome\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Mac\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Safari\"] 1,1 avg null,86400.0 median null,86400.0");
    }

    @Test
    void lastTouchTakesTheLastNonEmptyValue() {
        // test_funnel_step_breakdown_with_last_touch_attribution (there person4 buys with "Alakazam")
        assertThat(values(touches().runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\"],"
                + "\"breakdown_attribution_type\":\"last_touch\"}", NOW)))
                .containsExactly("[\"\"]", "[\"Chrome\"]", "[\"Mac\"]", "[\"Safari\"]", "[\"alakazam\"]");
    }

    @Test
    void stepAttributionTakesTheValueOfThatStepsEvent() {
        // test_funnel_step_breakdown_with_step_attribution (step 0; no person5)
        final Journeys four = touchesWithoutPerson5();
        assertThat(summary(four.runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\"],"
                + "\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":\"0\"}", NOW))).containsExactly(
                "[\"\"] 1,1 avg null,86400.0 median null,86400.0",
                "[\"0\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Chrome\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Mac\"] 1,1 avg null,3600.0 median null,3600.0");
        // test_funnel_step_breakdown_with_step_one_attribution: Chrome and Mac go, Safari comes back.
        assertThat(summary(four.runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\"],"
                + "\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":1}", NOW))).containsExactly(
                "[\"\"] 2,2 avg null,3600.0 median null,3600.0",
                "[\"Safari\"] 1,1 avg null,86400.0 median null,86400.0",
                "[\"alakazam\"] 1,1 avg null,3600.0 median null,3600.0");
    }

    @Test
    void stepAttributionDropsActorsThatNeverReachTheStep() {
        // test_funnel_step_breakdown_with_step_one_attribution_incomplete_funnel (and its non-array twin)
        final Journeys journeys = new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\"}").event("person1", "buy", "2020-01-01T13:00")
                .event("person2", "sign up", "2020-01-01T13:00")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Mac\"}")
                .event("person4", "sign up", "2020-01-02T15:00", "{\"$browser\":0}")
                .event("person4", "buy", "2020-01-02T16:00", "{\"$browser\":\"alakazam\"}");
        for (final String breakdown : List.of("[\"$browser\"]", "\"$browser\"")) {
            assertThat(summary(journeys.runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":" + breakdown
                    + ",\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":\"1\"}", NOW))).containsExactly(
                    "[\"\"] 1,1 avg null,3600.0 median null,3600.0",
                    "[\"alakazam\"] 1,1 avg null,3600.0 median null,3600.0");
        }
    }

    @Test
    void allEventsEvaluatesEachValueOverItsOwnEvents() {
        // test_funnel_step_breakdown_event_single_person_events_with_multiple_properties
        final Journeys journeys = new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\"}")
                .event("person1", "play movie", "2020-01-02T12:30", "{\"$browser\":\"Safari\"}")
                .event("person1", "sign up", "2020-01-02T13:00", "{\"$browser\":\"Safari\"}")
                .event("person1", "play movie", "2020-01-02T14:00", "{\"$browser\":\"Safari\"}");
        assertThat(summary(journeys.runBoth("{\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"play movie\",\"order\":1}],"
                + "\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\",\"funnel_window_days\":7,\"breakdown_type\":\"event\","
                + "\"breakdown\":[\"$browser\"],\"breakdown_attribution_type\":\"all_events\"}", NOW))).containsExactly(
                "[\"Safari\"] 1,1 avg null,3600.0 median null,3600.0",
                "[\"Chrome\"] 1,0 avg null,null median null,null");
    }

    @Test
    void aListFirstTouchTakesTheFirstEventWithAnyValue() {
        // test_funnel_step_multiple_breakdown_with_first_touch_attribution
        final Journeys journeys = new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\",\"$version\":\"xyz\"}")
                .event("person1", "buy", "2020-01-01T13:00")
                .event("person2", "sign up", "2020-01-01T13:00")
                .event("person2", "buy", "2020-01-02T13:00", "{\"$browser\":\"Safari\",\"$version\":\"xyz\"}")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Mac\"}")
                .event("person3", "buy", "2020-01-02T15:00", "{\"$version\":\"no-mac\"}")
                .event("person4", "sign up", "2020-01-02T15:00", "{\"$browser\":0,\"$version\":0}")
                .event("person4", "buy", "2020-01-02T16:00", "{\"$browser\":\"alakazam\"}")
                .event("person5", "sign up", "2020-01-02T15:00").event("person5", "buy", "2020-01-02T16:00");
        assertThat(values(journeys.runBoth("{" + TWO_STEPS + ",\"breakdown_type\":\"event\",\"breakdown\":[\"$browser\",\"$version\"],"
                + "\"breakdown_attribution_type\":\"first_touch\"}", NOW)))
                .containsExactly("[\"\",\"\"]", "[\"0\",\"0\"]", "[\"Chrome\",\"xyz\"]", "[\"Mac\",\"\"]", "[\"Safari\",\"xyz\"]");
    }

    @Test
    void onlyFunnelEventsGiveValues() {
        // test_funnel_breakdown_correct_breakdown_props_are_chosen (_for_step): the buy without $version is no step.
        final Journeys journeys = new Journeys()
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$browser\":\"Chrome\",\"$version\":\"xyz\"}")
                .event("person1", "buy", "2020-01-01T13:00", "{\"$browser\":\"Chrome\"}")
                .event("person2", "sign up", "2020-01-01T13:00")
                .event("person2", "buy", "2020-01-02T13:00", "{\"$browser\":\"Safari\",\"$version\":\"xyz\"}")
                .event("person3", "sign up", "2020-01-02T14:00", "{\"$browser\":\"Mac\"}")
                .event("person3", "buy", "2020-01-02T15:00", "{\"$version\":\"xyz\",\"$browser\":\"Mac\"}")
                .event("person5", "sign up", "2020-01-02T15:00").event("person5", "buy", "2020-01-02T16:00");
        final String steps = "\"events\":[{\"id\":\"sign up\",\"order\":0},{\"id\":\"buy\",\"order\":1,\"properties\":"
                + "[{\"type\":\"event\",\"key\":\"$version\",\"value\":\"xyz\"}]}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-08\","
                + "\"funnel_window_days\":7,\"breakdown_type\":\"event\",\"breakdown\":\"$browser\"";
        assertThat(values(journeys.runBoth("{" + steps + ",\"breakdown_attribution_type\":\"first_touch\"}", NOW)))
                .containsExactlyInAnyOrder("[\"Mac\"]", "[\"Chrome\"]", "[\"Safari\"]", "[\"\"]");
        assertThat(values(journeys.runBoth("{" + steps + ",\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":\"1\"}",
                NOW))).containsExactly("[\"Mac\"]", "[\"Safari\"]");
    }

    @Test
    void aGroupBreakdownByAStringIsAString() {
        // test_funnel_breakdown_group
        final JsonNode result = groupJourneys("sign up").runBoth("{" + THREE_STEPS
                + ",\"breakdown\":\"industry\",\"breakdown_type\":\"group\",\"breakdown_group_type_index\":0}", NOW);
        assertThat(summary(result)).containsExactly(
                "\"finance\" 1,1,1 avg null,3600.0,7200.0 median null,3600.0,7200.0",
                "\"technology\" 2,1,0 avg null,7200.0,null median null,7200.0,null");
    }

    @Test
    void groupsAggregatedAndBrokenDownByGroup() {
        // test_funnel_aggregate_by_groups_breakdown_group: person3's buy completes org:6's funnel.
        final JsonNode result = groupJourneys("buy").runBoth("{" + THREE_STEPS + ",\"breakdown\":\"industry\",\"breakdown_type\":\"group\","
                + "\"breakdown_group_type_index\":0,\"aggregation_group_type_index\":0}", NOW);
        assertThat(summary(result)).containsExactly(
                "\"finance\" 1,1,1 avg null,3600.0,7200.0 median null,3600.0,7200.0",
                "\"technology\" 1,1,1 avg null,7200.0,7200.0 median null,7200.0,7200.0");
    }

    static Journeys groupJourneys(final String person3Event) {
        return new Journeys()
                .group(0, "org:5", "{\"industry\":\"finance\"}").group(0, "org:6", "{\"industry\":\"technology\"}")
                .group(1, "org:5", "{\"industry\":\"random\"}")
                .event("person1", "sign up", "2020-01-01T12:00", "{\"$group_0\":\"org:5\",\"$browser\":\"Chrome\"}")
                .event("person1", "play movie", "2020-01-01T13:00", "{\"$group_0\":\"org:5\",\"$browser\":\"Chrome\"}")
                .event("person1", "buy", "2020-01-01T15:00", "{\"$group_0\":\"org:5\",\"$browser\":\"Chrome\"}")
                .event("person2", "sign up", "2020-01-02T14:00", "{\"$group_0\":\"org:6\",\"$browser\":\"Safari\"}")
                .event("person2", "play movie", "2020-01-02T16:00", "{\"$group_0\":\"org:6\",\"$browser\":\"Safari\"}")
                .event("person3", person3Event, "sign up".equals(person3Event) ? "2020-01-02T14:00" : "2020-01-02T18:00",
                        "{\"$group_0\":\"org:6\",\"$browser\":\"Safari\"}");
    }

    @Test
    void breakdownsPostHogRefusesAreRefused() {
        final Journeys none = new Journeys();
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"funnel_order_type\":\"unordered\",\"breakdown\":\"$browser\","
                + "\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":1}", NOW))
                .hasMessage("Only the first step can be used for breakdown attribution in unordered funnels");
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"breakdown\":\"$browser\",\"breakdown_attribution_type\":\"step\"}", NOW))
                .hasMessageContaining("breakdown_attribution_value");
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"breakdown\":\"$browser\",\"breakdown_attribution_type\":\"step\","
                + "\"breakdown_attribution_value\":2}", NOW)).hasMessageContaining("from 0 to 1");
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"breakdown\":\"industry\",\"breakdown_type\":\"group\"}", NOW))
                .hasMessageContaining("breakdown_group_type_index");
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"breakdown\":[1],\"breakdown_type\":\"cohort\"}", NOW))
                .hasMessage("Cohort ID 1 does not exist!");
        assertThatThrownBy(() -> none.parse("{" + TWO_STEPS + ",\"breakdown\":\"$browser\",\"breakdown_attribution_type\":\"middle\"}", NOW))
                .hasMessageContaining("breakdown_attribution_type");
    }

    @Test
    void nobodyInTheFunnelIsAnEmptyList() {
        assertThat(new Journeys().runBoth("{" + TWO_STEPS + ",\"breakdown\":\"$browser\"}", NOW).toString()).isEqualTo("[]");
    }

    /** Per funnel: its breakdown value, counts, average and median times, e.g. {@code ["Chrome"] 1,1 avg null,3600.0 ...}. */
    @Test
    void cohortsAreValuesOfTheirPersons() {
        // test_funnel_cohort_breakdown: person1 (key=value, in test_cohort) signs up; "all" and the cohort both hold them
        // with step attribution; first touch puts a person in one cohort (the first listed it is in).
        final Journeys journeys = new Journeys().person("person1", "{\"key\":\"value\"}").person("person2", "{}")
                .event("person1", "sign up", "2020-01-02T12:00").event("person2", "sign up", "2020-01-03T12:00")
                .event("person2", "play movie", "2020-01-03T13:00");
        final String cohort = "\"eddy_breakdown_cohorts\":{\"7\":{\"id\":7,\"name\":\"test_cohort\",\"filters\":{\"properties\":{\"type\":\"AND\","
                + "\"values\":[{\"key\":\"key\",\"value\":\"value\",\"type\":\"person\"}]}}}}";
        final JsonNode step = journeys.runBoth("{" + THREE_STEPS + ",\"breakdown_type\":\"cohort\",\"breakdown\":[\"all\",7]," + cohort
                + ",\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":0}", NOW);
        assertThat(step).hasSize(2);
        assertThat(step.get(0).get(0).get("breakdown").asText()).isEqualTo("all users");
        assertThat(step.get(0).get(0).get("breakdown_value").asInt()).isEqualTo(0);
        assertThat(step.get(0)).extracting(s -> s.get("count").asInt()).containsExactly(2, 1, 0);
        assertThat(step.get(1).get(0).get("breakdown").asText()).isEqualTo("test_cohort");
        assertThat(step.get(1).get(0).get("breakdown_value").asInt()).isEqualTo(7);
        assertThat(step.get(1)).extracting(s -> s.get("count").asInt()).containsExactly(1, 0, 0);
        // A bare id, first touch: only the cohort's persons.
        final JsonNode single = journeys.runBoth("{" + THREE_STEPS + ",\"breakdown_type\":\"cohort\",\"breakdown\":7," + cohort + "}", NOW);
        assertThat(single).hasSize(1);
        assertThat(single.get(0).get(0).get("breakdown_value").asInt()).isEqualTo(7);
        assertThat(single.get(0)).extracting(s -> s.get("count").asInt()).containsExactly(1, 0, 0);
        // First touch with all listed first: each person under all only.
        final JsonNode firstTouch = journeys.runBoth("{" + THREE_STEPS + ",\"breakdown_type\":\"cohort\",\"breakdown\":[\"all\",7]," + cohort + "}", NOW);
        assertThat(firstTouch).hasSize(1);
        assertThat(firstTouch.get(0)).extracting(s -> s.get("count").asInt()).containsExactly(2, 1, 0);
        // The persons of a cohort's step, named by its id (all by 0), as the step's people URLs name them.
        final String persons = "{" + THREE_STEPS + ",\"breakdown_type\":\"cohort\",\"breakdown\":[\"all\",7]," + cohort
                + ",\"breakdown_attribution_type\":\"step\",\"breakdown_attribution_value\":0,\"funnel_step\":1,\"funnel_step_breakdown\":";
        assertThat(journeys.actors(persons + "7}", NOW)).containsExactly("person1");
        assertThat(journeys.actors(persons + "0}", NOW)).containsExactly("person1", "person2");
        assertThat(journeys.actors(persons.replace("\"funnel_step\":1", "\"funnel_step\":2") + "7}", NOW)).isEmpty();
        assertThatThrownBy(() -> journeys.run("{" + THREE_STEPS + ",\"breakdown_type\":\"cohort\",\"breakdown\":[8]}", NOW))
                .hasMessage("Cohort ID 8 does not exist!");
    }

    static List<String> summary(final JsonNode result) {
        final List<String> lines = new ArrayList<>();
        for (final JsonNode funnel : result) {
            final List<String> counts = new ArrayList<>();
            final List<String> averages = new ArrayList<>();
            final List<String> medians = new ArrayList<>();
            for (final JsonNode step : funnel) {
                assertThat(step.get("breakdown")).isEqualTo(step.get("breakdown_value"));
                counts.add(step.get("count").asText());
                averages.add(step.get("average_conversion_time").isNull() ? "null" : step.get("average_conversion_time").asText());
                medians.add(step.get("median_conversion_time").isNull() ? "null" : step.get("median_conversion_time").asText());
            }
            lines.add(funnel.get(0).get("breakdown_value") + " " + String.join(",", counts) + " avg " + String.join(",", averages)
                    + " median " + String.join(",", medians));
        }
        return lines;
    }

    static List<String> values(final JsonNode result) {
        final List<String> values = new ArrayList<>();
        result.forEach(funnel -> values.add(funnel.get(0).get("breakdown_value").toString()));
        return values;
    }
}
