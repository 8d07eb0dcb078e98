package dev.eddy.gateway.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.flags.BoundedRegex;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import dev.eddy.trends.PropertyFilter;
import dev.eddy.trends.Selector;
import java.util.List;
import java.util.Set;

/**
 * An action's steps as PostHog stores them: every step with its ten fields ({@code event}, {@code properties},
 * {@code selector}, {@code tag_name}, {@code text}, {@code text_matching}, {@code href}, {@code href_matching},
 * {@code url}, {@code url_matching}), {@code url_matching} {@code contains} when not given, other keys dropped. What a
 * query could not match is refused here, with a 400 naming the step: blank texts, unknown matchings, a regex RE2 will
 * not compile, a selector that makes no expression, property filters a query refuses.
 */
public final class ActionSteps {
    /** The most steps one action may have. */
    static final int MAX_STEPS = 100;
    private static final List<String> TEXTS = List.of("event", "selector", "tag_name", "text", "href", "url");
    private static final Set<String> MATCHINGS = Set.of("contains", "regex", "exact");
    private static final int MAX_TEXT = 65_535;

    private ActionSteps() {
    }

    /**
     * The steps as stored.
     *
     * @throws ApiError 400 naming what is wrong
     */
    public static ArrayNode normalize(final JsonNode given) {
        final ArrayNode steps = Json.mapper().createArrayNode();
        if (given == null || given.isNull()) {
            return steps;
        }
        if (!given.isArray()) {
            throw invalid("Expected a list of items but got type \"" + given.getNodeType().name().toLowerCase(java.util.Locale.ROOT) + "\".");
        }
        if (given.size() > MAX_STEPS) {
            throw invalid("An action has at most " + MAX_STEPS + " steps.");
        }
        for (int i = 0; i < given.size(); i++) {
            steps.add(step(given.get(i), i));
        }
        return steps;
    }

    private static ObjectNode step(final JsonNode given, final int index) {
        if (!given.isObject()) {
            throw invalid("Step " + index + ": expected an object.");
        }
        final ObjectNode step = Json.mapper().createObjectNode();
        for (final String field : List.of("event", "properties", "selector", "tag_name", "text", "text_matching", "href", "href_matching",
                "url", "url_matching")) {
            final JsonNode value = given.get(field);
            if (TEXTS.contains(field)) {
                step.set(field, text(value, index, field));
            } else if (field.endsWith("_matching")) {
                step.set(field, matching(value, given.has(field) || !"url_matching".equals(field) ? null : "contains", index, field));
            } else {
                step.set(field, properties(value, index));
            }
        }
        for (final String part : List.of("url", "href", "text")) {
            if (step.path(part).isTextual() && "regex".equals(step.path(part + "_matching").asText()) && BoundedRegex.compile(step.get(part).asText()).isEmpty()) {
                throw invalid("Step " + index + ": " + part + " is not a valid regular expression (RE2).");
            }
        }
        if (step.path("selector").isTextual()) {
            try {
                Selector.parse(step.get("selector").asText());
            } catch (final IllegalArgumentException e) {
                throw invalid("Step " + index + ": " + e.getMessage());
            }
        }
        return step;
    }

    private static JsonNode text(final JsonNode value, final int index, final String field) {
        if (value == null || value.isNull()) {
            return Json.mapper().nullNode();
        }
        if (!value.isValueNode()) {
            throw invalid("Step " + index + ": " + field + " must be text.");
        }
        final String text = "url".equals(field) || "selector".equals(field) ? value.asText().strip() : value.asText();
        if (text.isEmpty() || text.isBlank()) {
            throw invalid("Step " + index + ": " + field + " may not be blank.");
        }
        if (text.length() > MAX_TEXT) {
            throw invalid("Step " + index + ": " + field + " has at most " + MAX_TEXT + " characters.");
        }
        return Json.mapper().getNodeFactory().textNode(text);
    }

    private static JsonNode matching(final JsonNode value, final String fallback, final int index, final String field) {
        if (value == null || value.isNull()) {
            return fallback == null ? Json.mapper().nullNode() : Json.mapper().getNodeFactory().textNode(fallback);
        }
        if (!value.isTextual() || !MATCHINGS.contains(value.asText())) {
            throw invalid("Step " + index + ": " + field + " \"" + value.asText() + "\" is not a valid choice (contains, regex, exact).");
        }
        return value;
    }

    private static JsonNode properties(final JsonNode value, final int index) {
        if (value == null || value.isNull()) {
            return Json.mapper().nullNode();
        }
        if (!value.isArray()) {
            throw invalid("Step " + index + ": properties must be a list of property filters.");
        }
        try {
            PropertyFilter.parse(value);
        } catch (final IllegalArgumentException e) {
            throw invalid("Step " + index + ": " + e.getMessage());
        }
        return value;
    }

    /** The steps as the API shows them: each with its {@code selector_regex} (null without a selector). */
    public static ArrayNode view(final JsonNode stored) {
        final ArrayNode view = Json.mapper().createArrayNode();
        for (final JsonNode step : stored) {
            final ObjectNode shown = ((ObjectNode) step).deepCopy();
            final JsonNode selector = step.get("selector");
            String regex = null;
            if (selector != null && selector.isTextual()) {
                try {
                    regex = Selector.parse(selector.asText()).regex();
                } catch (final IllegalArgumentException e) {
                    regex = null;
                }
            }
            shown.put("selector_regex", regex);
            view.add(shown);
        }
        return view;
    }

    private static ApiError invalid(final String detail) {
        return ApiError.badRequest("invalid_input", detail, "steps");
    }
}
