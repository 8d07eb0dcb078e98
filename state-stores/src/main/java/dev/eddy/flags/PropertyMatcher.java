package dev.eddy.flags;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;

/**
 * One property filter of a flag condition against a person's or group's properties, with PostHog's operators and
 * coercions (its server's rules: a missing property matches only {@code is_not} and {@code is_not_set}).
 * <ul>
 * <li>{@code exact}/{@code is_not}: case-insensitive on the values' text; a list of values means any of them.</li>
 * <li>{@code icontains}, {@code not_icontains}, {@code starts_with}, {@code ends_with} (and {@code not_}):
 *     case-insensitive on the text; {@code icontains_multi}/{@code not_icontains_multi} take a list.</li>
 * <li>{@code regex}/{@code not_regex}: an unanchored search, RE2 syntax and bounds ({@link BoundedRegex}: linear
 *     time, so no pattern can hang evaluation); an invalid pattern never matches.</li>
 * <li>{@code gt}, {@code gte}, {@code lt}, {@code lte}: numeric when both sides are numbers, else on the text.</li>
 * <li>{@code is_date_before}/{@code _after}/{@code _exact}: the filter is an ISO date or date-time or a relative
 *     date ({@code -7d}, {@code -1h}, {@code -2w}, {@code -3m}, {@code -1y}); the property a date, date-time or
 *     epoch seconds.</li>
 * <li>{@code semver_eq}, {@code _neq}, {@code _gt}, {@code _gte}, {@code _lt}, {@code _lte}, {@code _tilde},
 *     {@code _caret}, {@code _wildcard}: a leading {@code v} is ignored and missing parts are 0.</li>
 * </ul>
 */
public final class PropertyMatcher {
    private static final java.util.regex.Pattern RELATIVE = java.util.regex.Pattern.compile("^-?(\\d+)([hdwmy])$");

    private PropertyMatcher() {
    }

    /**
     * @param operator the filter's operator ({@code exact} when absent)
     * @param value    the filter's value
     * @param actual   the property's value, or null when the person or group does not have it
     * @param now      the evaluation time, for relative dates
     */
    public static boolean matches(final String operator, final JsonNode value, final JsonNode actual, final Instant now) {
        final String op = operator == null ? "exact" : operator;
        if (actual == null || actual.isMissingNode()) {
            return "is_not".equals(op) || "is_not_set".equals(op);
        }
        switch (op) {
            case "exact":
                return exact(value, actual);
            case "is_not":
                return !exact(value, actual);
            case "is_set":
                return true;
            case "is_not_set":
                return false;
            case "icontains":
                return lower(actual).contains(lower(value));
            case "not_icontains":
                return !lower(actual).contains(lower(value));
            case "icontains_multi":
                return anyOf(value, v -> lower(actual).contains(lower(v)));
            case "not_icontains_multi":
                return !anyOf(value, v -> lower(actual).contains(lower(v)));
            case "starts_with":
                return lower(actual).startsWith(lower(value));
            case "not_starts_with":
                return !lower(actual).startsWith(lower(value));
            case "ends_with":
                return lower(actual).endsWith(lower(value));
            case "not_ends_with":
                return !lower(actual).endsWith(lower(value));
            case "regex":
                return regex(value, actual).orElse(false);
            case "not_regex":
                return regex(value, actual).map(found -> !found).orElse(false);
            case "gt":
                return compare(actual, value).map(c -> c > 0).orElse(false);
            case "gte":
                return compare(actual, value).map(c -> c >= 0).orElse(false);
            case "lt":
                return compare(actual, value).map(c -> c < 0).orElse(false);
            case "lte":
                return compare(actual, value).map(c -> c <= 0).orElse(false);
            case "is_date_before":
                return dates(value, actual, now).map(c -> c < 0).orElse(false);
            case "is_date_after":
                return dates(value, actual, now).map(c -> c > 0).orElse(false);
            case "is_date_exact":
                return dates(value, actual, now).map(c -> c == 0).orElse(false);
            default:
                if (op.startsWith("semver_")) {
                    return Semver.matches(op.substring("semver_".length()), text(value), text(actual));
                }
                return false;
        }
    }

    private static boolean exact(final JsonNode value, final JsonNode actual) {
        if (value != null && value.isArray()) {
            return anyOf(value, v -> lower(v).equals(lower(actual)));
        }
        return lower(value).equals(lower(actual));
    }

    private static boolean anyOf(final JsonNode values, final java.util.function.Predicate<JsonNode> test) {
        if (values == null) {
            return false;
        }
        if (!values.isArray()) {
            return test.test(values);
        }
        for (final JsonNode v : values) {
            if (test.test(v)) {
                return true;
            }
        }
        return false;
    }

    private static Optional<Boolean> regex(final JsonNode pattern, final JsonNode actual) {
        return BoundedRegex.find(text(pattern), text(actual));
    }

    /** Numbers compare as numbers; otherwise the texts compare. */
    private static Optional<Integer> compare(final JsonNode actual, final JsonNode value) {
        final Optional<BigDecimal> a = number(actual);
        final Optional<BigDecimal> b = number(value);
        if (a.isPresent() && b.isPresent()) {
            return Optional.of(a.get().compareTo(b.get()));
        }
        if (value == null || value.isNull() || value.isContainerNode() || actual.isContainerNode()) {
            return Optional.empty();
        }
        return Optional.of(Integer.signum(text(actual).compareTo(text(value))));
    }

    private static Optional<BigDecimal> number(final JsonNode node) {
        if (node == null) {
            return Optional.empty();
        }
        if (node.isNumber()) {
            return Optional.of(node.decimalValue());
        }
        if (node.isTextual()) {
            try {
                return Optional.of(new BigDecimal(node.asText().trim()));
            } catch (final NumberFormatException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** Compares the property's date with the filter's: negative when the property is before. */
    private static Optional<Integer> dates(final JsonNode value, final JsonNode actual, final Instant now) {
        final Optional<Instant> bound = filterDate(text(value), now);
        final Optional<Instant> date = propertyDate(actual);
        if (bound.isEmpty() || date.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(date.get().compareTo(bound.get()));
    }

    static Optional<Instant> filterDate(final String text, final Instant now) {
        final Matcher relative = RELATIVE.matcher(text.trim());
        if (relative.matches()) {
            final long n = Long.parseLong(relative.group(1));
            final java.time.ZonedDateTime utc = now.atZone(ZoneOffset.UTC);
            final java.time.ZonedDateTime then = switch (relative.group(2)) {
                case "h" -> utc.minusHours(n);
                case "d" -> utc.minusDays(n);
                case "w" -> utc.minusWeeks(n);
                case "m" -> utc.minusMonths(n);
                default -> utc.minusYears(n);
            };
            return Optional.of(then.toInstant());
        }
        return parseDate(text);
    }

    private static Optional<Instant> propertyDate(final JsonNode actual) {
        if (actual.isNumber()) {
            return Optional.of(Instant.ofEpochMilli((long) (actual.asDouble() * 1000)));
        }
        return parseDate(text(actual));
    }

    private static Optional<Instant> parseDate(final String text) {
        final String t = text.trim();
        try {
            return Optional.of(OffsetDateTime.parse(t).toInstant());
        } catch (final DateTimeParseException e) {
            // next form
        }
        try {
            return Optional.of(java.time.LocalDateTime.parse(t.replace(' ', 'T')).toInstant(ZoneOffset.UTC));
        } catch (final DateTimeParseException e) {
            // next form
        }
        try {
            return Optional.of(LocalDate.parse(t.length() > 10 ? t.substring(0, 10) : t).atStartOfDay(ZoneOffset.UTC).toInstant());
        } catch (final DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /** A value's text as PostHog compares it: strings as they are, everything else as its JSON text. */
    static String text(final JsonNode node) {
        if (node == null || node.isNull()) {
            return "";
        }
        return node.isValueNode() ? node.asText() : node.toString();
    }

    private static String lower(final JsonNode node) {
        return text(node).toLowerCase(Locale.ROOT);
    }
}
