package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Query property filters with PostHog's SQL semantics: text comparison, missing values, groups. */
class PropertyFilterTest {
    private static final Instant NOW = Instant.parse("2024-06-01T00:00:00Z");

    private static final PropertyFilter.Source EVENT = source(
            "{\"$browser\":\"Chrome\",\"prop\":10,\"price\":\"5.5\",\"bool_field\":true,\"empty\":\"\",\"nothing\":null,"
                    + "\"$current_url\":\"https://shop.test/cart?x=1\"}",
            "{\"email\":\"Ann@Corp.test\",\"plan\":\"pro\"}",
            Map.of(0, "{\"industry\":\"finance\"}"));

    @Test
    void exactComparesTextCaseSensitivelyAndListsMeanAnyOf() {
        assertThat(matches("[{\"key\":\"$browser\",\"value\":\"Chrome\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"$browser\",\"value\":\"chrome\"}]")).as("= is case-sensitive").isFalse();
        assertThat(matches("[{\"key\":\"$browser\",\"value\":[\"Safari\",\"Chrome\"]}]")).isTrue();
        assertThat(matches("[{\"key\":\"$browser\",\"value\":[]}]")).as("an empty list matches everything").isTrue();
        assertThat(matches("[{\"key\":\"prop\",\"value\":\"10\"}]")).as("numbers compare as their text").isTrue();
        assertThat(matches("[{\"key\":\"prop\",\"value\":10}]")).isTrue();
        assertThat(matches("[{\"key\":\"bool_field\",\"value\":\"true\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"empty\",\"value\":\"\"}]")).as("an empty string is a value").isTrue();
    }

    @Test
    void aMissingOrNullPropertyMatchesOnlyTheNegativeOperators() {
        for (final String key : new String[] {"missing", "nothing"}) {
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"exact\"}]")).isFalse();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"is_not\"}]")).isTrue();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"icontains\"}]")).isFalse();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"not_icontains\"}]")).isTrue();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"regex\"}]")).isFalse();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":\"x\",\"operator\":\"not_regex\"}]")).isTrue();
            assertThat(matches("[{\"key\":\"" + key + "\",\"operator\":\"is_set\"}]")).isFalse();
            assertThat(matches("[{\"key\":\"" + key + "\",\"operator\":\"is_not_set\"}]")).isTrue();
            assertThat(matches("[{\"key\":\"" + key + "\",\"value\":5,\"operator\":\"gt\"}]")).isFalse();
        }
        assertThat(matches("[{\"key\":\"empty\",\"operator\":\"is_set\"}]")).isTrue();
    }

    @Test
    void textOperatorsNumbersAndRanges() {
        assertThat(matches("[{\"key\":\"$browser\",\"value\":\"HROM\",\"operator\":\"icontains\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"$browser\",\"value\":[\"saf\",\"fire\"],\"operator\":\"not_icontains\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"$current_url\",\"value\":\"cart\\\\?x=\\\\d\",\"operator\":\"regex\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"$current_url\",\"value\":\"(unclosed\",\"operator\":\"regex\"}]")).as("invalid pattern").isFalse();
        assertThat(matches("[{\"key\":\"prop\",\"value\":9,\"operator\":\"gt\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"prop\",\"value\":\"10\",\"operator\":\"gte\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"price\",\"value\":6,\"operator\":\"lt\"}]")).as("a numeric string is a number").isTrue();
        assertThat(matches("[{\"key\":\"$browser\",\"value\":1,\"operator\":\"gt\"}]")).as("text is no number").isFalse();
        assertThat(matches("[{\"key\":\"prop\",\"value\":[5,10],\"operator\":\"between\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"prop\",\"value\":[11,20],\"operator\":\"not_between\"}]")).isTrue();
    }

    @Test
    void personAndGroupPropertiesAndGroups() {
        assertThat(matches("[{\"key\":\"email\",\"value\":\"corp.test\",\"operator\":\"icontains\",\"type\":\"person\"}]")).isTrue();
        assertThat(matches("[{\"key\":\"industry\",\"value\":\"finance\",\"type\":\"group\",\"group_type_index\":0}]")).isTrue();
        assertThat(matches("[{\"key\":\"industry\",\"value\":\"finance\",\"type\":\"group\",\"group_type_index\":1}]")).isFalse();
        assertThat(matches("{\"type\":\"OR\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"plan\",\"value\":\"free\",\"type\":\"person\"}]},"
                + "{\"type\":\"AND\",\"values\":[{\"key\":\"$browser\",\"value\":\"Chrome\"}]}]}")).isTrue();
        assertThat(matches("{\"type\":\"AND\",\"values\":[{\"key\":\"plan\",\"value\":\"free\",\"type\":\"person\"},"
                + "{\"key\":\"$browser\",\"value\":\"Chrome\"}]}")).isFalse();
        assertThat(matches("{\"type\":\"AND\",\"values\":[]}")).isTrue();
        assertThat(matches("{\"$browser__icontains\":\"chr\",\"prop\":10}")).as("the legacy form").isTrue();
        assertThat(PropertyFilter.parse(read("[{\"key\":\"$browser\",\"value\":\"Chrome\"}]"))
                .and(PropertyFilter.parse(read("[{\"key\":\"prop\",\"value\":11}]"))).test(EVENT, NOW)).isFalse();
    }

    @Test
    void unsupportedFiltersAreRefused() {
        assertThatThrownBy(() -> PropertyFilter.parse(read("[{\"value\":1}]"))).hasMessageContaining("key");
        assertThatThrownBy(() -> PropertyFilter.parse(read("[{\"key\":\"a\",\"operator\":\"sounds_like\"}]")))
                .hasMessageContaining("sounds_like");
        assertThatThrownBy(() -> PropertyFilter.parse(read("[{\"key\":\"id\",\"type\":\"cohort\",\"value\":3}]")))
                .as("a cohort the gateway did not inline").hasMessage("Cohort ID 3 does not exist!");
        assertThatThrownBy(() -> PropertyFilter.parse(read("[{\"key\":\"a\",\"type\":\"group\"}]")))
                .hasMessageContaining("group_type_index");
        assertThatThrownBy(() -> PropertyFilter.parse(read("\"x\""))).hasMessageContaining("list");
    }

    private static boolean matches(final String properties) {
        return PropertyFilter.parse(read(properties)).test(EVENT, NOW);
    }

    private static PropertyFilter.Source source(final String event, final String person, final Map<Integer, String> groups) {
        final ObjectNode e = (ObjectNode) read(event);
        final ObjectNode p = (ObjectNode) read(person);
        return new PropertyFilter.Source() {
            @Override
            public JsonNode event(final String key) {
                return e.get(key);
            }

            @Override
            public JsonNode person(final String key) {
                return p.get(key);
            }

            @Override
            public JsonNode group(final int typeIndex, final String key) {
                return groups.containsKey(typeIndex) ? read(groups.get(typeIndex)).get(key) : null;
            }
        };
    }

    private static JsonNode read(final String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
