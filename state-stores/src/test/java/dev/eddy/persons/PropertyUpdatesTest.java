package dev.eddy.persons;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import org.junit.jupiter.api.Test;

class PropertyUpdatesTest {

    @Test
    void setOnceWritesOnlyMissingKeysAndNullCountsAsPresent() {
        final ObjectNode person = json("{\"a\":1,\"n\":null}");

        assertThat(PropertyUpdates.apply(person, json("{\"$set_once\":{\"a\":2,\"n\":3,\"b\":4}}"))).isTrue();

        assertThat(person).isEqualTo(json("{\"a\":1,\"n\":null,\"b\":4}"));
    }

    @Test
    void setOverwritesAndReportsNoChangeForEqualValues() {
        final ObjectNode person = json("{\"a\":1,\"o\":{\"x\":[1,2]}}");

        assertThat(PropertyUpdates.apply(person, json("{\"$set\":{\"a\":1,\"o\":{\"x\":[1,2]}}}"))).isFalse();
        assertThat(PropertyUpdates.apply(person, json("{\"$set\":{\"a\":\"1\"}}"))).isTrue();
        assertThat(person.get("a").asText()).isEqualTo("1");
    }

    @Test
    void unsetTakesAnArrayOfKeysOrTheKeysOfAnObject() {
        final ObjectNode person = json("{\"a\":1,\"b\":2,\"c\":3}");

        assertThat(PropertyUpdates.apply(person, json("{\"$unset\":[\"a\",7,\"missing\"]}"))).isTrue();
        assertThat(PropertyUpdates.apply(person, json("{\"$unset\":{\"b\":null}}"))).isTrue();
        assertThat(PropertyUpdates.apply(person, json("{\"$unset\":\"c\"}"))).as("neither form").isFalse();

        assertThat(person).isEqualTo(json("{\"c\":3}"));
    }

    @Test
    void orderIsSetOnceThenSetThenUnset() {
        final ObjectNode person = json("{}");

        PropertyUpdates.apply(person, json("{\"$unset\":[\"u\"],\"$set\":{\"k\":\"set\",\"u\":1},\"$set_once\":{\"k\":\"once\"}}"));

        assertThat(person).isEqualTo(json("{\"k\":\"set\"}"));
    }

    @Test
    void combineKeepsEveryKeyAndTheWinnersValues() {
        final ObjectNode combined = PropertyUpdates.combine(json("{\"a\":1,\"b\":1}"), json("{\"b\":2,\"c\":2}"));

        assertThat(combined).isEqualTo(json("{\"a\":1,\"b\":2,\"c\":2}"));
    }

    @Test
    void exceptionsAndHeatmapsDoNotUpdatePersons() {
        assertThat(PropertyUpdates.updatesPersons("$exception")).isFalse();
        assertThat(PropertyUpdates.updatesPersons("$$heatmap")).isFalse();
        assertThat(PropertyUpdates.updatesPersons("$pageview")).isTrue();
    }

    @Test
    void illegalIdsMatchPostHogsLists() {
        for (final String id : new String[] {"anonymous", "ANONYMOUS", "Guest", "distinctId", "ID", "EMAIL", "True",
                "[object Object]", "NaN", "None", "none", "null", "0", "undefined", "'null'", "\"0\"", "", "  "}) {
            assertThat(PersonIds.isIllegalForMerge(id)).as(id).isTrue();
        }
        for (final String id : new String[] {"NULL", "nan", "[Object object]", "00", "user-1", "'guest", "null "}) {
            assertThat(PersonIds.isIllegalForMerge(id)).as(id).isFalse();
        }
    }

    private static ObjectNode json(final String json) {
        try {
            return (ObjectNode) Json.mapper().readTree(json);
        } catch (final Exception e) {
            throw new IllegalArgumentException(e);
        }
    }
}
