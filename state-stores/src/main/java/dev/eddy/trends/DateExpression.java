package dev.eddy.trends;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code date_from} / {@code date_to} value as PostHog reads it: an absolute date or date-time (in the project's
 * time zone unless it names an offset), or a relative one such as {@code -7d}, {@code -24h}, {@code -1mStart},
 * {@code -2w}, {@code -1q} (13 weeks), {@code yStart}. A relative value moves back from now; a {@code Start} or
 * {@code End} suffix first sets the fields below its unit (the start or end of the hour, day, month or year), as
 * dateutil's {@code relativedelta} applies absolute fields before relative ones.
 *
 * @param time     the point in time, in the project's zone
 * @param relative the unit of a relative value ({@code h}, {@code d}, {@code w}, {@code m}, {@code q}, {@code y},
 *                 {@code M} minutes, {@code s} seconds); empty for an absolute one
 */
public record DateExpression(ZonedDateTime time, Optional<Character> relative) {
    /** PostHog's pattern, searched anywhere in the value like Python's {@code re.search}. */
    private static final Pattern RELATIVE = Pattern.compile("-?(?<number>[0-9]+)?(?<kind>[hdwmqysHDWMQY])(?<position>Start|End)?");
    private static final Pattern LOOSE_DATE = Pattern.compile("(\\d{4})-(\\d{1,2})-(\\d{1,2})");

    /**
     * @throws IllegalArgumentException when the value is neither a date nor a relative expression
     */
    public static DateExpression parse(final String value, final ZoneId zone, final ZonedDateTime now) {
        final String text = value.trim();
        final Optional<ZonedDateTime> absolute = absolute(text, zone);
        if (absolute.isPresent()) {
            return new DateExpression(absolute.get(), Optional.empty());
        }
        final Matcher m = RELATIVE.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("'" + value + "' is neither a date nor a relative date such as -7d");
        }
        final char kind = m.group("kind").charAt(0);
        final long n = m.group("number") == null ? 0 : Long.parseLong(m.group("number"));
        final String position = m.group("position");
        ZonedDateTime t = now.withZoneSameInstant(zone);
        // Absolute fields first (the Start/End suffix), then the relative move.
        t = switch (kind) {
            case 'h' -> "Start".equals(position) ? t.truncatedTo(ChronoUnit.HOURS)
                    : "End".equals(position) ? t.truncatedTo(ChronoUnit.HOURS).plusMinutes(59).plusSeconds(59).plusNanos(999_999_000) : t;
            case 'd' -> "Start".equals(position) ? t.truncatedTo(ChronoUnit.DAYS)
                    : "End".equals(position) ? t.truncatedTo(ChronoUnit.DAYS).withHour(23).withMinute(59).withSecond(59).withNano(999_999_000) : t;
            case 'm' -> "Start".equals(position) ? t.withDayOfMonth(1)
                    : "End".equals(position) ? t.withDayOfMonth(t.toLocalDate().lengthOfMonth()) : t;
            case 'y' -> "Start".equals(position) ? t.withMonth(1).withDayOfMonth(1)
                    : "End".equals(position) ? t.withDayOfMonth(t.toLocalDate().lengthOfMonth()) : t;
            default -> t;
        };
        t = switch (kind) {
            case 'h' -> t.minusHours(n);
            case 'd' -> t.minusDays(n);
            case 'w' -> t.minusWeeks(n);
            case 'm' -> t.minusMonths(n);
            case 'q' -> t.minusWeeks(13 * n);
            case 'y' -> t.minusYears(n);
            case 'M' -> t.minusMinutes(n);
            case 's' -> t.minusSeconds(n);
            // Upper-case units other than M name nothing in PostHog: the value is now.
            default -> t;
        };
        return new DateExpression(t, Optional.of(kind));
    }

    public boolean isRelative() {
        return relative.isPresent();
    }

    /** A relative value counted in hours (its truncation is to the hour rather than the day). */
    public boolean inHours() {
        return relative.filter(k -> k == 'h').isPresent();
    }

    private static Optional<ZonedDateTime> absolute(final String text, final ZoneId zone) {
        // A plain date first, by its shape: the parsers below say no by throwing, which costs more than the query's
        // own work when a dashboard asks for dates many times a second.
        final Matcher loose = LOOSE_DATE.matcher(text);
        if (loose.matches()) {
            try {
                return Optional.of(LocalDate.of(Integer.parseInt(loose.group(1)), Integer.parseInt(loose.group(2)),
                        Integer.parseInt(loose.group(3))).atStartOfDay(zone));
            } catch (final java.time.DateTimeException e) {
                throw new IllegalArgumentException("'" + text + "' is not a valid date", e);
            }
        }
        try {
            return Optional.of(OffsetDateTime.parse(text).atZoneSameInstant(zone));
        } catch (final DateTimeParseException e) {
            // no offset: a local date-time below
        }
        try {
            return Optional.of(LocalDateTime.parse(text.replace(' ', 'T')).atZone(zone));
        } catch (final DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
