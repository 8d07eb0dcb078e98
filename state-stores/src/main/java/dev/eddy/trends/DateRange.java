package dev.eddy.trends;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The time span of a trend query and its buckets, resolved as PostHog's {@code QueryDateRange} does in the project's
 * time zone:
 * <ul>
 *   <li>{@code date_from}: absent is the start of the day seven days ago; {@code all} is the project's earliest
 *   event; an absolute or relative value is taken as given and then moved to the start of its bucket, except a
 *   relative value with an hourly interval, or counted in hours with a daily one ({@code -24h}), which stays exact;</li>
 *   <li>{@code date_to}: absent is now; relative values are truncated (to the hour for hour units, else the day);
 *   for day, week and month intervals the end extends to the end of that day, so the current partial bucket counts;
 *   for an hourly interval a relative or absent end extends to the end of its hour;</li>
 *   <li>buckets start at the bucket of {@code from} (weeks on the project's week start day) and follow each other
 *   up to {@code to}.</li>
 * </ul>
 *
 * @param from first instant included
 * @param to   last instant included
 */
public record DateRange(ZonedDateTime from, ZonedDateTime to, Interval interval, DayOfWeek weekStart) {
    /** Without {@code date_from}, PostHog looks this many days back. */
    public static final int DEFAULT_DAYS = 7;
    private static final long LAST_NANO = 999_999_000L;

    public DateRange {
        if (to.isBefore(from)) {
            throw new IllegalArgumentException("date_to is before date_from");
        }
    }

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
            from = interval.startOf(earliest.get().orElse(now).atZone(zone), weekStart);
        } else {
            final DateExpression start = DateExpression.parse(given.get(), zone, current);
            final boolean exact = start.isRelative() && (interval == Interval.HOUR || interval == Interval.DAY && start.inHours());
            from = exact ? start.time() : interval.startOf(start.time(), weekStart);
        }
        return new DateRange(from, to, interval, weekStart);
    }

    private static ZonedDateTime end(final Optional<String> dateTo, final Interval interval, final ZoneId zone,
                                     final ZonedDateTime now) {
        ZonedDateTime to = now;
        boolean relative = true;
        if (dateTo.isPresent()) {
            final DateExpression end = DateExpression.parse(dateTo.get(), zone, now);
            relative = end.isRelative();
            to = !relative ? end.time() : end.inHours() ? end.time().truncatedTo(ChronoUnit.HOURS) : end.time().truncatedTo(ChronoUnit.DAYS);
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
