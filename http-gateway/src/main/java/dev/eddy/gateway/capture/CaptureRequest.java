package dev.eddy.gateway.capture;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The parsed body of an ingestion request: its project API key, its raw events in request order, and whether
 * it is a historical migration. Accepts one event, {@code {"batch": [...]}}, or a bare array of events.
 *
 * @param token      the project API key, from {@code api_key}, {@code token} or {@code $token} at the top
 *                   level, else from the first event's {@code properties.token}/{@code $token}
 * @param events     raw event objects
 * @param historical {@code historical_migration: true}
 * @param sentAt     the request's {@code sent_at}: the client's clock when it sent the request
 */
public record CaptureRequest(Optional<String> token, List<RawEvent> events, boolean historical, Optional<Instant> sentAt) {
    private static final String[] TOKEN_FIELDS = {"api_key", "token", "$token"};
    private static final String PROPERTIES = "properties";
    private static final String BATCH = "batch";

    /**
     * One event as sent.
     *
     * @param json       the parsed event object
     * @param properties the bytes of its {@code properties} object exactly as sent (so the envelope can carry them
     *                   without serializing the tree again), or null when it has no such object
     */
    public record RawEvent(ObjectNode json, byte[] properties) {
    }

    public static CaptureRequest parse(final byte[] body) {
        if (notUtf8(body)) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: the body must be UTF-8 JSON.", null);
        }
        try (JsonParser parser = Json.mapper().createParser(body)) {
            return parse(parser, body);
        } catch (final JacksonException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: " + e.getOriginalMessage(), null);
        } catch (final IOException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data.", null);
        }
    }

    /**
     * Whether the body is JSON in UTF-16 or UTF-32, which Jackson would detect and read, but whose byte offsets the
     * properties' raw bytes cannot be cut by. JSON starts with an ASCII character: a zero byte or a UTF-16 byte order
     * mark among the first two bytes means another encoding (a UTF-8 byte order mark is fine).
     */
    private static boolean notUtf8(final byte[] body) {
        for (int i = 0; i < Math.min(2, body.length); i++) {
            final int b = body[i] & 0xff;
            if (b == 0 || b == 0xfe || b == 0xff) {
                return true;
            }
        }
        return false;
    }

    private static CaptureRequest parse(final JsonParser parser, final byte[] body) throws IOException {
        final JsonToken first = parser.nextToken();
        final List<RawEvent> events = new ArrayList<>();
        if (first == JsonToken.START_ARRAY) {
            readEvents(parser, body, events);
            return new CaptureRequest(eventToken(events).map(CaptureRequest::validToken), events, false, Optional.empty());
        }
        if (first != JsonToken.START_OBJECT) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: expected a JSON object or array.", null);
        }
        // The root is either an envelope with a batch, or itself the one event.
        final RawEvent root = readObject(parser, body, events);
        if (!root.json().has(BATCH)) {
            events.add(root);
        }
        final Optional<String> token = topLevelToken(root.json()).or(() -> eventToken(events));
        return new CaptureRequest(token.map(CaptureRequest::validToken), events,
                root.json().path("historical_migration").asBoolean(false), EventTimestamps.parse(root.json().get("sent_at")));
    }

    /** Reads the events of an array whose START_ARRAY is the current token, up to its END_ARRAY. */
    private static void readEvents(final JsonParser parser, final byte[] body, final List<RawEvent> events) throws IOException {
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (token != JsonToken.START_OBJECT) {
                throw ApiError.badRequest("invalid_payload", "Every event must be a JSON object.", BATCH);
            }
            events.add(readObject(parser, body, null));
        }
    }

    /**
     * Reads the object whose START_OBJECT is the current token, noting where its {@code properties} object lies
     * in {@code body}. With {@code batch} (the root only), a {@code batch} array's events go there and the tree
     * keeps an empty {@code batch} array as the sign that the root was an envelope.
     */
    private static RawEvent readObject(final JsonParser parser, final byte[] body, final List<RawEvent> batch)
            throws IOException {
        final ObjectNode node = Json.mapper().createObjectNode();
        byte[] properties = null;
        for (String field = parser.nextFieldName(); field != null; field = parser.nextFieldName()) {
            final JsonToken value = parser.nextToken();
            if (batch != null && BATCH.equals(field)) {
                if (value != JsonToken.START_ARRAY) {
                    throw ApiError.badRequest("invalid_payload", "'batch' must be an array of events.", BATCH);
                }
                batch.clear();
                readEvents(parser, body, batch);
                node.putArray(BATCH);
            } else if (PROPERTIES.equals(field) && value == JsonToken.START_OBJECT) {
                final long start = parser.currentTokenLocation().getByteOffset();
                node.set(field, Json.mapper().readTree(parser));
                properties = Arrays.copyOfRange(body, (int) start, (int) parser.currentLocation().getByteOffset());
            } else {
                node.set(field, valueTree(parser));
                properties = PROPERTIES.equals(field) ? null : properties;
            }
        }
        return new RawEvent(node, properties);
    }

    /** The value whose first token is current, as a tree (JSON null as a null node). */
    private static JsonNode valueTree(final JsonParser parser) throws IOException {
        final JsonNode node = Json.mapper().readTree(parser);
        return node == null ? NullNode.getInstance() : node;
    }

    private static Optional<String> topLevelToken(final JsonNode root) {
        for (final String field : TOKEN_FIELDS) {
            final JsonNode value = root.get(field);
            if (value != null && value.isTextual()) {
                return Optional.of(value.asText());
            }
        }
        return Optional.empty();
    }

    private static Optional<String> eventToken(final List<RawEvent> events) {
        for (final RawEvent raw : events) {
            final JsonNode event = raw.json();
            final Optional<String> token = topLevelToken(event).or(() -> {
                final JsonNode props = event.path("properties");
                for (final String field : new String[] {"token", "$token"}) {
                    if (props.path(field).isTextual()) {
                        return Optional.of(props.get(field).asText());
                    }
                }
                return Optional.empty();
            });
            if (token.isPresent()) {
                return token;
            }
        }
        return Optional.empty();
    }

    /** PostHog's token rules: trimmed, non-empty, at most 64 ASCII characters, no NUL, not a personal key. */
    private static String validToken(final String raw) {
        final String token = raw.trim();
        if (!ProjectTokens.wellFormed(token)) {
            throw ApiError.unauthenticated("invalid_api_key",
                    "Project API key invalid. You can find your project API key in your project settings.");
        }
        return token;
    }
}
