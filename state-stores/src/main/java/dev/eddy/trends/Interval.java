package dev.eddy.trends;

import java.time.DayOfWeek;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/** The bucket size of a trend or funnel-trend query, as PostHog names it ({@code minute} is answered as {@code hour}). */
public enum Interval {
    HOUR, DAY, WEEK, MONTH;

    /** PostHog's interval names, case-insensitive; absent means {@code day}. */
    public static Interval parse(final String name) {
        if (name == null || name.isBlank()) {
            return DAY;
        }
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "minute", "hour" -> HOUR;
            case "day" -> DAY;
            case "week" -> WEEK;
            case "month" -> MONTH;
            default -> throw new IllegalArgumentException("interval must be one of hour, day, week, month; got '" + name + "'");
        };
    }

    /** The start of the bucket holding {@code time}, in {@code time}'s zone; weeks begin on {@code weekStart}. */
    public ZonedDateTime startOf(final ZonedDateTime time, final DayOfWeek weekStart) {
        return switch (this) {
            case HOUR -> time.truncatedTo(ChronoUnit.HOURS);
            case DAY -> time.truncatedTo(ChronoUnit.DAYS);
            case WEEK -> time.truncatedTo(ChronoUnit.DAYS).with(TemporalAdjusters.previousOrSame(weekStart));
            case MONTH -> time.truncatedTo(ChronoUnit.DAYS).withDayOfMonth(1);
        };
    }

    /** The start of the next bucket after one starting at {@code start}. */
    public ZonedDateTime next(final ZonedDateTime start) {
        return switch (this) {
            case HOUR -> start.plusHours(1);
            case DAY -> start.plusDays(1);
            case WEEK -> start.plusWeeks(1);
            case MONTH -> start.plusMonths(1);
        };
    }

    public String lowerName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
