package dev.eddy.serde;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * Fast ISO 8601 reading and writing of instants, the hot path of ingestion: every event carries several.
 * The common shapes ({@code 2026-11-22T10:00:00.123Z}, {@code ...+01:00}) are handled by hand; anything
 * else falls back to {@code java.time}'s parser, so the accepted set is exactly {@link OffsetDateTime#parse}'s.
 */
public final class IsoInstants {
    private IsoInstants() {
    }

    /** An ISO 8601 date-time with an offset, as {@link OffsetDateTime#parse} reads it. */
    public static Instant parse(final CharSequence text) {
        final Instant fast = parseCommon(text);
        return fast != null ? fast : OffsetDateTime.parse(text).toInstant();
    }

    /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}](Z|±HH:MM)}, or null when the text has another shape. */
    private static Instant parseCommon(final CharSequence s) {
        final int n = s.length();
        if (n < 20 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return null;
        }
        final int year = digits(s, 0, 4);
        final int month = digits(s, 5, 2);
        final int day = digits(s, 8, 2);
        final int hour = digits(s, 11, 2);
        final int minute = digits(s, 14, 2);
        final int second = digits(s, 17, 2);
        if ((year | month | day | hour | minute | second) < 0 || hour > 23 || minute > 59 || second > 59) {
            return null;
        }
        int i = 19;
        int nanos = 0;
        if (s.charAt(i) == '.') {
            final int start = ++i;
            while (i < n && i - start < 9 && Character.isDigit(s.charAt(i))) {
                nanos = nanos * 10 + (s.charAt(i) - '0');
                i++;
            }
            if (i == start || (i < n && Character.isDigit(s.charAt(i)))) {
                return null;
            }
            for (int k = i - start; k < 9; k++) {
                nanos *= 10;
            }
        }
        final int offsetSeconds;
        if (i == n - 1 && s.charAt(i) == 'Z') {
            offsetSeconds = 0;
        } else if (i == n - 6 && (s.charAt(i) == '+' || s.charAt(i) == '-') && s.charAt(i + 3) == ':') {
            final int oh = digits(s, i + 1, 2);
            final int om = digits(s, i + 4, 2);
            if ((oh | om) < 0 || oh > 18 || om > 59) {
                return null;
            }
            offsetSeconds = (s.charAt(i) == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        } else {
            return null;
        }
        try {
            final long days = LocalDate.of(year, month, day).toEpochDay();
            return Instant.ofEpochSecond(days * 86_400 + hour * 3600L + minute * 60L + second - offsetSeconds, nanos);
        } catch (final DateTimeException e) {
            throw new DateTimeParseException("invalid date: " + e.getMessage(), s, 0);
        }
    }

    private static int digits(final CharSequence s, final int from, final int count) {
        int value = 0;
        for (int i = from; i < from + count; i++) {
            final char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    /** The same text as {@link Instant#toString()}, without going through a formatter. */
    public static String format(final Instant instant) {
        final long seconds = instant.getEpochSecond();
        final long days = Math.floorDiv(seconds, 86_400);
        final int secondOfDay = (int) Math.floorMod(seconds, 86_400);
        final LocalDate date = LocalDate.ofEpochDay(days);
        if (date.getYear() < 0 || date.getYear() > 9999) {
            return instant.toString();
        }
        final StringBuilder sb = new StringBuilder(30);
        pad(sb, date.getYear(), 4).append('-');
        pad(sb, date.getMonthValue(), 2).append('-');
        pad(sb, date.getDayOfMonth(), 2).append('T');
        pad(sb, secondOfDay / 3600, 2).append(':');
        pad(sb, secondOfDay / 60 % 60, 2).append(':');
        pad(sb, secondOfDay % 60, 2);
        final int nanos = instant.getNano();
        if (nanos != 0) {
            // Instant.toString prints 3, 6 or 9 fraction digits.
            sb.append('.');
            if (nanos % 1_000_000 == 0) {
                pad(sb, nanos / 1_000_000, 3);
            } else if (nanos % 1000 == 0) {
                pad(sb, nanos / 1000, 6);
            } else {
                pad(sb, nanos, 9);
            }
        }
        return sb.append('Z').toString();
    }

    private static StringBuilder pad(final StringBuilder sb, final int value, final int width) {
        final String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) {
            sb.append('0');
        }
        return sb.append(digits);
    }
}
