package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.persons.PersonsRoutes;
import dev.eddy.gateway.trends.InsightActors;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import java.util.function.Function;

/**
 * One column of an {@code ActorsQuery} of persons: the expression as asked ({@code "properties.email -- Email"},
 * PostHog's {@code -- label} included), its ClickHouse type as PostHog's response names it, and its value for a person.
 * The expressions are those of PostHog's persons lists: {@code person} (the person as PostHog's actor:
 * {@code {id, distinct_ids, properties, is_identified, created_at}}), {@code person_display_name}
 * ({@code {display_name, id, distinct_id}}), {@code id}, {@code created_at}, {@code is_identified},
 * {@code properties} (JSON text, as HogQL answers a JSON column), {@code properties.<key>} (the value as text, as
 * HogQL reads a property; null when absent), and {@code person.$delete}, a column PostHog's UI draws its delete button
 * in (null); of the persons behind an insight's number, also {@code actor} (as {@code person}), {@code event_count}
 * (their events at a trend's data point), {@code appearances} (a retention cohort's periods, 1 or 0 each) and
 * {@code matched_recordings} (none: Eddy keeps no recordings).
 */
record PersonColumn(String expression, String type, Function<InsightActors.Actor, JsonNode> value) implements QueryColumn {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** The column's value for a person of a list (no value of its own). */
    JsonNode value(final PersonState person) {
        return value.apply(new InsightActors.Actor(person, NODES.nullNode()));
    }

    /** The column's value for a person behind an insight's number. */
    JsonNode value(final InsightActors.Actor actor) {
        return value.apply(actor);
    }

    static PersonColumn parse(final String expression) {
        final int comment = expression.indexOf("--");
        final String field = (comment < 0 ? expression : expression.substring(0, comment)).trim();
        return switch (field) {
            case "person", "actor" -> new PersonColumn(expression, "Tuple(UUID, String, String, Bool, DateTime64(6, 'UTC'))",
                    a -> actor(a.person()));
            case "person_display_name" -> new PersonColumn(expression, "Tuple(String, UUID, String)", a -> displayName(a.person()));
            case "id" -> new PersonColumn(expression, "UUID", a -> NODES.textNode(a.person().uuid()));
            case "created_at" -> new PersonColumn(expression, "DateTime64(6, 'UTC')",
                    a -> NODES.textNode(ListQueries.date(a.person().createdAt())));
            case "is_identified" -> new PersonColumn(expression, "Bool", a -> NODES.booleanNode(a.person().isIdentified()));
            case "properties" -> new PersonColumn(expression, "String", a -> NODES.textNode(a.person().properties().toString()));
            case "person.$delete" -> new PersonColumn(expression, "Nothing", a -> NODES.nullNode());
            case "event_count" -> new PersonColumn(expression, "UInt64", a -> a.value().isNumber() ? a.value() : NODES.nullNode());
            case "appearances" -> new PersonColumn(expression, "Array(UInt8)", a -> a.value().isArray() ? a.value() : NODES.nullNode());
            case "matched_recordings" -> new PersonColumn(expression, "Array(Tuple)", a -> NODES.arrayNode());
            default -> {
                final String key = property(field);
                if (key == null) {
                    throw ApiError.badRequest("unsupported_query", "Eddy answers an ActorsQuery's columns person (or actor), person_display_name, "
                            + "id, created_at, is_identified, properties, properties.<key>, person.$delete, and of an insight's persons "
                            + "event_count, appearances and matched_recordings, not '" + field + "'.", "select");
                }
                yield new PersonColumn(expression, "Nullable(String)", a -> text(a.person().properties().get(key)));
            }
        };
    }

    /** The key of {@code properties.key} (also {@code person.properties.key}, and a quoted key), or null. */
    private static String property(final String field) {
        final String rest = field.startsWith("person.properties.") ? field.substring("person.properties.".length())
                : field.startsWith("properties.") ? field.substring("properties.".length()) : null;
        return rest == null || rest.isEmpty() ? null : QueryColumn.unquoted(rest);
    }

    /** A property as HogQL reads one: text for a scalar, JSON text for a list or object, null when absent or null. */
    static JsonNode text(final JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return NODES.nullNode();
        }
        return NODES.textNode(value.isValueNode() ? value.asText() : value.toString());
    }

    private static JsonNode actor(final PersonState p) {
        final ObjectNode actor = Json.mapper().createObjectNode();
        actor.put("id", p.uuid());
        actor.set("distinct_ids", Json.mapper().valueToTree(p.distinctIds()));
        actor.set("properties", p.properties());
        actor.put("is_identified", p.isIdentified());
        actor.put("created_at", ListQueries.date(p.createdAt()));
        return actor;
    }

    private static JsonNode displayName(final PersonState p) {
        final ObjectNode name = Json.mapper().createObjectNode();
        name.put("display_name", PersonsRoutes.displayName(p));
        name.put("id", p.uuid());
        name.put("distinct_id", p.distinctIds().isEmpty() ? null : p.distinctIds().get(0));
        return name;
    }
}
