package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** Trend series math, breakdowns and displays on PostHog's own test data (test_trends_query_runner.py). */
class TrendSeriesTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:00:00Z");
    /** Each person's browser, as in PostHog's fixture. */
    private static final Map<String, String> BROWSER = Map.of("p1", "Chrome", "p2", "Firefox", "p3", "Edge", "p4", "Safari");

    /** The $pageviews of PostHog's trends query runner fixture, all at 12:00. */
    private static List<TrendEvent> pageviews() {
        final List<TrendEvent> events = new ArrayList<>();
        for (final String day : List.of("11", "12", "13", "15", "17", "19")) {
            events.add(view("p1", day));
        }
        events.add(view("p2", "09"));
        events.add(view("p2", "12"));
        events.add(view("p3", "12"));
        events.add(view("p4", "15"));
        return events;
    }

    private static TrendEvent view(final String person, final String day) {
        return new TrendEvent(Instant.parse("2020-01-" + day + "T12:00:00Z"), person, OptionalDouble.empty(), BROWSER.get(person));
    }

    @Test
    void totalCountsEventsPerDay() {
        final SeriesPartial series = partial(TrendMath.TOTAL, "2020-01-09", "2020-01-19", pageviews(), false);
        final TrendSeries.Item item = TrendSeries.timeSeries(series, false, 25, false, false).get(0);
        assertThat(item.data()).containsExactly(1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1);
        assertThat(item.count()).isEqualTo(10);
    }

    @Test
    void activeUsersLookBackSevenAndThirtyDays() {
        final SeriesPartial weekly = partial(TrendMath.WEEKLY_ACTIVE, "2020-01-09", "2020-01-20", pageviews(), false);
        assertThat(TrendSeries.timeSeries(weekly, false, 25, false, false).get(0).data())
                .containsExactly(1, 1, 2, 3, 3, 3, 4, 4, 4, 4, 2, 2);
        final SeriesPartial monthly = partial(TrendMath.MONTHLY_ACTIVE, "2020-01-09", "2020-01-20", pageviews(), false);
        assertThat(TrendSeries.timeSeries(monthly, false, 25, false, false).get(0).data())
                .containsExactly(1, 1, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4);
        // By week, weekly actives are distinct persons per week (weeks of 01-05, 01-12, 01-19).
        final SeriesPartial byWeek = partial(TrendMath.WEEKLY_ACTIVE, "2020-01-09", "2020-01-20", pageviews(), false, Interval.WEEK);
        assertThat(byWeek.math()).isEqualTo(TrendMath.DAU);
        assertThat(TrendSeries.timeSeries(byWeek, false, 25, false, false).get(0).data()).containsExactly(2, 4, 1);
    }

    @Test
    void cumulativeRunsAndCountsEachPersonOnceForDau() {
        final SeriesPartial total = partial(TrendMath.TOTAL, "2020-01-09", "2020-01-20", pageviews(), false);
        final TrendSeries.Item running = TrendSeries.timeSeries(total, false, 25, true, false).get(0);
        assertThat(running.data()).containsExactly(1, 1, 2, 5, 6, 6, 8, 8, 9, 9, 10, 10);
        assertThat(running.count()).isEqualTo(10);
        final SeriesPartial dau = partial(TrendMath.DAU, "2020-01-09", "2020-01-20", pageviews(), false);
        assertThat(TrendSeries.timeSeries(dau, false, 25, true, false).get(0).data())
                .containsExactly(1, 1, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4);
    }

    @Test
    void breakdownsRankByTotalThenValue() {
        final SeriesPartial series = partial(TrendMath.TOTAL, "2020-01-09", "2020-01-20", pageviews(), true);
        final List<TrendSeries.Item> items = TrendSeries.timeSeries(series, true, 25, false, false);
        assertThat(items.stream().map(TrendSeries.Item::breakdownValue)).containsExactly("Chrome", "Firefox", "Edge", "Safari");
        assertThat(items.stream().mapToDouble(TrendSeries.Item::count).toArray()).containsExactly(6, 2, 1, 1);
        assertThat(items.get(0).data()).containsExactly(0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0);
    }

    @Test
    void valuesPastTheLimitBecomeOtherAndTheNullValueRanksLast() {
        final List<TrendEvent> events = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            events.add(new TrendEvent(Instant.parse("2020-01-11T10:00:00Z"), "person" + i, OptionalDouble.empty(), Integer.toString(i)));
        }
        events.add(new TrendEvent(Instant.parse("2020-01-11T10:00:00Z"), "x", OptionalDouble.empty(), TrendEvent.NULL_BREAKDOWN));
        events.add(new TrendEvent(Instant.parse("2020-01-11T11:00:00Z"), "x", OptionalDouble.empty(), TrendEvent.NULL_BREAKDOWN));
        final SeriesPartial series = partial(TrendMath.TOTAL, "2020-01-11", "2020-01-11", events, true);
        final List<TrendSeries.Item> byDefault = TrendSeries.timeSeries(series, true, 25, false, false);
        assertThat(byDefault).hasSize(26);
        assertThat(byDefault.get(0).breakdownValue()).as("the null value has the most events but ranks last").isEqualTo("0");
        assertThat(byDefault.get(25).breakdownValue()).isEqualTo(TrendEvent.OTHER_BREAKDOWN);
        assertThat(byDefault.get(25).count()).as("5 values and the null value's 2").isEqualTo(7);
        assertThat(TrendSeries.timeSeries(series, true, 10, false, false)).hasSize(11);
        assertThat(TrendSeries.timeSeries(series, true, 10, false, true)).hasSize(10);
        final List<TrendSeries.Item> all = TrendSeries.timeSeries(series, true, 50, false, false);
        assertThat(all.get(all.size() - 1).breakdownValue()).isEqualTo(TrendEvent.NULL_BREAKDOWN);
    }

    @Test
    void propertyMathIgnoresNonNumbersAndInterpolatesQuantiles() {
        // test_trends_aggregate_by_median: 1,1,1,2,3 on one day and 4,4 the next; median over the range is 2.
        final List<TrendEvent> events = new ArrayList<>();
        final double[] values = {1, 1, 1, 2, 3, 4, 4};
        for (int i = 0; i < values.length; i++) {
            events.add(new TrendEvent(Instant.parse(i < 5 ? "2020-01-01T10:00:00Z" : "2020-01-02T10:00:00Z"), "p" + i,
                    OptionalDouble.of(values[i]), ""));
        }
        assertThat(TrendSeries.aggregated(partial(TrendMath.MEDIAN, "2020-01-01", "2020-01-03", events, false), false, 25, false)
                .get(0).aggregated()).hasValue(2.0);
        // test_avg_filtering_non_number_resiliency: 2, "x", null, 8 average to 5.
        final List<TrendEvent> mixed = List.of(value(2), new TrendEvent(Instant.parse("2020-01-01T10:00:00Z"), "p", OptionalDouble.empty(), ""),
                value(8));
        assertThat(TrendSeries.aggregated(partial(TrendMath.AVG, "2020-01-01", "2020-01-01", mixed, false), false, 25, false)
                .get(0).aggregated()).hasValue(5.0);
        // ClickHouse's quantile of 101..200.
        final List<TrendEvent> hundred = new ArrayList<>();
        for (int v = 101; v <= 200; v++) {
            hundred.add(value(v));
        }
        assertThat(only(partial(TrendMath.P75, "2020-01-01", "2020-01-01", hundred, false))).isCloseTo(175.25, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(only(partial(TrendMath.P90, "2020-01-01", "2020-01-01", hundred, false))).isCloseTo(190.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(only(partial(TrendMath.P99, "2020-01-01", "2020-01-01", hundred, false))).isCloseTo(199.01, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(only(partial(TrendMath.SUM, "2020-01-01", "2020-01-01", hundred, false))).isEqualTo(15050);
        assertThat(TrendSeries.timeSeries(partial(TrendMath.MAX, "2020-01-01", "2020-01-02", hundred, false), false, 25, false, false)
                .get(0).data()).as("a bucket without values is 0").containsExactly(200, 0);
    }

    @Test
    void aggregatedDistinctCountsAcrossTheRangeAndPartialsMerge() {
        final SeriesPartial first = partial(TrendMath.DAU, "2020-01-09", "2020-01-20", pageviews().subList(0, 5), false);
        final SeriesPartial second = partial(TrendMath.DAU, "2020-01-09", "2020-01-20", pageviews().subList(5, 10), false);
        final SeriesPartial whole = first.merge(second);
        assertThat(TrendSeries.aggregated(whole, false, 25, false).get(0).aggregated()).hasValue(4.0);
        assertThat(TrendSeries.timeSeries(whole, false, 25, false, false).get(0).data()).containsExactly(1, 0, 1, 3, 1, 0, 2, 0, 1, 0, 1, 0);
        // Weekly actives as one number: persons active in the 7 days ending at date_to.
        final SeriesPartial weekly = partial(TrendMath.WEEKLY_ACTIVE, "2020-01-01", "2020-01-18", pageviews(), false);
        assertThat(TrendSeries.aggregated(weekly, false, 25, false).get(0).aggregated()).as("p1, p2, p3 and p4 were all active between 01-12 and 01-18")
                .hasValue(4.0);
        final SeriesPartial empty = partial(TrendMath.TOTAL, "2020-02-01", "2020-02-03", List.of(), false);
        assertThat(TrendSeries.timeSeries(empty, false, 25, false, false).get(0).data()).containsExactly(0, 0, 0);
        assertThat(TrendSeries.timeSeries(empty, true, 25, false, false)).isEmpty();
    }

    private static double only(final SeriesPartial series) {
        return TrendSeries.aggregated(series, false, 25, false).get(0).aggregated().getAsDouble();
    }

    private static TrendEvent value(final double v) {
        return new TrendEvent(Instant.parse("2020-01-01T10:00:00Z"), "p", OptionalDouble.of(v), "");
    }

    private static SeriesPartial partial(final TrendMath math, final String from, final String to, final List<TrendEvent> events,
                                         final boolean breakdown) {
        return partial(math, from, to, events, breakdown, Interval.DAY);
    }

    private static SeriesPartial partial(final TrendMath math, final String from, final String to, final List<TrendEvent> events,
                                         final boolean breakdown, final Interval interval) {
        final DateRange range = DateRange.resolve(Optional.of(from), Optional.of(to), interval, ZoneOffset.UTC, DayOfWeek.SUNDAY, NOW,
                Optional::empty);
        final SeriesPartial partial = new SeriesPartial(math, range);
        for (final TrendEvent e : events) {
            partial.add(breakdown ? e : new TrendEvent(e.timestamp(), e.actor(), e.value(), ""));
        }
        return partial;
    }
}
