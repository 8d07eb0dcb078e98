package dev.eddy.trends;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The time span of a trend query and its buckets, resolved as PostHog's {@code QueryDateRange} does in the project's
 * time zone:
 * <ul>
 *   <li>{@code date_from}: absent is the start of the day seven days ago; {@code all} is the project's earliest
 *   event; a relative value is truncated to its hour (hour units) or day; events then count from the start of that
 *   hour, day or month (weeks: day, so the first week holds only the days from {@code date_from} on), except that a
 *   relative start stays as truncated with an hourly interval, or with a daily one when counted in hours
 *   ({@code -24h});</li>
 *   <li>{@code date_to}: absent is now; for day, week and month intervals the end extends to the end of its day, so
 *   the current partial bucket counts; for an hourly interval a relative or absent end extends to the end of its
 *   hour, an absolute one is taken as given;</li>
 *   <li>buckets start at the bucket of {@code date_from} (weeks on the project's week start day, so the first
 *   week's bucket may start before it) and follow each other up to {@code to}.</li>
 * </ul>
 *
 * @param from first instant included
 * @param to   last instant included
 */
public record DateRange(ZonedDateTime from, ZonedDateTime to, Interval interval, DayOfWeek weekStart) {
    /** The most buckets one range may have (over five years by hour, 136 years by day). */
    public static final long MAX_BUCKETS = 50_000;

    /**
     * @throws IllegalArgumentException when the range ends before it starts, or has more than {@link #MAX_BUCKETS}
     *                                  buckets of its interval
     */
    public DateRange {
        if (to.isBefore(from)) {
            throw new IllegalArgumentException("date_to is before date_from");
        }
        final long count = switch (interval) {
            case HOUR -> ChronoUnit.HOURS.between(from, to);
            case DAY -> ChronoUnit.DAYS.between(from, to);
            case WEEK -> ChronoUnit.WEEKS.between(from, to);
            case MONTH -> ChronoUnit.MONTHS.between(from, to);
        };
        if (count > MAX_BUCKETS) {
            throw new IllegalArgumentException("The date range spans " + count + " " + interval.name().toLowerCase(java.util.Locale.ROOT)
                    + "s; at most " + MAX_BUCKETS + " intervals fit in one query: choose a coarser interval or a shorter range.");
        }
    }

    /** Without {@code date_from}, PostHog looks this many days back. */
    public static final int DEFAULT_DAYS = 7;
    private static final long LAST_NANO = 999_999_000L;
    /** A relative start counted in days ({@code -7d}, {@code -14d}). */
    private static final java.util.regex.Pattern WHOLE_WEEKS_OF_DAYS = java.util.regex.Pattern.compile("\\s*-?\\d+d\\s*");
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd", Locale.ROOT);
    private static final DateTimeFormatter HOUR_DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);
    // PostHog's labels use English month abbreviations (strftime %b).
    private static final DateTimeFormatter DAY_LABEL = DateTimeFormatter.ofPattern("d-MMM-yyyy", Locale.ENGLISH);
    private static final DateTimeFormatter HOUR_LABEL = DateTimeFormatter.ofPattern("d-MMM HH:mm", Locale.ENGLISH);
    private static final DateTimeFormatter MONTH_LABEL = DateTimeFormatter.ofPattern("MMM yyyy", Locale.ENGLISH);
    private static final DateTimeFormatter DAY_MONTH = DateTimeFormatter.ofPattern("d-MMM", Locale.ENGLISH);
    private static final DateTimeFormatter DAY_OF_MONTH_MONTH = DateTimeFormatter.ofPattern("d MMM", Locale.ENGLISH);


    /**
     * @param dateFrom the query's {@code date_from}, if any
     * @param dateTo   the query's {@code date_to}, if any
     * @param earliest the project's earliest event, for {@code date_from: all} (now when it has none)
     * @throws IllegalArgumentException on a value that is not a date, or a range that ends before it starts
     */
    public static DateRange resolve(final Optional<String> dateFrom, final Optional<String> dateTo, final Interval interval,
                                    final ZoneId zone, final DayOfWeek weekStart, final Instant now,
                                    final Supplier<Optional<Instant>> earliest) {
        final ZonedDateTime current = now.atZone(zone);
        final ZonedDateTime to = end(dateTo.filter(s -> !s.isBlank()), interval, zone, current);
        final ZonedDateTime from;
        final Optional<String> given = dateFrom.filter(s -> !s.isBlank());
        if (given.isEmpty()) {
            from = current.truncatedTo(ChronoUnit.DAYS).minusDays(DEFAULT_DAYS);
        } else if ("all".equalsIgnoreCase(given.get().trim())) {
            from = lowerBound(interval, earliest.get().orElse(now).atZone(zone));
        } else {
            final DateExpression start = DateExpression.parse(given.get(), zone, current);
            if (start.isRelative()) {
                // A relative start is truncated to its hour (when counted in hours) or day, then kept exact where
                // the interval is finer than its unit.
                final ZonedDateTime truncated = start.time().truncatedTo(start.inHours() ? ChronoUnit.HOURS : ChronoUnit.DAYS);
                final boolean exact = interval == Interval.HOUR || interval == Interval.DAY && start.inHours();
                from = exact ? truncated : lowerBound(interval, truncated);
            } else {
                from = lowerBound(interval, start.time());
            }
        }
        return new DateRange(from, to, interval, weekStart);
    }

    /**
     * Where events start to count for a start of {@code start}: the start of its hour, day or month; for weeks the
     * start of its day, so the first week's bucket holds only the days from {@code start} on.
     */
    private static ZonedDateTime lowerBound(final Interval interval, final ZonedDateTime start) {
        return switch (interval) {
            case HOUR -> start.truncatedTo(ChronoUnit.HOURS);
            case DAY, WEEK -> start.truncatedTo(ChronoUnit.DAYS);
            case MONTH -> start.truncatedTo(ChronoUnit.DAYS).withDayOfMonth(1);
        };
    }

    private static ZonedDateTime end(final Optional<String> dateTo, final Interval interval, final ZoneId zone,
                                     final ZonedDateTime now) {
        ZonedDateTime to = now;
        boolean relative = true;
        if (dateTo.isPresent()) {
            final DateExpression end = DateExpression.parse(dateTo.get(), zone, now);
            relative = end.isRelative();
            to = end.time();
        }
        if (interval != Interval.HOUR) {
            return to.truncatedTo(ChronoUnit.DAYS).withHour(23).withMinute(59).withSecond(59).withNano((int) LAST_NANO);
        }
        return relative ? to.truncatedTo(ChronoUnit.HOURS).withMinute(59).withSecond(59).withNano((int) LAST_NANO) : to;
    }

    /** The start of every bucket, in order: from the bucket holding {@link #from} to the one holding {@link #to}. */
    public List<ZonedDateTime> buckets() {
        final List<ZonedDateTime> starts = new ArrayList<>();
        for (ZonedDateTime start = interval.startOf(from, weekStart); !start.isAfter(to); start = interval.next(start)) {
            starts.add(start);
        }
        return starts;
    }

    /**
     * The period a {@code compare} query sets beside this one, as PostHog computes it: with {@code compare_to}
     * ({@code -1w}, {@code -2d}, ...) the same length starting that far before this period's start; otherwise the
     * same length right before, keeping the start's time of day (its minutes by hour), and for a daily range that
     * started a whole number of weeks ago ({@code -7d}, {@code -14d}) without an absolute end one day later, so
     * that it overlaps this one by a day, as PostHog's does.
     *
     * @param dateFrom  the query's {@code date_from} as given
     * @param dateTo    the query's {@code date_to} as given
     * @param compareTo the query's {@code compare_to}, if any
     */
    public DateRange previous(final Optional<String> dateFrom, final Optional<String> dateTo, final Optional<String> compareTo) {
        final java.time.Duration length = java.time.Duration.between(from, to);
        if (compareTo.isPresent()) {
            final ZonedDateTime start = DateExpression.parse(compareTo.get(), from.getZone(), from).time();
            return new DateRange(start, start.plus(length), interval, weekStart);
        }
        ZonedDateTime start = from.minus(length);
        final ZonedDateTime end;
        if (interval == Interval.HOUR) {
            start = start.withMinute(from.getMinute()).withSecond(from.getSecond()).withNano(from.getNano());
            final ZonedDateTime shifted = start.plus(length);
            end = shifted.withMinute(to.getMinute()).withSecond(to.getSecond()).withNano(to.getNano());
        } else {
            start = start.with(from.toLocalTime());
            final boolean wholeWeeksOfDays = dateFrom.map(WHOLE_WEEKS_OF_DAYS::matcher).map(java.util.regex.Matcher::matches).orElse(false)
                    && new java.math.BigInteger(dateFrom.get().replaceAll("\\D", "")).mod(java.math.BigInteger.valueOf(7)).signum() == 0;
            final boolean absoluteEnd = dateTo.filter(s -> !s.isBlank()).map(s -> !DateExpression.parse(s, from.getZone(), to).isRelative())
                    .orElse(true);
            if (interval == Interval.DAY && wholeWeeksOfDays && absoluteEnd) {
                start = start.plusDays(1);
            }
            end = start.plus(length).with(to.toLocalTime());
        }
        return new DateRange(start, end, interval, weekStart);
    }

    /** A bucket as PostHog's {@code days} list names it: {@code 2020-01-09}, or {@code 2020-01-09 13:00:00} by hour. */
    public String day(final ZonedDateTime bucket) {
        return (interval == Interval.HOUR ? HOUR_DAY : DAY).format(bucket);
    }

    /**
     * A bucket as PostHog's {@code labels} name it: {@code 9-Jan-2020} by day, {@code 9-Jan 13:00} by hour,
     * {@code Jan 2020} by month; a week is its days within the range: {@code 8–14 Jun}, {@code 27-Apr – 3-May},
     * {@code 29-Dec-2024 – 4-Jan-2025}, or one day {@code 28-Dec-2019}.
     */
    public String label(final ZonedDateTime bucket) {
        return switch (interval) {
            case HOUR -> HOUR_LABEL.format(bucket);
            case DAY -> DAY_LABEL.format(bucket);
            case MONTH -> MONTH_LABEL.format(bucket);
            case WEEK -> {
                final java.time.LocalDate weekStart = interval.startOf(bucket, this.weekStart).toLocalDate();
                final java.time.LocalDate start = max(weekStart, from.toLocalDate());
                final java.time.LocalDate end = max(min(weekStart.plusDays(6), to.toLocalDate()), start);
                if (start.equals(end)) {
                    yield DAY_LABEL.format(start);
                }
                if (start.getYear() != end.getYear()) {
                    yield DAY_LABEL.format(start) + " \u2013 " + DAY_LABEL.format(end);
                }
                if (start.getMonth() != end.getMonth()) {
                    yield DAY_MONTH.format(start) + " \u2013 " + DAY_MONTH.format(end);
                }
                yield start.getDayOfMonth() + "\u2013" + DAY_OF_MONTH_MONTH.format(end);
            }
        };
    }

    private static java.time.LocalDate max(final java.time.LocalDate a, final java.time.LocalDate b) {
        return a.isAfter(b) ? a : b;
    }

    private static java.time.LocalDate min(final java.time.LocalDate a, final java.time.LocalDate b) {
        return a.isBefore(b) ? a : b;
    }

    /** Whether an event at {@code time} is inside the range. */
    public boolean contains(final Instant time) {
        return !time.isBefore(from.toInstant()) && !time.isAfter(to.toInstant());
    }

    /** The index of the bucket holding {@code time} in {@link #buckets()}, or -1 outside the range. */
    public int bucketOf(final Instant time) {
        if (!contains(time)) {
            return -1;
        }
        final ZonedDateTime first = interval.startOf(from, weekStart);
        final ZonedDateTime bucket = interval.startOf(time.atZone(from.getZone()), weekStart);
        return (int) switch (interval) {
            case HOUR -> ChronoUnit.HOURS.between(first, bucket);
            case DAY -> ChronoUnit.DAYS.between(first.toLocalDate(), bucket.toLocalDate());
            case WEEK -> ChronoUnit.WEEKS.between(first.toLocalDate(), bucket.toLocalDate());
            case MONTH -> ChronoUnit.MONTHS.between(first.toLocalDate(), bucket.toLocalDate());
        };
    }
}
