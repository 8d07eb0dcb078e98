package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.db.Jsonb;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a create or an update of an insight sets, checked: a null component is a field the request leaves as it is; a
 * set one holds its new value in a {@link Change} (whose value may itself be null: the field cleared).
 *
 * @param dashboards the dashboards it should be on, when given
 */
public record InsightFields(Change<String> name, Change<String> derivedName, Change<String> description, Change<JsonNode> filters,
                            Change<JsonNode> query, Change<Integer> order, Change<Boolean> deleted, Change<Boolean> saved,
                            Change<Boolean> favorited, Change<List<String>> tags, Optional<List<Long>> dashboards) {
    /** Longest name or derived name. */
    static final int MAX_NAME = 400;
    private static final int MAX_DESCRIPTION = 10_000;

    /** A field's new value. */
    public record Change<T>(T value) {
    }

    /** A set field as its column is written: the column's name and the value bound to it. */
    record Column(String name, Object bind) {
    }

    /** The fields a request's body sets; refused with PostHog's 400 naming the field. */
    static InsightFields of(final Body body) {
        final Change<String> name = body.has("name") ? new Change<>(body.string("name", MAX_NAME)) : null;
        final Change<String> derivedName = body.has("derived_name") ? new Change<>(body.string("derived_name", MAX_NAME)) : null;
        final Change<String> description = body.has("description")
                ? new Change<>(Optional.ofNullable(body.string("description", MAX_DESCRIPTION)).orElse("")) : null;
        final Change<JsonNode> filters = body.has("filters")
                ? new Change<>(Optional.ofNullable(body.object("filters", true)).orElse(Json.mapper().createObjectNode())) : null;
        final Change<JsonNode> query = body.has("query") ? new Change<>(queryOf(body)) : null;
        Change<Integer> order = null;
        if (body.has("order")) {
            final Long value = body.integer("order", true);
            if (value != null && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
                throw ApiError.badRequest("invalid_input", "'order' must be a 32-bit integer.", "order");
            }
            order = new Change<>(value == null ? null : value.intValue());
        }
        final Change<Boolean> deleted = body.has("deleted") ? new Change<>(body.bool("deleted")) : null;
        final Change<Boolean> saved = body.has("saved") ? new Change<>(body.bool("saved")) : null;
        final Change<Boolean> favorited = body.has("favorited") ? new Change<>(body.bool("favorited")) : null;
        final Change<List<String>> tags = body.has("tags")
                ? new Change<>(body.strings("tags").stream().map(String::trim).filter(t -> !t.isEmpty()).distinct().toList()) : null;
        final Optional<List<Long>> dashboards = body.has("dashboards") ? Optional.of(body.integers("dashboards")) : Optional.empty();
        return new InsightFields(name, derivedName, description, filters, query, order, deleted, saved, favorited, tags, dashboards);
    }

    /** An insight of a dashboard template: its name, description, filters and query (when an object), on no dashboard yet. */
    public static InsightFields ofTemplate(final String name, final String description, final JsonNode filters, final JsonNode query) {
        return new InsightFields(new Change<>(name), null, new Change<>(description), new Change<>(filters),
                query == null ? null : new Change<>(query), null, null, null, null, null, Optional.empty());
    }

    /** The name set, if the request sets one. */
    Optional<String> nameSet() {
        return name == null ? Optional.empty() : Optional.ofNullable(name.value());
    }

    /** The columns the fields set, in a fixed order. */
    List<Column> columns() {
        final List<Column> columns = new ArrayList<>();
        add(columns, "name", name, v -> v);
        add(columns, "derived_name", derivedName, v -> v);
        add(columns, "description", description, v -> v);
        add(columns, "filters", filters, Jsonb::bind);
        add(columns, "query", query, Jsonb::bind);
        add(columns, "\"order\"", order, v -> v);
        add(columns, "deleted", deleted, v -> v);
        add(columns, "saved", saved, v -> v);
        add(columns, "favorited", favorited, v -> v);
        add(columns, "tags", tags, v -> v.toArray(String[]::new));
        return columns;
    }

    private static <T> void add(final List<Column> columns, final String column, final Change<T> change,
                                final java.util.function.Function<T, Object> bind) {
        if (change != null) {
            columns.add(new Column(column, change.value() == null ? null : bind.apply(change.value())));
        }
    }

    /** {@code query} is a query node object, or its JSON as a string (the seed: "a query node JSON string"); null clears it. */
    private static JsonNode queryOf(final Body body) {
        final JsonNode raw = body.raw("query");
        if (raw == null || raw.isNull()) {
            return null;
        }
        if (raw.isTextual()) {
            try {
                final JsonNode parsed = Json.mapper().readTree(raw.asText());
                if (parsed != null && parsed.isObject()) {
                    return parsed;
                }
            } catch (final IOException e) {
                // reported below
            }
            throw ApiError.badRequest("invalid_input", "'query' must be a query node (an object or its JSON).", "query");
        }
        return body.object("query", true);
    }
}
