package dev.eddy.gateway.capture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.uuid.Generators;
import com.fasterxml.uuid.impl.TimeBasedEpochGenerator;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * Turns one raw event of a request into the {@link CapturedEvent} written to Kafka, or says why it is not
 * ingested: PostHog drops an event without a name or without a distinct id and answers 200 all the same.
 */
public final class EventBuilder {
    /** PostHog cuts distinct ids to 200 characters. */
    static final int MAX_DISTINCT_ID_LENGTH = 200;
    /** One generator per thread: each has its own SecureRandom, so event loops do not contend on one lock. */
    private static final ThreadLocal<TimeBasedEpochGenerator> UUID_V7 =
            ThreadLocal.withInitial(() -> Generators.timeBasedEpochGenerator(new SecureRandom()));

    private EventBuilder() {
    }

    /**
     * What every event of one request shares.
     *
     * @param projectId   the project the token resolved to
     * @param token       that token
     * @param now         when the request arrived
     * @param sentAt      the client's clock when it sent the request, if it said
     * @param ip          the client's address
     * @param siteUrl     scheme and host the request was sent to
     * @param defaultName name of events that have none ({@code $identify} on /engage), or empty
     * @param geoip       the request's GeoIP lookups, applied to every event ({@link GeoIpTransformation})
     * @param historical  a historical migration: its events are replayed as first captured, so they get neither the
     *                    request's address as {@code $ip} nor its location
     */
    public record RequestContext(long projectId, String token, Instant now, Optional<Instant> sentAt, String ip,
                                 String siteUrl, Optional<String> defaultName, GeoIpTransformation.Lookups geoip, boolean historical) {
        /** A live request whose events get no {@code $geoip_*} properties. */
        public RequestContext(final long projectId, final String token, final Instant now, final Optional<Instant> sentAt,
                              final String ip, final String siteUrl, final Optional<String> defaultName) {
            this(projectId, token, now, sentAt, ip, siteUrl, defaultName, GeoIpTransformation.Lookups.NONE, false);
        }
    }

    /** An event to ingest, or the reason it is not ingested. */
    public sealed interface Built permits Accepted, Dropped {
    }

    /**
     * @param event         the envelope to produce
     * @param rawProperties the event's properties exactly as sent, when the envelope carries them unchanged
     *                      (written as they are instead of serializing the tree again); else null
     */
    public record Accepted(CapturedEvent event, byte[] rawProperties) implements Built {
    }

    /** @param reason metric label: {@code missing_event_name}, {@code missing_distinct_id}, {@code empty_distinct_id} */
    public record Dropped(String reason) implements Built {
    }

    public static Built build(final JsonNode raw, final RequestContext request) {
        return build(new CaptureRequest.RawEvent((ObjectNode) raw, null), request);
    }

    public static Built build(final CaptureRequest.RawEvent sent, final RequestContext request) {
        final ObjectNode raw = sent.json();
        final JsonNode nameNode = raw.get("event");
        final Optional<String> name = nameNode != null && nameNode.isTextual() && !nameNode.asText().isBlank()
                ? Optional.of(nameNode.asText())
                : request.defaultName().filter(n -> nameNode == null || nameNode.isNull());
        if (name.isEmpty()) {
            return new Dropped("missing_event_name");
        }
        // The request's tree was parsed for this request alone: the envelope takes its properties as they are.
        final ObjectNode properties = raw.path("properties").isObject()
                ? (ObjectNode) raw.get("properties")
                : Json.mapper().createObjectNode();
        final JsonNode id = distinctIdNode(raw, properties);
        if (id == null || id.isNull() || id.isContainerNode()) {
            return new Dropped("missing_distinct_id");
        }
        final String distinctId = id.isTextual() ? id.asText() : id.toString();
        if (distinctId.isBlank()) {
            return new Dropped("empty_distinct_id");
        }
        // Top-level $set/$set_once belong to the person update, as if sent inside properties.
        boolean changed = false;
        for (final String field : new String[] {"$set", "$set_once"}) {
            if (raw.path(field).isObject() && !properties.has(field)) {
                properties.set(field, raw.get(field));
                changed = true;
            }
        }
        // After the fold: PostHog's transformations see the top-level $set/$set_once inside properties.
        final byte[] rawProperties = withIp(properties, request.historical() ? null : request.ip(),
                request.geoip().apply(properties).properties(changed ? null : sent.properties()));
        final Optional<Instant> sentAt = EventTimestamps.parse(raw.get("sent_at")).or(request::sentAt);
        final String lib = properties.path("$lib").isTextual() ? properties.get("$lib").asText() : null;
        return new Accepted(new CapturedEvent(CapturedEvent.VERSION, uuid(raw), request.projectId(), request.token(),
                distinctId.length() > MAX_DISTINCT_ID_LENGTH ? distinctId.substring(0, MAX_DISTINCT_ID_LENGTH) : distinctId,
                name.get(), properties, EventTimestamps.resolve(raw, request.sentAt(), request.now()), request.now(),
                sentAt.orElse(null), request.ip(), request.siteUrl(), lib), rawProperties);
    }

    /**
     * PostHog's {@code $ip}: the capture address is added to an event that did not send an address of its own (no
     * {@code $ip}, or an empty one), as PostHog's ingestion does. {@code bytes} are the properties as they will be
     * written (null: from the tree); the address is appended to them when the event had no {@code $ip} key at all,
     * else they are written from the tree.
     */
    static byte[] withIp(final ObjectNode properties, final String ip, final byte[] bytes) {
        final JsonNode own = properties.get("$ip");
        if (ip == null || ip.isEmpty() || own != null && !own.isNull() && !(own.isTextual() && own.asText().isEmpty())) {
            return bytes;
        }
        properties.put("$ip", ip);
        if (bytes == null || own != null) {
            return null;
        }
        return GeoIpTransformation.Applied.append(bytes, ("\"$ip\":" + properties.get("$ip").toString()).getBytes(StandardCharsets.UTF_8));
    }

    private static JsonNode distinctIdNode(final JsonNode raw, final ObjectNode properties) {
        for (final JsonNode candidate : new JsonNode[] {raw.get("distinct_id"), raw.get("$distinct_id"),
                properties.get("distinct_id"), properties.get("$distinct_id")}) {
            if (candidate != null && !candidate.isNull()) {
                return candidate;
            }
        }
        return null;
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
        return UUID_V7.get().generate().toString();
    }
}
