package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Funnels aggregated by groups ({@code aggregation_group_type_index}) on PostHog's own cases (ee
 * {@code test_funnel_groups.py}, {@code ClickhouseTestFunnelGroups}): a group's events come from many persons, and
 * the persons are split over two partials, so each group is only evaluated once they are merged.
 */
class FunnelGroupTest {
    private static final Instant NOW = Instant.parse("2020-02-01T00:00:00Z");
    private static final String STEPS = "\"events\":[{\"id\":\"user signed up\",\"type\":\"events\",\"order\":0%s},"
            + "{\"id\":\"paid\",\"type\":\"events\",\"order\":1}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-14\",\"insight\":\"FUNNELS\"";

    private static Journeys groups() {
        return new Journeys()
                .group(0, "org:5", "{\"industry\":\"finance\"}").group(0, "org:6", "{\"industry\":\"technology\"}")
                .group(1, "company:1", "{}").group(1, "company:2", "{}");
    }

    @Test
    void aGroupConvertsWithEventsOfSeveralPersons() {
        // test_funnel_aggregation_with_groups: user_1 signs up for org:5 and org:6, user_2 pays for org:5.
        final Journeys journeys = groups()
                .event("user_1", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_1", "user signed up", "2020-01-10T14:00", "{\"$group_0\":\"org:6\"}")
                .event("user_2", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:5\"}");
        final JsonNode result = journeys.runBoth("{" + STEPS.formatted("") + ",\"aggregation_group_type_index\":0}", NOW);
        assertThat(steps(result)).isEqualTo("2,1 after 86400.0");
        // The same events by person: user_2 never signed up.
        final JsonNode byPerson = journeys.runBoth("{" + STEPS.formatted("") + "}", NOW);
        assertThat(steps(byPerson)).isEqualTo("1,0 after null");
    }

    @Test
    void stepFiltersApplyToTheGroupsEvents() {
        // test_funnel_group_aggregation_with_groups_entity_filtering: only org:5's sign up is a step.
        final Journeys journeys = groups()
                .event("user_1", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_2", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_3", "user signed up", "2020-01-10T14:00", "{\"$group_0\":\"org:6\"}");
        final JsonNode result = journeys.runBoth("{" + STEPS.formatted(",\"properties\":{\"$group_0\":\"org:5\"}")
                + ",\"aggregation_group_type_index\":0}", NOW);
        assertThat(steps(result)).isEqualTo("1,1 after 86400.0");
    }

    @Test
    void personsStillConvertAcrossGroupsWhenNotAggregatingByThem() {
        // test_funnel_with_groups_entity_filtering
        final Journeys journeys = groups()
                .event("user_1", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_1", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:6\"}")
                .event("user_1", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:6\"}")
                .event("user_1", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:6\"}");
        final JsonNode result = journeys.runBoth("{" + STEPS.formatted(",\"properties\":{\"$group_0\":\"org:5\"}") + "}", NOW);
        assertThat(steps(result)).isEqualTo("1,1 after 86400.0");
    }

    @Test
    void groupPropertiesFilterEachEvent() {
        // test_funnel_with_groups_global_filtering: only org:5's (finance) events are in the funnel.
        final Journeys journeys = groups()
                .event("user_1", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_1", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:6\"}")
                .event("user_2", "user signed up", "2020-01-02T14:00", "{\"$group_0\":\"org:6\"}")
                .event("user_2", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:5\"}");
        final JsonNode result = journeys.runBoth("{" + STEPS.formatted("")
                + ",\"properties\":[{\"key\":\"industry\",\"value\":\"finance\",\"type\":\"group\",\"group_type_index\":0}]}", NOW);
        assertThat(steps(result)).isEqualTo("1,0 after null");
    }

    @Test
    void eventsWithoutTheGroupAreLeftOut() {
        final Journeys journeys = groups()
                .event("user_1", "user signed up", "2020-01-02T14:00")
                .event("user_1", "paid", "2020-01-03T14:00", "{\"$group_0\":\"org:5\"}")
                .event("user_2", "user signed up", "2020-01-02T15:00", "{\"$group_1\":\"company:1\"}");
        assertThat(journeys.runBoth("{" + STEPS.formatted("") + ",\"aggregation_group_type_index\":0}", NOW).toString()).isEqualTo("[]");
        final JsonNode companies = journeys.runBoth("{" + STEPS.formatted("") + ",\"aggregation_group_type_index\":1}", NOW);
        assertThat(steps(companies)).isEqualTo("1,0 after null");
    }

    @Test
    void aGroupTypeIndexIsZeroToFour() {
        assertThatThrownBy(() -> new Journeys().parse("{" + STEPS.formatted("") + ",\"aggregation_group_type_index\":5}", NOW))
                .hasMessageContaining("aggregation_group_type_index");
    }

    /** Counts of the two steps and the average time to the second, e.g. {@code 2,1 after 86400.0}. */
    private static String steps(final JsonNode result) {
        return result.get(0).get("count").asLong() + "," + result.get(1).get("count").asLong() + " after "
                + result.get(1).get("average_conversion_time");
    }
}
