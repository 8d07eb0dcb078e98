package dev.eddy.gateway.capture;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.IsoInstants;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * PostHog's event-time rules. With a {@code timestamp} and a {@code sent_at}, the client's clock skew is
 * removed: {@code now + (timestamp − sent_at)} (unless {@code $ignore_sent_at}); a {@code timestamp} alone is
 * taken as is; an {@code offset} in milliseconds means {@code now − offset}; nothing means {@code now}. A time
 * more than 23 hours ahead of the server's clock, or one that does not parse, becomes {@code now}; one whose year is
 * outside 0 to 9999 (or that overflows computing it) becomes the Unix epoch, as PostHog's capture does.
 */
public final class EventTimestamps {
    static final Duration MAX_FUTURE = Duration.ofHours(23);
    /** PostHog's capture puts an event whose year falls outside 0 to 9999 at the Unix epoch. */
    private static final Instant MIN = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant MAX = Instant.parse("9999-12-31T23:59:59.999999999Z");

    private EventTimestamps() {
    }

    /**
     * @param event  the raw event
     * @param sentAt the client's clock when it sent the request (event-level {@code sent_at} wins)
     * @param now    the server's clock when the request arrived
     */
    public static Instant resolve(final JsonNode event, final Optional<Instant> sentAt, final Instant now) {
        final Optional<Instant> eventSentAt = parse(event.get("sent_at")).or(() -> sentAt);
        final boolean ignoreSentAt = event.path("properties").path("$ignore_sent_at").asBoolean(false);
        final Instant resolved;
        try {
            resolved = skewed(event, eventSentAt, ignoreSentAt, now);
        } catch (final DateTimeException | ArithmeticException e) {
            // A skew or an offset past even Instant's range (a year of -999999999, an offset of 2^63 ms).
            return Instant.EPOCH;
        }
        if (resolved == null || resolved.isAfter(now.plus(MAX_FUTURE))) {
            return now;
        }
        return resolved.isBefore(MIN) || resolved.isAfter(MAX) ? Instant.EPOCH : resolved;
    }

    /** The event's time from its fields, null when its timestamp does not parse. */
    private static Instant skewed(final JsonNode event, final Optional<Instant> eventSentAt, final boolean ignoreSentAt,
                                  final Instant now) {
        final JsonNode timestamp = event.get("timestamp");
        if (timestamp != null && !timestamp.isNull()) {
            final Optional<Instant> parsed = parse(timestamp);
            if (parsed.isEmpty()) {
                return null;
            }
            return eventSentAt.isPresent() && !ignoreSentAt
                    ? now.minus(Duration.between(parsed.get(), eventSentAt.get()))
                    : parsed.get();
        }
        if (event.path("offset").isNumber()) {
            return now.minusMillis(event.get("offset").asLong());
        }
        return now;
    }

    /** ISO 8601 with or without zone (UTC when absent), a bare date, or an RFC 1123 date. */
    public static Optional<Instant> parse(final JsonNode value) {
        if (value == null || !value.isTextual()) {
            return Optional.empty();
        }
        final String text = value.asText().trim();
        try {
            return Optional.of(IsoInstants.parse(text));
        } catch (final DateTimeParseException e) {
            // try the next form
        }
        try {
            return Optional.of(LocalDateTime.parse(text.replace(' ', 'T')).toInstant(ZoneOffset.UTC));
        } catch (final DateTimeParseException e) {
            // try the next form
        }
        try {
            return Optional.of(LocalDate.parse(text).atStartOfDay(ZoneOffset.UTC).toInstant());
        } catch (final DateTimeParseException e) {
            // try the next form
        }
        try {
            return Optional.of(ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        } catch (final DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
