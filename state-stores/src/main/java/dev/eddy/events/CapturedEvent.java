package dev.eddy.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.Objects;

/**
 * One captured event as the gateway writes it to {@code events.ingest} (key {@code token:distinct_id}).
 * The gateway has already authenticated the token, resolved its project and corrected the client's
 * clock skew, so {@code timestamp} is the event time every store uses.
 *
 * @param v          record version; readers accept every version up to {@link #VERSION}
 * @param uuid       event id; the topology de-duplicates on it
 * @param projectId  project the token belongs to, resolved by the gateway when it authenticated the request
 * @param token      the project API key the event was sent with
 * @param distinctId the client's id for the user, at most 200 characters
 * @param event      event name, never blank
 * @param properties event properties as sent
 * @param timestamp  event time, skew-corrected
 * @param now        when the gateway received the request
 * @param sentAt     the client's clock when it sent the request, when it said so
 * @param ip         client address, from the connection or X-Forwarded-For
 * @param siteUrl    scheme and host the request was sent to
 * @param lib        the SDK that sent the event ({@code $lib}), when it said
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CapturedEvent(
        int v,
        String uuid,
        long projectId,
        String token,
        String distinctId,
        String event,
        ObjectNode properties,
        Instant timestamp,
        Instant now,
        Instant sentAt,
        String ip,
        String siteUrl,
        String lib) {

    public static final int VERSION = 1;

    public CapturedEvent {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(distinctId, "distinct_id");
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(timestamp, "timestamp");
        if (v < 1 || v > VERSION) {
            throw new IllegalArgumentException("unsupported captured event version " + v);
        }
        if (projectId <= 0) {
            throw new IllegalArgumentException("project_id must be positive");
        }
    }

    /** The properties as JSON, as the stores keep them. */
    public byte[] propertiesJson() {
        try {
            return Json.mapper().writeValueAsBytes(properties);
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("event properties read from JSON write back as JSON", e);
        }
    }

    /** The Kafka key: events of one user of one project stay in order on one partition. */
    public String partitionKey() {
        return token + ":" + distinctId;
    }
}
