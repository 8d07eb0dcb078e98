package dev.eddy.trends;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * A whole trend series (all partials merged) as PostHog's result items: one per breakdown value, ranked and cut at
 * the breakdown limit with the rest summed into {@link TrendEvent#OTHER_BREAKDOWN}.
 */
public final class TrendSeries {
    private TrendSeries() {
    }

    /**
     * @param breakdownValue the value ({@code ""} without a breakdown)
     * @param data           per bucket; empty for an aggregated item
     * @param count          the sum of {@code data}, or its last value when cumulative; 0 when aggregated
     * @param aggregated     the math over the whole range, for total-value displays
     */
    public record Item(String breakdownValue, double[] data, double count, OptionalDouble aggregated) {
    }

    /**
     * Time-series items.
     *
     * @param breakdown  whether the series is broken down (without, it always has one item, zeros when it has no
     *                   events; with, a value without events has no item)
     * @param limit      how many breakdown values are kept before the rest becomes Other
     * @param cumulative running totals; distinct-actor math counts each actor once, in its first bucket
     * @param hideOther  leave the Other item out ({@code breakdown_hide_other_aggregation})
     */
    public static List<Item> timeSeries(final SeriesPartial whole, final boolean breakdown, final int limit, final boolean cumulative,
                                        final boolean hideOther) {
        return timeSeries(whole, breakdown, limit, cumulative, hideOther, TrendEvent.OTHER_BREAKDOWN);
    }

    /** @param otherKey the key of the Other item (with {@code breakdowns}, Other for each of them) */
    public static List<Item> timeSeries(final SeriesPartial whole, final boolean breakdown, final int limit, final boolean cumulative,
                                        final boolean hideOther, final String otherKey) {
        if (!breakdown && whole.cells().isEmpty()) {
            return List.of(new Item("", new double[whole.buckets().size()], 0, OptionalDouble.empty()));
        }
        final Map<String, long[]> firsts = cumulative && isDistinct(whole.math()) ? whole.firstAppearances() : Map.of();
        final List<Item> items = new ArrayList<>();
        whole.cells().forEach((value, row) -> {
            final double[] data = new double[row.length];
            for (int i = 0; i < row.length; i++) {
                data[i] = firsts.isEmpty() ? whole.value(row[i]) : firsts.get(value)[i];
            }
            items.add(new Item(value, data, sum(data), OptionalDouble.empty()));
        });
        final List<Item> kept = limited(items, limit, hideOther, others -> mergeData(others, otherKey));
        if (!cumulative) {
            return kept;
        }
        return kept.stream().map(item -> {
            final double[] running = item.data().clone();
            for (int i = 1; i < running.length; i++) {
                running[i] += running[i - 1];
            }
            return new Item(item.breakdownValue(), running, running.length == 0 ? 0 : running[running.length - 1], OptionalDouble.empty());
        }).toList();
    }

    /**
     * The items smoothed as PostHog's {@code smoothing_intervals} smooths them: each point the average of the
     * {@code intervals} points up to and including it (of the points there are, at the start of the range), rounded
     * down; the count then sums the smoothed points (cumulative: the last one). 1 leaves them as they are.
     */
    public static List<Item> smoothed(final List<Item> items, final int intervals, final boolean cumulative) {
        if (intervals <= 1) {
            return items;
        }
        return items.stream().map(item -> {
            final double[] data = item.data();
            final double[] smooth = new double[data.length];
            for (int i = 0; i < data.length; i++) {
                // Summed afresh for each point: a running sum's rounding errors could move a floor.
                double window = 0;
                final int first = Math.max(0, i - intervals + 1);
                for (int j = first; j <= i; j++) {
                    window += data[j];
                }
                smooth[i] = Math.floor(window / (i - first + 1));
            }
            final double count = cumulative ? (smooth.length == 0 ? 0 : smooth[smooth.length - 1]) : sum(smooth);
            return new Item(item.breakdownValue(), smooth, count, item.aggregated());
        }).toList();
    }

    /**
     * Aggregated items (total-value displays): the math once over the whole range. Weekly and monthly actives are
     * the actors active in the 7 or 30 days ending at the range's end.
     */
    public static List<Item> aggregated(final SeriesPartial whole, final boolean breakdown, final int limit, final boolean hideOther) {
        return aggregated(whole, breakdown, limit, hideOther, TrendEvent.OTHER_BREAKDOWN);
    }

    /** @param otherKey the key of the Other item (with {@code breakdowns}, Other for each of them) */
    public static List<Item> aggregated(final SeriesPartial whole, final boolean breakdown, final int limit, final boolean hideOther,
                                        final String otherKey) {
        if (!breakdown && whole.cells().isEmpty()) {
            return List.of(new Item("", new double[0], 0, OptionalDouble.of(0)));
        }
        final List<Item> items = new ArrayList<>();
        whole.cells().forEach((value, row) -> {
            final double result;
            if (whole.math() == TrendMath.WEEKLY_ACTIVE || whole.math() == TrendMath.MONTHLY_ACTIVE) {
                result = row.length == 0 ? 0 : whole.value(row[row.length - 1]);
            } else {
                final SeriesPartial.Cell all = new SeriesPartial.Cell();
                for (final SeriesPartial.Cell cell : row) {
                    all.merge(cell);
                }
                result = whole.value(all);
            }
            items.add(new Item(value, new double[0], 0, OptionalDouble.of(result)));
        });
        return limited(items, limit, hideOther, others -> new Item(otherKey, new double[0], 0,
                OptionalDouble.of(others.stream().mapToDouble(i -> i.aggregated().getAsDouble()).sum())));
    }

    /**
     * PostHog's ranking: real values first, then the null value, then Other; by total descending; by value
     * ascending. The first {@code limit} are kept and the rest are summed into one Other item.
     */
    private static List<Item> limited(final List<Item> items, final int limit, final boolean hideOther,
                                      final java.util.function.Function<List<Item>, Item> other) {
        final List<Item> ranked = new ArrayList<>(items);
        ranked.sort(Comparator.comparingInt((Item i) -> kind(i.breakdownValue()))
                .thenComparing(Comparator.comparingDouble(TrendSeries::total).reversed())
                .thenComparing(Item::breakdownValue));
        if (ranked.size() <= limit) {
            return ranked;
        }
        final List<Item> kept = new ArrayList<>(ranked.subList(0, limit));
        if (!hideOther) {
            kept.add(other.apply(ranked.subList(limit, ranked.size())));
        }
        return kept;
    }

    private static Item mergeData(final List<Item> others, final String otherKey) {
        final double[] data = new double[others.get(0).data().length];
        for (final Item item : others) {
            for (int i = 0; i < data.length; i++) {
                data[i] += item.data()[i];
            }
        }
        return new Item(otherKey, data, sum(data), OptionalDouble.empty());
    }

    /**
     * Other last, before it a value that is null (with {@code breakdowns}, a combination with any null value: PostHog
     * ranks it after every combination without one, whatever its total), the rest first.
     */
    private static int kind(final String breakdown) {
        final List<String> values = List.of(breakdown.split(TrendQuery.Breakdown.SEPARATOR, -1));
        return values.contains(TrendEvent.OTHER_BREAKDOWN) ? 2 : values.contains(TrendEvent.NULL_BREAKDOWN) ? 1 : 0;
    }

    private static double total(final Item item) {
        return item.aggregated().isPresent() ? item.aggregated().getAsDouble() : item.count();
    }

    private static boolean isDistinct(final TrendMath math) {
        return math == TrendMath.DAU || math == TrendMath.UNIQUE_GROUP;
    }

    private static double sum(final double[] data) {
        double sum = 0;
        for (final double v : data) {
            sum += v;
        }
        return sum;
    }
}
