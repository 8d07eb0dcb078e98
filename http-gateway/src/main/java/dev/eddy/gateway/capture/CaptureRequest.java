package dev.eddy.gateway.capture;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
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
public record CaptureRequest(Optional<String> token, List<JsonNode> events, boolean historical, Optional<Instant> sentAt) {
    /** Longest project API key PostHog accepts. */
    static final int MAX_TOKEN_LENGTH = 64;
    private static final String[] TOKEN_FIELDS = {"api_key", "token", "$token"};

    public static CaptureRequest parse(final byte[] body) {
        final JsonNode root;
        try {
            root = Json.mapper().readTree(body);
        } catch (final JacksonException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: " + e.getOriginalMessage(), null);
        } catch (final IOException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data.", null);
        }
        if (root == null || root.isMissingNode() || !(root.isObject() || root.isArray())) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: expected a JSON object or array.", null);
        }
        final List<JsonNode> events = new ArrayList<>();
        if (root.isArray()) {
            root.forEach(events::add);
        } else if (root.has("batch")) {
            final JsonNode batch = root.get("batch");
            if (!batch.isArray()) {
                throw ApiError.badRequest("invalid_payload", "'batch' must be an array of events.", "batch");
            }
            batch.forEach(events::add);
        } else {
            events.add(root);
        }
        for (final JsonNode event : events) {
            if (!event.isObject()) {
                throw ApiError.badRequest("invalid_payload", "Every event must be a JSON object.", "batch");
            }
        }
        final Optional<String> token = root.isObject() ? topLevelToken(root).or(() -> eventToken(events)) : eventToken(events);
        return new CaptureRequest(token.map(CaptureRequest::validToken), events,
                root.isObject() && root.path("historical_migration").asBoolean(false),
                root.isObject() ? EventTimestamps.parse(root.get("sent_at")) : Optional.empty());
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

    private static Optional<String> eventToken(final List<JsonNode> events) {
        for (final JsonNode event : events) {
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
        final boolean valid = !token.isEmpty()
                && token.length() <= MAX_TOKEN_LENGTH
                && token.chars().allMatch(c -> c > 0 && c < 128)
                && !token.startsWith("phx_");
        if (!valid) {
            throw ApiError.unauthenticated("invalid_api_key",
                    "Project API key invalid. You can find your project API key in your project settings.");
        }
        return token;
    }
}
