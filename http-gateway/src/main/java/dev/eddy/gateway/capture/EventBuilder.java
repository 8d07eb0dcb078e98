package dev.eddy.gateway.capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.uuid.Generators;
import com.fasterxml.uuid.impl.TimeBasedEpochGenerator;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.UUID;

/**
 * Turns one raw event of a request into the {@link CapturedEvent} written to Kafka. An event without a name
 * or a distinct id is not ingested (PostHog answers 200 for the request all the same): the result is empty.
 */
public final class EventBuilder {
    /** PostHog cuts distinct ids to 200 characters. */
    static final int MAX_DISTINCT_ID_LENGTH = 200;
    private static final TimeBasedEpochGenerator UUID_V7 = Generators.timeBasedEpochGenerator();

    private EventBuilder() {
    }

    /**
     * @param raw       the event object as sent
     * @param projectId the project its token resolved to
     * @param token     that token
     * @param now       when the request arrived
     * @param ip        the client's address
     */
    public static Optional<CapturedEvent> build(final JsonNode raw, final long projectId, final String token,
                                                final Instant now, final String ip) {
        final JsonNode name = raw.get("event");
        if (name == null || !name.isTextual() || name.asText().isBlank()) {
            return Optional.empty();
        }
        final ObjectNode properties = raw.path("properties").isObject()
                ? ((ObjectNode) raw.get("properties")).deepCopy()
                : Json.mapper().createObjectNode();
        final Optional<String> distinctId = distinctId(raw, properties);
        if (distinctId.isEmpty()) {
            return Optional.empty();
        }
        // Top-level $set/$set_once belong to the person update, as if sent inside properties.
        for (final String field : new String[] {"$set", "$set_once"}) {
            if (raw.path(field).isObject() && !properties.has(field)) {
                properties.set(field, raw.get(field).deepCopy());
            }
        }
        return Optional.of(new CapturedEvent(CapturedEvent.VERSION, uuid(raw), projectId, token, distinctId.get(),
                name.asText(), properties, timestamp(raw, now), now, null, ip));
    }

    private static Optional<String> distinctId(final JsonNode raw, final ObjectNode properties) {
        JsonNode id = raw.get("distinct_id");
        if (id == null || id.isNull()) {
            id = raw.get("$distinct_id");
        }
        if (id == null || id.isNull()) {
            id = properties.get("distinct_id");
        }
        if (id == null || id.isNull() || id.isContainerNode()) {
            return Optional.empty();
        }
        final String text = id.isTextual() ? id.asText() : id.toString();
        if (text.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(text.length() > MAX_DISTINCT_ID_LENGTH ? text.substring(0, MAX_DISTINCT_ID_LENGTH) : text);
    }

    private static String uuid(final JsonNode raw) {
        final JsonNode given = raw.get("uuid");
        if (given != null && given.isTextual()) {
            try {
                return UUID.fromString(given.asText()).toString();
            } catch (final IllegalArgumentException e) {
                // not a UUID: the server assigns one
            }
        }
        return UUID_V7.generate().toString();
    }

    private static Instant timestamp(final JsonNode raw, final Instant now) {
        final JsonNode given = raw.get("timestamp");
        if (given != null && given.isTextual()) {
            try {
                return OffsetDateTime.parse(given.asText()).toInstant();
            } catch (final DateTimeParseException e) {
                try {
                    // PostHog accepts an ISO date-time without a zone and reads it as UTC.
                    return java.time.LocalDateTime.parse(given.asText()).toInstant(java.time.ZoneOffset.UTC);
                } catch (final DateTimeParseException ignored) {
                    return now;
                }
            }
        }
        return now;
    }
}
