package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Funnel correlation person by person, with the datasets and numbers of PostHog's {@code test_funnel_correlation.py}
 * and {@code test_clickhouse_funnel_correlation.py}.
 */
class FunnelCorrelationQueryTest {
    private static final Instant NOW = Instant.parse("2020-02-01T00:00:00Z");
    private static final String FUNNEL = "\"events\": [{\"id\": \"user signed up\", \"type\": \"events\", \"order\": 0},"
            + " {\"id\": \"paid\", \"type\": \"events\", \"order\": 1}], \"date_from\": \"2020-01-01\", \"date_to\": \"2020-01-14\"";

    /** Each answered candidate as {@code name success failure type}, and its odds ratio apart. */
    private static List<String> rows(final JsonNode answer) {
        final List<String> rows = new ArrayList<>();
        answer.path("events").forEach(e -> rows.add(e.path("event").path("event").asText() + " " + e.path("success_count").asLong() + " "
                + e.path("failure_count").asLong() + " " + e.path("correlation_type").asText()));
        return rows;
    }

    private static List<Double> odds(final JsonNode answer) {
        final List<Double> odds = new ArrayList<>();
        answer.path("events").forEach(e -> odds.add(e.path("odds_ratio").asDouble()));
        return odds;
    }

    /** PostHog's test_basic_funnel_correlation_with_events: half the converted did one event, half the others another. */
    private static Journeys basic() {
        final Journeys j = new Journeys();
        for (int i = 0; i < 10; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "positively_related", "2020-01-03T14:00");
            }
            j.event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 10; i < 20; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "negatively_related", "2020-01-03T14:00");
            }
        }
        return j;
    }

    @Test
    void eventsDoneBetweenTheStepsCorrelateWithConversion() {
        final JsonNode answer = basic().correlation("{" + FUNNEL + "}", NOW);
        assertThat(rows(answer)).containsExactly("positively_related 5 0 success", "negatively_related 0 5 failure");
        assertThat(odds(answer).get(0)).isEqualTo(11.0);
        assertThat(odds(answer).get(1)).isCloseTo(1.0 / 11, within(1e-15));
        assertThat(answer.path("skewed").asBoolean()).isFalse();
        assertThat(answer.path("events").get(0).path("event")).hasToString("{\"event\":\"positively_related\",\"properties\":{},\"elements\":[]}");
    }

    @Test
    void excludedEventNamesAreLeftOut() {
        final JsonNode answer = basic().correlation("{" + FUNNEL + ", \"funnel_correlation_exclude_event_names\": [\"positively_related\"]}", NOW);
        assertThat(rows(answer)).containsExactly("negatively_related 0 5 failure");
        assertThat(odds(answer).get(0)).isCloseTo(1.0 / 11, within(1e-15));
    }

    @Test
    void theEventsOfActionStepsAreLeftOut() {
        // PostHog's test_action_events_are_excluded_from_correlations: a sign up without the action's property is
        // not the step, yet as the step's event it is never a candidate.
        final Journeys j = new Journeys();
        for (int i = 0; i < 3; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00", "{\"key\": \"val\"}");
            j.event("user_" + i, "user signed up", "2020-01-02T14:10");
            if (i % 2 == 0) {
                j.event("user_" + i, "positively_related", "2020-01-03T14:00");
            }
            j.event("user_" + i, "paid", "2020-01-04T14:00", "{\"key\": \"val\"}");
        }
        j.event("failure", "user signed up", "2020-01-02T14:00", "{\"key\": \"val\"}");
        final String step = "{\"id\": %d, \"type\": \"actions\", \"order\": %d, \"eddy_action\": {\"id\": %d, \"name\": \"%s\", \"steps\": "
                + "[{\"event\": \"%s\", \"properties\": [{\"key\": \"key\", \"type\": \"event\", \"value\": [\"val\"], \"operator\": \"exact\"}]}]}}";
        final JsonNode answer = j.correlation("{\"actions\": [" + String.format(step, 1, 0, 1, "user signed up", "user signed up") + ", "
                + String.format(step, 2, 1, 2, "paid", "paid") + "], \"date_from\": \"2020-01-01\", \"date_to\": \"2020-01-14\"}", NOW);
        assertThat(rows(answer)).containsExactly("positively_related 2 0 success");
        assertThat(odds(answer)).containsExactly(3.0);
    }

    @Test
    void countsWithoutFailuresOrSuccessesDivideByNothing() {
        // PostHog's test_no_divide_by_zero_errors.
        final Journeys j = new Journeys();
        for (int i = 0; i < 2; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00").event("user_" + i, "positive", "2020-01-03T14:00")
                    .event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 2; i < 4; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "negatively_related", "2020-01-03T14:00");
            }
        }
        final JsonNode answer = j.correlation("{" + FUNNEL + "}", NOW);
        assertThat(rows(answer)).containsExactly("positive 2 0 success", "negatively_related 0 1 failure");
        assertThat(odds(answer).get(0)).isEqualTo(9.0);
        assertThat(odds(answer).get(1)).isCloseTo(1.0 / 3, within(1e-15));
        assertThat(answer.path("skewed").asBoolean()).isFalse();
    }

    @Test
    void onlyEventsInsideTheConversionWindowCount() {
        // PostHog's test_events_within_conversion_window_for_correlation: a 10-minute window.
        final Journeys j = new Journeys();
        j.event("user_successful", "user signed up", "2020-01-02T14:00").event("user_successful", "positively_related", "2020-01-02T14:02")
                .event("user_successful", "paid", "2020-01-02T14:06");
        j.event("user_dropoff", "user signed up", "2020-01-02T14:00").event("user_dropoff", "NOT_negatively_related", "2020-01-02T14:15");
        final JsonNode answer = j.correlation("{" + FUNNEL + ", \"funnel_window_interval\": \"10\", \"funnel_window_interval_unit\": \"minute\"}",
                NOW);
        assertThat(rows(answer)).containsExactly("positively_related 1 0 success");
        assertThat(odds(answer)).containsExactly(4.0);
    }

    @Test
    void eventsBeforeTheFirstStepOrAfterTheLastDoNotCount() {
        // PostHog's test_event_correlation_endpoint_does_not_include_historical_events (and one event after
        // converting, which does not count either).
        final Journeys j = new Journeys();
        j.event("Person 1", "watched video", "2019-01-02T00:00").event("Person 1", "signup", "2020-01-01T00:00");
        j.event("Person 2", "watched video", "2019-01-02T00:00").event("Person 2", "signup", "2020-01-01T00:00")
                .event("Person 2", "view insights", "2020-01-03T00:00").event("Person 2", "watched video", "2020-01-04T00:00");
        final String funnel = "{\"events\": [{\"id\": \"signup\", \"order\": 0}, {\"id\": \"view insights\", \"order\": 1}],"
                + " \"date_from\": \"-7d\", \"date_to\": \"2020-04-04\"}";
        final JsonNode answer = j.correlation(funnel, Instant.parse("2020-01-01T00:00:00Z"));
        assertThat(answer).hasToString("{\"events\":[],\"skewed\":false}");
    }

    @Test
    void stepEventsAreNeverCandidatesButAnEmptyNameIs() {
        // PostHog's test_event_correlation_endpoint_does_not_include_funnel_steps and
        // test_event_correlation_endpoint_picks_up_events_for_odds_ratios.
        final Journeys j = new Journeys();
        j.event("Person 1", "signup", "2020-01-01T00:00").event("Person 1", "some waypoint", "2020-01-02T00:00").event("Person 1", "", "2020-01-03T00:00");
        j.event("Person 2", "signup", "2020-01-01T00:00").event("Person 2", "some waypoint", "2020-01-02T00:00")
                .event("Person 2", "view insights", "2020-01-03T00:00");
        final JsonNode answer = j.correlation("{\"events\": [{\"id\": \"signup\", \"order\": 0}, {\"id\": \"some waypoint\", \"order\": 1},"
                + " {\"id\": \"view insights\", \"order\": 2}], \"date_to\": \"2020-04-04\"}", Instant.parse("2020-01-01T00:00:00Z"));
        assertThat(rows(answer)).containsExactly(" 0 1 failure");
        assertThat(odds(answer)).containsExactly(0.25);

        final Journeys watched = new Journeys();
        watched.event("Person 1", "signup", "2020-01-01T00:00").event("Person 1", "watched video", "2020-01-02T00:00");
        watched.event("Person 2", "signup", "2020-01-01T00:00").event("Person 2", "watched video", "2020-01-02T00:00")
                .event("Person 2", "view insights", "2020-01-03T00:00");
        watched.event("Person 3", "signup", "2020-01-01T00:00").event("Person 3", "view insights", "2020-01-03T00:00");
        final String twoSteps = "{\"events\": [{\"id\": \"signup\", \"order\": 0}, {\"id\": \"view insights\", \"order\": 1}],"
                + " \"date_to\": \"2020-04-04\"}";
        final JsonNode odds = watched.correlation(twoSteps, Instant.parse("2020-01-01T00:00:00Z"));
        assertThat(rows(odds)).containsExactly("watched video 1 1 failure");
        assertThat(odds(odds)).containsExactly(0.5);
        // The persons behind each number, as the people URLs ask.
        assertThat(watched.correlation(twoSteps.replace("}],", "}], \"funnel_correlation_person_converted\": \"TrUe\","
                + " \"funnel_correlation_person_entity\": {\"id\": \"watched video\", \"type\": \"events\"},"), Instant.parse("2020-01-01T00:00:00Z")))
                .hasToString("{\"count\":1,\"actors\":[[\"Person 2\",null]]}");
        assertThat(watched.correlation(twoSteps.replace("}],", "}], \"funnel_correlation_person_converted\": \"false\","
                + " \"funnel_correlation_person_entity\": {\"id\": \"watched video\", \"type\": \"events\"},"), Instant.parse("2020-01-01T00:00:00Z")))
                .hasToString("{\"count\":1,\"actors\":[[\"Person 1\",null]]}");
    }

    @Test
    void personPropertiesCorrelateWithConversion() {
        // PostHog's test_basic_funnel_correlation_with_properties.
        final Journeys j = new Journeys();
        for (int i = 0; i < 10; i++) {
            j.person("user_" + i, "{\"$browser\": \"Positive\"}").event("user_" + i, "user signed up", "2020-01-02T14:00")
                    .event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 10; i < 20; i++) {
            j.person("user_" + i, "{\"$browser\": \"Negative\"}").event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "negatively_related", "2020-01-03T14:00");
            }
        }
        j.person("user_fail", "{\"$browser\": \"Positive\"}").event("user_fail", "user signed up", "2020-01-02T14:00");
        j.person("user_succ", "{\"$browser\": \"Negative\"}").event("user_succ", "user signed up", "2020-01-02T14:00")
                .event("user_succ", "paid", "2020-01-04T14:00");
        final JsonNode answer = j.correlation("{" + FUNNEL + ", \"funnel_correlation_type\": \"properties\", \"funnel_correlation_names\": [\"$browser\"]}",
                NOW);
        assertThat(rows(answer)).containsExactly("$browser::Positive 10 1 success", "$browser::Negative 1 10 failure");
        assertThat(odds(answer).get(0)).isCloseTo((11.0 / 2) * (11.0 / 2), within(1e-12));
        assertThat(odds(answer).get(1)).isCloseTo((2.0 / 11) * (2.0 / 11), within(1e-12));
        assertThat(j.correlation("{" + FUNNEL + ", \"funnel_correlation_type\": \"properties\", \"funnel_correlation_person_converted\": \"false\","
                + " \"funnel_correlation_property_values\": [{\"key\": \"$browser\", \"value\": \"Positive\", \"type\": \"person\", \"operator\": \"exact\"}]}",
                NOW)).hasToString("{\"count\":1,\"actors\":[[\"user_fail\",null]]}");
    }

    @Test
    void severalPersonPropertiesAllOfThemAndExclusions() {
        // PostHog's test_correlation_with_multiple_properties.
        final Journeys j = new Journeys();
        for (int i = 0; i < 5; i++) {
            j.person("user_" + i, "{\"$browser\": \"Positive\", \"$nice\": \"very\"}").event("user_" + i, "user signed up", "2020-01-02T14:00")
                    .event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 5; i < 15; i++) {
            j.person("user_" + i, "{\"$browser\": \"Positive\", \"$nice\": \"not\"}").event("user_" + i, "user signed up", "2020-01-02T14:00")
                    .event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 15; i < 20; i++) {
            j.person("user_" + i, "{\"$browser\": \"Negative\", \"$nice\": \"smh\"}").event("user_" + i, "user signed up", "2020-01-02T14:00");
        }
        j.person("user_fail", "{\"$browser\": \"Positive\"}").event("user_fail", "user signed up", "2020-01-02T14:00");
        j.person("user_succ", "{\"$browser\": \"Negative\"}").event("user_succ", "user signed up", "2020-01-02T14:00")
                .event("user_succ", "paid", "2020-01-04T14:00");
        final String properties = "{" + FUNNEL + ", \"funnel_correlation_type\": \"properties\", \"funnel_correlation_names\": ";
        final List<String> named = List.of("$browser::Positive 15 1 success", "$nice::not 10 0 success", "$nice::very 5 0 success",
                "$nice::smh 0 5 failure", "$browser::Negative 1 5 failure", "$nice:: 1 1 failure");
        final JsonNode answer = j.correlation(properties + "[\"$browser\", \"$nice\"]}", NOW);
        assertThat(rows(answer)).isEqualTo(named);
        assertThat(odds(answer).get(0)).isCloseTo(24.0, within(1e-12));
        assertThat(odds(answer).get(5)).isCloseTo(0.375, within(1e-12));
        // $all: the properties each person has (no "$nice::" for those without it).
        assertThat(rows(j.correlation(properties + "[\"$all\"]}", NOW))).isEqualTo(named.subList(0, 5));
        assertThat(rows(j.correlation(properties + "[\"$all\"], \"funnel_correlation_exclude_names\": [\"$browser\"]}", NOW)))
                .isEqualTo(named.subList(1, 4));
    }

    /** PostHog's test_funnel_correlation_with_event_properties. */
    private static Journeys withEventProperties() {
        final Journeys j = new Journeys();
        for (int i = 0; i < 10; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "positively_related", "2020-01-03T14:00",
                        "{\"signup_source\": \"" + (i % 4 == 0 ? "facebook" : "email") + "\", \"blah\": \"value_bleh\"}");
            }
            j.event("user_" + i, "paid", "2020-01-04T14:00");
        }
        for (int i = 10; i < 20; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00");
            if (i % 2 == 0) {
                j.event("user_" + i, "negatively_related", "2020-01-03T14:00", "{\"signup_source\": \"" + (i % 6 == 0 ? "shazam" : "email") + "\"}");
            }
        }
        return j;
    }

    @Test
    void eventPropertyValuesOfMoreThanTwoPersonsCorrelate() {
        final JsonNode answer = withEventProperties().correlation("{" + FUNNEL + ", \"funnel_correlation_type\": \"event_with_properties\","
                + " \"funnel_correlation_event_names\": [\"positively_related\", \"negatively_related\"]}", NOW);
        assertThat(rows(answer)).containsExactly("positively_related::blah::value_bleh 5 0 success",
                "positively_related::signup_source::facebook 3 0 success", "negatively_related::signup_source::email 0 3 failure");
        assertThat(odds(answer).get(0)).isEqualTo(11.0);
        assertThat(odds(answer).get(1)).isEqualTo(5.5);
        assertThat(odds(answer).get(2)).isCloseTo(2.0 / 11, within(1e-15));
        assertThat(withEventProperties().correlation("{" + FUNNEL + ", \"funnel_correlation_person_converted\": \"true\","
                + " \"funnel_correlation_person_entity\": {\"id\": \"positively_related\", \"type\": \"events\", \"properties\":"
                + " [{\"key\": \"signup_source\", \"value\": \"facebook\", \"type\": \"event\", \"operator\": \"exact\"}]}}", NOW))
                .hasToString("{\"count\":3,\"actors\":[[\"user_0\",null],[\"user_4\",null],[\"user_8\",null]]}");
    }

    @Test
    void excludedEventPropertyNamesAreLeftOut() {
        // PostHog's test_funnel_correlation_with_event_properties_exclusions.
        final Journeys j = new Journeys();
        for (int i = 0; i < 3; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00")
                    .event("user_" + i, "positively_related", "2020-01-03T14:00", "{\"signup_source\": \"facebook\", \"blah\": \"value_bleh\"}")
                    .event("user_" + i, "paid", "2020-01-04T14:00");
        }
        j.event("user_fail", "user signed up", "2020-01-02T14:00");
        final JsonNode answer = j.correlation("{" + FUNNEL + ", \"funnel_correlation_type\": \"event_with_properties\","
                + " \"funnel_correlation_event_names\": [\"positively_related\"], \"funnel_correlation_event_exclude_property_names\": [\"signup_source\"]}",
                NOW);
        assertThat(rows(answer)).containsExactly("positively_related::blah::value_bleh 3 0 success");
        assertThat(odds(answer)).containsExactly(8.0);
    }

    @Test
    void autocaptureCorrelatesItsElementsChains() {
        // PostHog's test_funnel_correlation_with_event_properties_autocapture.
        final Journeys j = new Journeys();
        final String link = "a:href=\\\"/movie\\\"nth-child=\\\"0\\\"nth-of-type=\\\"1\\\"";
        final String button = "button:nth-child=\\\"0\\\"nth-of-type=\\\"1\\\"text=\\\"Pay $10\\\"";
        for (int i = 0; i < 6; i++) {
            j.event("user_" + i, "user signed up", "2020-01-02T14:00").event("user_" + i, "$autocapture", "2020-01-03T14:00",
                    "{\"signup_source\": \"email\", \"$event_type\": \"click\", \"$elements_chain\": \"" + link + "\"}");
            if (i % 2 == 0) {
                j.event("user_" + i, "$autocapture", "2020-01-03T14:00",
                        "{\"signup_source\": \"facebook\", \"$event_type\": \"submit\", \"$elements_chain\": \"" + button + "\"}");
            }
            j.event("user_" + i, "paid", "2020-01-04T14:00");
        }
        j.event("user_fail", "user signed up", "2020-01-02T14:00");
        final JsonNode answer = j.correlation("{" + FUNNEL + ", \"funnel_correlation_type\": \"event_with_properties\","
                + " \"funnel_correlation_event_names\": [\"$autocapture\"]}", NOW);
        assertThat(rows(answer)).containsExactly(
                "$autocapture::elements_chain::click__~~__a:href=\"/movie\"nth-child=\"0\"nth-of-type=\"1\" 6 0 success",
                "$autocapture::elements_chain::submit__~~__button:nth-child=\"0\"nth-of-type=\"1\"text=\"Pay $10\" 3 0 success");
        assertThat(odds(answer)).containsExactly(14.0, 2.0);
        assertThat(answer.path("events").get(0).path("event").path("properties")).hasToString("{\"$event_type\":\"click\"}");
        assertThat(answer.path("events").get(0).path("event").path("elements")).hasToString("[{\"event\":null,\"text\":null,\"tag_name\":\"a\","
                + "\"attr_class\":null,\"href\":\"/movie\",\"attr_id\":null,\"nth_child\":0,\"nth_of_type\":1,\"attributes\":{},\"order\":0}]");
        assertThat(answer.path("events").get(1).path("event").path("elements").get(0).path("text").asText()).isEqualTo("Pay $10");
    }

    @Test
    void unorderedFunnelsCorrelateFromTheirEarliestStep() {
        final Journeys j = new Journeys();
        for (int i = 0; i < 4; i++) {
            // Paid before signing up: an unordered funnel converts, from the payment on.
            j.event("user_" + i, "paid", "2020-01-02T14:00").event("user_" + i, "read docs", "2020-01-03T14:00")
                    .event("user_" + i, "user signed up", "2020-01-04T14:00");
        }
        j.event("user_fail", "paid", "2020-01-02T14:00").event("user_fail", "left", "2020-01-03T14:00");
        final JsonNode answer = j.correlation("{" + FUNNEL + ", \"funnel_order_type\": \"unordered\"}", NOW);
        assertThat(rows(answer)).containsExactly("read docs 4 0 success", "left 0 1 failure");
        assertThat(odds(answer)).containsExactly(10.0, 1.0 / 10);
        // Ordered, the same persons never convert: the payment is no first step.
        assertThat(rows(j.correlation("{" + FUNNEL + "}", NOW))).isEmpty();
    }

    @Test
    void aFunnelWithoutStepsCorrelatesNothing() {
        assertThat(basic().correlation("{\"events\": [], \"funnel_correlation_type\": \"properties\", \"funnel_correlation_names\": [\"$browser\"]}",
                NOW)).hasToString("{\"events\":[],\"skewed\":false}");
    }

    @Test
    void nobodyConvertingAnswersNothingSkewed() {
        final Journeys j = new Journeys();
        j.event("a", "user signed up", "2020-01-02T14:00").event("a", "other", "2020-01-02T15:00");
        assertThat(j.correlation("{" + FUNNEL + "}", NOW)).hasToString("{\"events\":[],\"skewed\":true}");
    }

    @Test
    void refusedAsPostHogRefusesThem() {
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"funnel_correlation_type\": \"properties\"}"))
                .hasMessage("Property Correlation expects atleast one Property to run correlation on");
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"funnel_correlation_type\": \"event_with_properties\"}"))
                .hasMessage("Event Property Correlation expects atleast one event name to run correlation on");
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"funnel_correlation_type\": \"people\"}"))
                .hasMessage("funnel_correlation_type must be events, properties or event_with_properties");
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"aggregation_group_type_index\": 0}"))
                .hasMessage("Eddy does not correlate funnels aggregated by groups (aggregation_group_type_index)");
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"funnel_correlation_names\": [1]}")).hasMessage("funnel_correlation_names must be a list of names");
        assertThatThrownBy(() -> parse("{" + FUNNEL + ", \"funnel_correlation_person_converted\": \"maybe\"}"))
                .hasMessage("funnel_correlation_person_converted must be true or false");
    }

    @Test
    void partialsThatAreNotOnesAreRefused() {
        final FunnelCorrelationQuery query = parse("{" + FUNNEL + "}");
        assertThatThrownBy(() -> query.decode(new byte[] {1, 2, 3})).isInstanceOf(IllegalArgumentException.class);
    }

    private static FunnelCorrelationQuery parse(final String request) {
        return FunnelCorrelationQuery.parse(Journeys.json(request), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
    }
}
