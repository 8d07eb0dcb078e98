package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** PostHog's date range rules, in the project's zone: defaults, relative values, truncation, buckets. */
class DateRangeTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    /** A Friday. */
    private static final Instant NOW = Instant.parse("2020-01-10T12:34:56Z");

    @Test
    void withoutDatesTheLastSevenDaysAndTodayAreCounted() {
        final DateRange range = range(null, null, Interval.DAY);
        assertThat(range.from()).isEqualTo(utc("2020-01-03T00:00:00"));
        assertThat(range.to()).isEqualTo(utc("2020-01-10T23:59:59.999999"));
        assertThat(range.buckets()).hasSize(8).first().isEqualTo(utc("2020-01-03T00:00:00"));
        assertThat(range.buckets().get(7)).isEqualTo(utc("2020-01-10T00:00:00"));
    }

    @Test
    void relativeDaysStartAtTheStartOfTheirDay() {
        assertThat(range("-7d", null, Interval.DAY).from()).isEqualTo(utc("2020-01-03T00:00:00"));
        assertThat(range("-30d", null, Interval.DAY).buckets()).hasSize(31);
        assertThat(range("-2w", null, Interval.DAY).from()).isEqualTo(utc("2019-12-27T00:00:00"));
        assertThat(range("-1q", null, Interval.DAY).from()).isEqualTo(utc("2019-10-11T00:00:00"));
    }

    @Test
    void hoursCountFromTheirHourWithHourlyAndDailyIntervals() {
        final DateRange hourly = range("-24h", null, Interval.HOUR);
        assertThat(hourly.from()).isEqualTo(utc("2020-01-09T12:00:00"));
        assertThat(hourly.to()).as("the current hour counts").isEqualTo(utc("2020-01-10T12:59:59.999999"));
        assertThat(hourly.buckets()).hasSize(25).first().isEqualTo(utc("2020-01-09T12:00:00"));
        assertThat(hourly.contains(Instant.parse("2020-01-09T11:59:59Z"))).isFalse();
        assertThat(hourly.bucketOf(Instant.parse("2020-01-09T12:00:00Z"))).isZero();

        final DateRange daily = range("-24h", null, Interval.DAY);
        assertThat(daily.from()).as("not moved to the start of the day").isEqualTo(utc("2020-01-09T12:00:00"));
        assertThat(daily.contains(Instant.parse("2020-01-09T08:00:00Z"))).isFalse();
        assertThat(daily.buckets()).containsExactly(utc("2020-01-09T00:00:00"), utc("2020-01-10T00:00:00"));

        assertThat(range("-7d", null, Interval.HOUR).from()).as("days truncate to the day").isEqualTo(utc("2020-01-03T00:00:00"));
        assertThat(range("-3d", "-2d", Interval.HOUR).to()).as("a relative hourly end: the end of its hour")
                .isEqualTo(utc("2020-01-08T12:59:59.999999"));
    }

    @Test
    void startAndEndSuffixesSetTheFieldsBeforeMovingBack() {
        assertThat(range("mStart", null, Interval.DAY).from()).isEqualTo(utc("2020-01-01T00:00:00"));
        assertThat(range("-1mStart", null, Interval.DAY).from()).isEqualTo(utc("2019-12-01T00:00:00"));
        assertThat(range("yStart", null, Interval.MONTH).from()).isEqualTo(utc("2020-01-01T00:00:00"));
        assertThat(range("dStart", null, Interval.HOUR).from()).isEqualTo(utc("2020-01-10T00:00:00"));
        // The end of the month, then one month back, clipped to February's last day in a leap year.
        final DateRange fromMarch = DateRange.resolve(Optional.of("-1mEnd"), Optional.empty(), Interval.DAY, UTC,
                DayOfWeek.SUNDAY, Instant.parse("2020-03-15T08:00:00Z"), Optional::empty);
        assertThat(fromMarch.from()).isEqualTo(utc("2020-02-29T00:00:00"));
    }

    @Test
    void absoluteDatesAreWholeDaysExceptAnHourlyEnd() {
        final DateRange daily = range("2020-01-01", "2020-01-05", Interval.DAY);
        assertThat(daily.from()).isEqualTo(utc("2020-01-01T00:00:00"));
        assertThat(daily.to()).isEqualTo(utc("2020-01-05T23:59:59.999999"));
        assertThat(daily.buckets()).hasSize(5);

        final DateRange hourly = range("2020-01-05 08:00:00", "2020-01-05 10:00:00", Interval.HOUR);
        assertThat(hourly.to()).as("an absolute hourly end is taken as given").isEqualTo(utc("2020-01-05T10:00:00"));
        assertThat(hourly.buckets()).hasSize(3);
        assertThat(range("2020-1-5", "2020-01-06T00:00:00Z", Interval.DAY).from()).isEqualTo(utc("2020-01-05T00:00:00"));
    }

    @Test
    void weeksStartOnTheProjectsDayAndMonthsOnTheFirst() {
        final DateRange sunday = range("2020-01-08", "2020-01-20", Interval.WEEK);
        assertThat(sunday.from()).as("the first week counts from date_from's day").isEqualTo(utc("2020-01-08T00:00:00"));
        assertThat(sunday.contains(Instant.parse("2020-01-06T10:00:00Z"))).isFalse();
        assertThat(sunday.buckets()).containsExactly(utc("2020-01-05T00:00:00"), utc("2020-01-12T00:00:00"),
                utc("2020-01-19T00:00:00"));
        final DateRange monday = DateRange.resolve(Optional.of("2020-01-08"), Optional.of("2020-01-20"), Interval.WEEK, UTC,
                DayOfWeek.MONDAY, NOW, Optional::empty);
        assertThat(monday.buckets()).containsExactly(utc("2020-01-06T00:00:00"), utc("2020-01-13T00:00:00"),
                utc("2020-01-20T00:00:00"));
        assertThat(monday.bucketOf(Instant.parse("2020-01-19T23:00:00Z"))).isEqualTo(1);

        final DateRange months = range("2019-11-15", "2020-01-02", Interval.MONTH);
        assertThat(months.from()).as("the first month counts whole").isEqualTo(utc("2019-11-01T00:00:00"));
        assertThat(months.buckets()).hasSize(3);
        assertThat(months.bucketOf(Instant.parse("2019-12-31T23:59:59Z"))).isEqualTo(1);
    }

    @Test
    void bucketsAreNamedAsPostHogNamesThem() {
        final DateRange weeks = range("2020-10-29", "2020-11-24", Interval.WEEK);
        assertThat(weeks.buckets().stream().map(weeks::day))
                .containsExactly("2020-10-25", "2020-11-01", "2020-11-08", "2020-11-15", "2020-11-22");
        assertThat(weeks.buckets().stream().map(weeks::label))
                .containsExactly("29\u201331 Oct", "1\u20137 Nov", "8\u201314 Nov", "15\u201321 Nov", "22\u201324 Nov");
        final DateRange lastDay = range("2020-10-31", "2020-11-10", Interval.WEEK);
        assertThat(lastDay.label(lastDay.buckets().get(0))).as("one day of the first week").isEqualTo("31-Oct-2020");
        final DateRange acrossMonths = range("2020-04-20", "2020-05-10", Interval.WEEK);
        assertThat(acrossMonths.label(acrossMonths.buckets().get(1))).isEqualTo("26-Apr \u2013 2-May");
        final DateRange acrossYears = range("2024-12-20", "2025-01-10", Interval.WEEK);
        assertThat(acrossYears.label(acrossYears.buckets().get(1))).isEqualTo("22\u201328 Dec");
        assertThat(acrossYears.label(acrossYears.buckets().get(2))).isEqualTo("29-Dec-2024 \u2013 4-Jan-2025");

        final DateRange days = range("2020-01-09", "2020-01-10", Interval.DAY);
        assertThat(days.day(days.buckets().get(0))).isEqualTo("2020-01-09");
        assertThat(days.label(days.buckets().get(0))).isEqualTo("9-Jan-2020");
        final DateRange hours = range("-2h", null, Interval.HOUR);
        assertThat(hours.day(hours.buckets().get(0))).isEqualTo("2020-01-10 10:00:00");
        assertThat(hours.label(hours.buckets().get(0))).isEqualTo("10-Jan 10:00");
        final DateRange months = range("2019-09-03", null, Interval.MONTH);
        assertThat(months.buckets().stream().map(months::label)).containsExactly("Sep 2019", "Oct 2019", "Nov 2019", "Dec 2019", "Jan 2020");
    }

    @Test
    void thePreviousPeriodIsPostHogs() {
        final DateRange absolute = range("2020-01-15", "2020-01-19", Interval.DAY);
        final DateRange before = absolute.previous(Optional.of("2020-01-15"), Optional.of("2020-01-19"), Optional.empty());
        assertThat(before.from()).isEqualTo(utc("2020-01-10T00:00:00"));
        assertThat(before.to()).isEqualTo(utc("2020-01-14T23:59:59.999999"));
        // -7d: eight days, and a previous period that overlaps it by one day (test_trends_compare_day_interval_relative_range).
        final Instant now = Instant.parse("2020-01-04T13:00:01Z");
        final DateRange week = DateRange.resolve(Optional.of("-7d"), Optional.empty(), Interval.DAY, UTC, DayOfWeek.SUNDAY, now, Optional::empty);
        final DateRange lastWeek = week.previous(Optional.of("-7d"), Optional.empty(), Optional.empty());
        assertThat(week.buckets().stream().map(week::day)).first().isEqualTo("2019-12-28");
        assertThat(lastWeek.buckets().stream().map(lastWeek::day)).containsExactly("2019-12-21", "2019-12-22", "2019-12-23", "2019-12-24",
                "2019-12-25", "2019-12-26", "2019-12-27", "2019-12-28");
        // -48h by day: the two days before, whole (test_query_previous_period_date_range).
        final DateRange hours = DateRange.resolve(Optional.of("-48h"), Optional.empty(), Interval.DAY, UTC, DayOfWeek.SUNDAY,
                Instant.parse("2021-08-25T00:00:00Z"), Optional::empty);
        final DateRange beforeHours = hours.previous(Optional.of("-48h"), Optional.empty(), Optional.empty());
        assertThat(beforeHours.from()).isEqualTo(utc("2021-08-20T00:00:00"));
        assertThat(beforeHours.to()).isEqualTo(utc("2021-08-22T23:59:59.999999"));
        // compare_to: the same length, starting that far before this period's start.
        final DateRange weekBefore = absolute.previous(Optional.of("2020-01-15"), Optional.of("2020-01-19"), Optional.of("-1w"));
        assertThat(weekBefore.from()).isEqualTo(utc("2020-01-08T00:00:00"));
        assertThat(weekBefore.to()).isEqualTo(utc("2020-01-12T23:59:59.999999"));
    }

    @Test
    void daysAreTheProjectsDays() {
        final ZoneId newYork = ZoneId.of("America/New_York");
        // 03:00 UTC is still the previous evening in New York.
        final DateRange range = DateRange.resolve(Optional.empty(), Optional.empty(), Interval.DAY, newYork, DayOfWeek.SUNDAY,
                Instant.parse("2020-01-10T03:00:00Z"), Optional::empty);
        assertThat(range.from()).isEqualTo(ZonedDateTime.parse("2020-01-02T00:00:00-05:00[America/New_York]"));
        assertThat(range.to().toLocalDateTime().toString()).isEqualTo("2020-01-09T23:59:59.999999");
        assertThat(range.bucketOf(Instant.parse("2020-01-03T04:59:59Z"))).as("still Jan 2 in New York").isZero();
        assertThat(range.bucketOf(Instant.parse("2020-01-03T05:00:00Z"))).isEqualTo(1);
    }

    @Test
    void hourlyBucketsFollowDaylightSavingTime() {
        final ZoneId newYork = ZoneId.of("America/New_York");
        final DateRange springForward = DateRange.resolve(Optional.of("2020-03-08 00:00:00"), Optional.of("2020-03-08 23:00:00"),
                Interval.HOUR, newYork, DayOfWeek.SUNDAY, NOW, Optional::empty);
        final List<ZonedDateTime> hours = springForward.buckets();
        assertThat(hours).as("02:00 does not exist that night").hasSize(23);
        assertThat(hours.get(2).getHour()).isEqualTo(3);
        assertThat(springForward.bucketOf(Instant.parse("2020-03-08T07:30:00Z"))).as("03:30 EDT").isEqualTo(2);
    }

    @Test
    void allStartsAtTheEarliestEvent() {
        final DateRange all = DateRange.resolve(Optional.of("all"), Optional.empty(), Interval.DAY, UTC, DayOfWeek.SUNDAY, NOW,
                () -> Optional.of(Instant.parse("2019-12-25T08:00:00Z")));
        assertThat(all.from()).isEqualTo(utc("2019-12-25T00:00:00"));
        assertThat(all.buckets()).hasSize(17);
        final DateRange empty = DateRange.resolve(Optional.of("all"), Optional.empty(), Interval.DAY, UTC, DayOfWeek.SUNDAY, NOW,
                Optional::empty);
        assertThat(empty.buckets()).as("a project without events: today").hasSize(1);
    }

    @Test
    void badValuesAreRefused() {
        assertThatThrownBy(() -> range("banana", null, Interval.DAY)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("banana");
        assertThatThrownBy(() -> range("2020-13-01", null, Interval.DAY)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> range("2020-02-01", "2020-01-01", Interval.DAY)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("before");
        assertThatThrownBy(() -> Interval.parse("fortnight")).isInstanceOf(IllegalArgumentException.class);
        assertThat(Interval.parse("minute")).isEqualTo(Interval.HOUR);
        assertThat(Interval.parse(null)).isEqualTo(Interval.DAY);
    }

    private static DateRange range(final String from, final String to, final Interval interval) {
        return DateRange.resolve(Optional.ofNullable(from), Optional.ofNullable(to), interval, UTC, DayOfWeek.SUNDAY, NOW,
                Optional::empty);
    }

    private static ZonedDateTime utc(final String local) {
        return java.time.LocalDateTime.parse(local).atZone(UTC);
    }
}
