package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.flags.FlagEvaluator;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Cohort membership as flags and queries ask it, with the cohorts and persons of PostHog's own flag-matching tests
 * ({@code test_flag_matching.rs}: a cohort of {@code $browser_version gt ...}, nested cohorts, static cohorts).
 */
class CohortTest {
    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

    /** A person: its properties and distinct ids. */
    private record Person(String properties, List<String> distinctIds) implements PropertyFilter.Source {
        @Override
        public JsonNode event(final String key) {
            return null;
        }

        @Override
        public JsonNode person(final String key) {
            return read(properties).get(key);
        }

        @Override
        public JsonNode group(final int typeIndex, final String key) {
            return null;
        }

        @Override
        public List<String> personDistinctIds() {
            return distinctIds;
        }
    }

    private static String browserCohort(final long id, final String version) {
        return "{\"id\":" + id + ",\"filters\":{\"properties\":{\"type\":\"OR\",\"values\":[{\"type\":\"OR\",\"values\":[{\"key\":\"$browser_version\","
                + "\"type\":\"person\",\"value\":\"" + version + "\",\"operator\":\"gt\"}]}]}}}";
    }

    @Test
    void dynamicCohortsAreTheirFiltersOnThePersonsCurrentProperties() {
        final Person p126 = new Person("{\"$browser_version\":126}", List.of("u1"));
        final Person p125 = new Person("{\"$browser_version\":125}", List.of("u2"));
        assertThat(Cohort.parse(read(browserCohort(1, "125"))).contains(p126, NOW)).isTrue();
        assertThat(Cohort.parse(read(browserCohort(1, "130"))).contains(p126, NOW)).isFalse();
        assertThat(Cohort.parse(read(browserCohort(1, "130"))).contains(p125, NOW)).isFalse();
        // A cohort of another (inlined), and one of a negated leaf.
        final Cohort nested = Cohort.parse(read("{\"id\":2,\"filters\":{\"properties\":{\"type\":\"AND\",\"values\":[{\"key\":\"id\",\"type\":\"cohort\","
                + "\"value\":1,\"eddy_cohort\":" + browserCohort(1, "125") + "}]}}}"));
        assertThat(nested.contains(p126, NOW)).isTrue();
        assertThat(nested.contains(p125, NOW)).isFalse();
        final Cohort notChrome = Cohort.parse(read("{\"id\":3,\"filters\":{\"properties\":{\"type\":\"OR\",\"values\":[{\"key\":\"$browser\","
                + "\"type\":\"person\",\"value\":\"Chrome\",\"operator\":\"exact\",\"negation\":true}]}}}"));
        assertThat(notChrome.contains(new Person("{\"$browser\":\"Safari\"}", List.of()), NOW)).isTrue();
        assertThat(notChrome.contains(new Person("{\"$browser\":\"Chrome\"}", List.of()), NOW)).isFalse();
        assertThat(Cohort.parse(read("{\"id\":4,\"filters\":{}}")).contains(p125, NOW)).as("no filters: everyone").isTrue();
    }

    @Test
    void aStaticCohortHoldsAPersonByAnyOfItsDistinctIds() {
        final Cohort members = Cohort.parse(read("{\"id\":5,\"is_static\":true,\"members\":[\"a\",\"b\"]}"));
        assertThat(members.contains(new Person("{}", List.of("x", "b")), NOW)).isTrue();
        assertThat(members.contains(new Person("{}", List.of("x")), NOW)).isFalse();
        assertThat(members.isStatic()).isTrue();
    }

    @Test
    void queriesFilterByCohortsInOrOutside() {
        final String inlined = "\"eddy_cohort\":" + browserCohort(1, "125");
        final PropertyFilter in = PropertyFilter.parse(read("[{\"key\":\"id\",\"type\":\"cohort\",\"value\":1," + inlined + "}]"));
        final PropertyFilter out = PropertyFilter.parse(read("[{\"key\":\"id\",\"type\":\"cohort\",\"value\":1,\"operator\":\"not_in\"," + inlined + "}]"));
        final Person p126 = new Person("{\"$browser_version\":126}", List.of("u1"));
        assertThat(in.test(p126, NOW)).isTrue();
        assertThat(out.test(p126, NOW)).isFalse();
        assertThat(in.readsPersonsOrGroups()).as("no answer kept per block").isTrue();
        assertThatThrownBy(() -> PropertyFilter.parse(read("[{\"key\":\"id\",\"type\":\"cohort\",\"value\":9}]")))
                .hasMessage("Cohort ID 9 does not exist!");
    }

    @Test
    void flagConditionsOnCohortsAsPostHogsFlagMatchingTests() {
        final Map<Long, Cohort> cohorts = Map.of(1L, Cohort.parse(read(browserCohort(1, "125"))), 2L, Cohort.parse(read(browserCohort(2, "130"))),
                6L, Cohort.parse(read("{\"id\":6,\"is_static\":true,\"members\":[\"added\"]}")));
        final String[][] cases = {
            {"1", "in", "126", "u", "true"}, {"2", "not_in", "126", "u", "true"}, {"1", "not_in", "126", "u", "false"},
            {"2", "in", "125", "u", "false"}, {"6", "in", "1", "added", "true"}, {"6", "in", "1", "other", "false"},
            {"6", "not_in", "1", "other", "true"}, {"6", "not_in", "1", "added", "false"}, {"99", "in", "126", "u", "false"}};
        for (final String[] c : cases) {
            final FlagDefinition flag = FlagDefinition.of(read("{\"id\":1,\"key\":\"f\",\"active\":true,\"filters\":{\"groups\":[{\"properties\":"
                    + "[{\"key\":\"id\",\"type\":\"cohort\",\"value\":" + c[0] + ",\"operator\":\"" + c[1] + "\"}],\"rollout_percentage\":100}]}}"));
            final Person person = new Person("{\"$browser_version\":" + c[2] + "}", List.of(c[3]));
            final FlagEvaluator.Subject subject = new FlagEvaluator.Subject(c[3], (com.fasterxml.jackson.databind.node.ObjectNode) read(person.properties()),
                    Map.of(), Map.of(), Map.of(), NOW, id -> Optional.ofNullable(cohorts.get(id)).map(cohort -> cohort.contains(person, NOW)));
            assertThat(FlagEvaluator.evaluate(flag, subject).enabled()).as(String.join(" ", c)).isEqualTo(Boolean.parseBoolean(c[4]));
        }
        assertThat(FlagDefinition.of(read("{\"id\":1,\"key\":\"f\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\","
                + "\"value\":3}]}]}}")).cohortIds()).containsExactly(3L);
    }
}
