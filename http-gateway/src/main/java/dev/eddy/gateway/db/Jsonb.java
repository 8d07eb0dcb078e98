package dev.eddy.gateway.db;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.eddy.serde.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** Moves JSON between Jackson trees (the API) and the values vertx-pg-client reads and binds for jsonb columns. */
public final class Jsonb {
    private Jsonb() {
    }

    /** A jsonb column's value (JsonObject, JsonArray, String, Number, Boolean or null) as a tree. */
    public static JsonNode read(final Object value) {
        if (value == null) {
            return NullNode.getInstance();
        }
        if (value instanceof JsonObject object) {
            return Json.mapper().valueToTree(object.getMap());
        }
        if (value instanceof JsonArray array) {
            return Json.mapper().valueToTree(array.getList());
        }
        return Json.mapper().valueToTree(value);
    }

    /** A tree as a value to bind to a jsonb parameter. */
    public static Object bind(final JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return null;
        }
        if (node.isObject()) {
            return new JsonObject(Json.mapper().convertValue(node, java.util.Map.class));
        }
        if (node.isArray()) {
            return new JsonArray(Json.mapper().convertValue(node, java.util.List.class));
        }
        return Json.mapper().convertValue(node, Object.class);
    }
}
