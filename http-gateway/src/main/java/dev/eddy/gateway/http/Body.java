package dev.eddy.gateway.http;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;

/**
 * Typed reading of a management request's JSON body. A field of the wrong type is a 400 naming it; a field the
 * resource does not know is ignored, as PostHog's API does.
 */
public final class Body {
    private final ObjectNode json;

    private Body(final ObjectNode json) {
        this.json = json;
    }

    /** The request's JSON object; an empty body reads as {@code {}}. */
    public static Body of(final RoutingContext ctx) {
        return parse(ctx.body() == null ? null : ctx.body().asString());
    }

    /** A body of fields read otherwise (a form's), refused where a JSON body's would be. */
    public static Body of(final ObjectNode fields) {
        fields.fields().forEachRemaining(field -> storable(field.getKey(), field.getKey(), field.getValue()));
        return new Body(fields);
    }

    /** The JSON object in {@code text}; blank reads as {@code {}}. */
    static Body parse(final String text) {
        final ObjectNode node = object(text);
        node.fields().forEachRemaining(field -> storable(field.getKey(), field.getKey(), field.getValue()));
        return new Body(node);
    }

    /**
     * The JSON object in a request's {@code text} (blank reads as {@code {}}), not checked for storage: a query's body.
     * Text that is not JSON is PostHog's 400 {@code parse_error}; JSON that is not an object, its 400 {@code invalid_input}
     * ({@code Invalid data. Expected a dictionary, but got list.}).
     */
    public static ObjectNode object(final String text) {
        if (text == null || text.isBlank()) {
            return Json.mapper().createObjectNode();
        }
        try {
            final JsonNode node = Json.mapper().readTree(text);
            if (!node.isObject()) {
                throw ApiError.badRequest("invalid_input", "Invalid data. Expected a dictionary, but got " + pythonType(node) + ".",
                        "non_field_errors");
            }
            return (ObjectNode) node;
        } catch (final JacksonException e) {
            throw ApiError.badRequest("parse_error", "JSON parse error: " + e.getOriginalMessage(), null);
        }
    }

    /** Why {@code text}, which is not a JSON object, is refused: the error {@link #object} throws for it. */
    static ApiError refusal(final String text) {
        try {
            object(text);
        } catch (final ApiError e) {
            return e;
        }
        throw new IllegalArgumentException("a JSON object is not refused");
    }

    /** The name Python (PostHog's serializers) gives the type of a JSON value. */
    private static String pythonType(final JsonNode node) {
        if (node.isArray()) {
            return "list";
        }
        if (node.isTextual()) {
            return "str";
        }
        if (node.isIntegralNumber()) {
            return "int";
        }
        if (node.isNumber()) {
            return "float";
        }
        return node.isBoolean() ? "bool" : "NoneType";
    }

    /** A query parameter's text as {@link #storable} refuses it (null passes: the parameter is absent). */
    public static String storableParam(final String name, final String text) {
        if (text != null) {
            storable(name, text, null);
        }
        return text;
    }

    /**
     * Refuses text PostgreSQL cannot store (it fails the whole statement): a NUL character, or a surrogate without
     * its pair (JSON's {@code \\ud800} escapes allow it), anywhere in the value of {@code field}, keys included.
     * The messages are Django REST framework's, as PostHog answers.
     */
    private static void storable(final String field, final String text, final JsonNode value) {
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (c == 0) {
                throw ApiError.badRequest("null_characters_not_allowed", "Null characters are not allowed.", field);
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw ApiError.badRequest("surrogate_characters_not_allowed",
                        String.format(java.util.Locale.ROOT, "Surrogate characters are not allowed: U+%04X.", (int) c), field);
            }
        }
        if (value == null) {
            return;
        }
        if (value.isTextual()) {
            storable(field, value.asText(), null);
        } else if (value.isObject()) {
            value.fields().forEachRemaining(entry -> storable(field, entry.getKey(), entry.getValue()));
        } else if (value.isArray()) {
            value.forEach(item -> storable(field, "", item));
        }
    }

    public boolean has(final String field) {
        return json.has(field);
    }

    public JsonNode raw(final String field) {
        return json.get(field);
    }

    /** A string or null. */
    public String string(final String field, final int maxLength) {
        final JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw invalid(field, "a string");
        }
        if (value.asText().length() > maxLength) {
            throw ApiError.badRequest("max_length", "Ensure '" + field + "' has no more than " + maxLength + " characters.", field);
        }
        return value.asText();
    }

    public boolean bool(final String field) {
        final JsonNode value = json.get(field);
        if (value == null || !value.isBoolean()) {
            throw invalid(field, "a boolean");
        }
        return value.booleanValue();
    }

    /** An integer (or null when {@code nullable}). */
    public Long integer(final String field, final boolean nullable) {
        final JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            if (nullable) {
                return null;
            }
            throw invalid(field, "an integer");
        }
        if (!value.canConvertToLong() || !value.isIntegralNumber()) {
            throw invalid(field, "an integer");
        }
        return value.longValue();
    }

    /** A JSON object (or null when {@code nullable}). */
    public JsonNode object(final String field, final boolean nullable) {
        final JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            if (nullable) {
                return null;
            }
            throw invalid(field, "an object");
        }
        if (!value.isObject()) {
            throw invalid(field, "an object");
        }
        return value;
    }

    public List<String> strings(final String field) {
        final JsonNode value = json.get(field);
        if (value == null || !value.isArray()) {
            throw invalid(field, "a list of strings");
        }
        final List<String> strings = new ArrayList<>();
        for (final JsonNode item : value) {
            if (!item.isTextual()) {
                throw invalid(field, "a list of strings");
            }
            strings.add(item.asText());
        }
        return strings;
    }

    public List<Long> integers(final String field) {
        final JsonNode value = json.get(field);
        if (value == null || !value.isArray()) {
            throw invalid(field, "a list of integers");
        }
        final List<Long> ids = new ArrayList<>();
        for (final JsonNode item : value) {
            if (!item.isIntegralNumber() || !item.canConvertToLong()) {
                throw invalid(field, "a list of integers");
            }
            ids.add(item.longValue());
        }
        return ids;
    }

    private static ApiError invalid(final String field, final String what) {
        return ApiError.badRequest("invalid_input", "'" + field + "' must be " + what + ".", field);
    }
}
