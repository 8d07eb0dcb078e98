package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.EventListQuery;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.persons.PersonsRoutes;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.io.IOException;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * One column of an {@code EventsQuery}: the expression as asked (PostHog's {@code -- label} included), its ClickHouse
 * type as PostHog's response names it, and its value for a listed event. The expressions are those of PostHog's
 * events tables: {@code *} (the event: {@code {uuid, event, properties, timestamp, team_id, distinct_id,
 * elements_chain, created_at}}, {@code created_at} null: Eddy keeps no ingestion time), {@code event}, {@code uuid},
 * {@code distinct_id}, {@code timestamp} (in the project's time zone), {@code team_id}, {@code person_id},
 * {@code elements_chain}, {@code properties} (JSON text), {@code properties.<key>} and {@code person.properties.<key>}
 * (as text, as HogQL reads a property), {@code person} ({@code {uuid, created_at, properties: {name, email},
 * distinct_id}}, as PostHog's events runner builds it), {@code person_display_name}, and {@code coalesce(...)} of
 * these (the first that is not null).
 */
record EventColumn(String expression, String type, Value value) implements QueryColumn {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** A column's value for one event. */
    interface Value {
        JsonNode of(Event event);
    }

    /** One listed event, with what columns read of it: its properties parsed once, the project's time zone. */
    static final class Event {
        private final EventListQuery.Row row;
        private final long projectId;
        private final ZoneId zone;
        private ObjectNode properties;

        Event(final EventListQuery.Row row, final long projectId, final ZoneId zone) {
            this.row = row;
            this.projectId = projectId;
            this.zone = zone;
        }

        ObjectNode properties() {
            if (properties == null) {
                try {
                    properties = Json.mapper().readTree(row.event().properties()) instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
                } catch (final IOException e) {
                    properties = Json.mapper().createObjectNode();
                }
            }
            return properties;
        }

        String timestamp() {
            return TimelineEvent.instant(row.event().timeMicros()).atZone(zone).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        }
    }

    JsonNode value(final Event event) {
        return value.of(event);
    }

    static EventColumn parse(final String expression) {
        final int comment = expression.indexOf("--");
        return new EventColumn(expression, type(field(expression, comment)), value(field(expression, comment)));
    }

    private static String field(final String expression, final int comment) {
        return (comment < 0 ? expression : expression.substring(0, comment)).trim();
    }

    private static String type(final String field) {
        return switch (field) {
            case "*" -> "Tuple(UUID, String, String, DateTime64(6, 'UTC'), Int64, String, String, DateTime64(6, 'UTC'))";
            case "person" -> "Tuple(String, UUID, DateTime64(6, 'UTC'), String, String)";
            case "person_display_name" -> "Tuple(String, UUID, String)";
            case "event", "distinct_id", "elements_chain", "properties" -> "String";
            case "uuid", "person_id" -> "UUID";
            case "timestamp" -> "DateTime64(6, 'UTC')";
            case "team_id" -> "Int64";
            default -> "Nullable(String)";
        };
    }

    private static Value value(final String field) {
        return switch (field) {
            case "*" -> EventColumn::whole;
            case "event" -> e -> NODES.textNode(e.row.event().event());
            case "uuid" -> e -> NODES.textNode(e.row.event().uuid().toString());
            case "distinct_id" -> e -> NODES.textNode(e.row.event().distinctId());
            case "timestamp" -> e -> NODES.textNode(e.timestamp());
            case "team_id" -> e -> NODES.numberNode(e.projectId);
            case "person_id" -> e -> NODES.textNode(e.row.person());
            case "elements_chain" -> e -> NODES.textNode(e.properties().path("$elements_chain").asText(""));
            case "properties" -> e -> NODES.textNode(e.properties().toString());
            case "person" -> EventColumn::person;
            case "person_display_name" -> EventColumn::displayName;
            default -> compound(field);
        };
    }

    /** {@code properties.<key>}, {@code person.properties.<key>} or {@code coalesce(...)}; anything else is refused. */
    private static Value compound(final String field) {
        if (field.startsWith("coalesce(") && field.endsWith(")")) {
            final List<Value> arguments = new ArrayList<>();
            for (final String argument : field.substring("coalesce(".length(), field.length() - 1).split(",")) {
                arguments.add(value(argument.trim()));
            }
            return e -> {
                for (final Value argument : arguments) {
                    final JsonNode value = argument.of(e);
                    if (!value.isNull()) {
                        return value;
                    }
                }
                return NODES.nullNode();
            };
        }
        if (field.startsWith("person.properties.")) {
            final String key = key(field.substring("person.properties.".length()));
            return e -> PersonColumn.text(e.row.personProperties().get(key));
        }
        if (field.startsWith("properties.")) {
            final String key = key(field.substring("properties.".length()));
            return e -> PersonColumn.text(e.properties().get(key));
        }
        throw ApiError.badRequest("unsupported_query", "Eddy answers an EventsQuery's columns *, event, uuid, distinct_id, timestamp, "
                + "team_id, person_id, elements_chain, properties, properties.<key>, person, person.properties.<key>, person_display_name "
                + "and coalesce(...) of them, not '" + field + "'.", "select");
    }

    /** A property column's key; none is refused. */
    private static String key(final String written) {
        final String key = QueryColumn.unquoted(written);
        if (key.isEmpty()) {
            throw ApiError.badRequest("unsupported_query", "A property column needs a key.", "select");
        }
        return key;
    }

    private static JsonNode whole(final Event e) {
        final ObjectNode event = Json.mapper().createObjectNode();
        event.put("uuid", e.row.event().uuid().toString());
        event.put("event", e.row.event().event());
        event.set("properties", e.properties());
        event.put("timestamp", e.timestamp());
        event.put("team_id", e.projectId);
        event.put("distinct_id", e.row.event().distinctId());
        event.put("elements_chain", e.properties().path("$elements_chain").asText(""));
        event.putNull("created_at");
        return event;
    }

    private static JsonNode person(final Event e) {
        final ObjectNode person = Json.mapper().createObjectNode();
        person.put("uuid", e.row.person());
        person.put("created_at", e.row.personCreatedAtMicros() == Long.MIN_VALUE ? null
                : TimelineEvent.instant(e.row.personCreatedAtMicros()).atZone(e.zone).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
        final ObjectNode properties = person.putObject("properties");
        for (final String key : new String[] {"name", "email"}) {
            final JsonNode value = e.row.personProperties().get(key);
            if (value != null && !value.isNull()) {
                properties.set(key, value);
            }
        }
        person.put("distinct_id", e.row.event().distinctId());
        return person;
    }

    private static JsonNode displayName(final Event e) {
        final ObjectNode name = Json.mapper().createObjectNode();
        name.put("display_name", PersonsRoutes.displayName(e.row.personProperties(), e.row.event().distinctId()));
        name.put("id", e.row.person());
        name.put("distinct_id", e.row.event().distinctId());
        return name;
    }
}
