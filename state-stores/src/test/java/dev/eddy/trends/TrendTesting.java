package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;

/** What the trend and stickiness tests share: queries written as JSON text, answers read as numbers. */
final class TrendTesting {
    /** Persons and groups without properties. */
    static final PropertyLookup NO_PROPERTIES = new PropertyLookup() {
        @Override
        public ObjectNode person(final String personUuid) {
            return Json.mapper().createObjectNode();
        }

        @Override
        public ObjectNode group(final int typeIndex, final String groupKey) {
            return Json.mapper().createObjectNode();
        }
    };

    private TrendTesting() {
    }

    static JsonNode read(final String json) {
        try {
            return Json.mapper().readTree(json);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    static int[] ints(final JsonNode array) {
        final int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asInt();
        }
        return values;
    }
}
