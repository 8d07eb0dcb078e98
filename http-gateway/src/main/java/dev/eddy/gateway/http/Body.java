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
        final String text = ctx.body() == null ? null : ctx.body().asString();
        if (text == null || text.isBlank()) {
            return new Body(Json.mapper().createObjectNode());
        }
        try {
            final JsonNode node = Json.mapper().readTree(text);
            if (!node.isObject()) {
                throw ApiError.badRequest("parse_error", "The request body must be a JSON object.", null);
            }
            return new Body((ObjectNode) node);
        } catch (final JacksonException e) {
            throw ApiError.badRequest("parse_error", "JSON parse error: " + e.getOriginalMessage(), null);
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
