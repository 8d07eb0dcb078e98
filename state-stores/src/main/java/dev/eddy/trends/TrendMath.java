package dev.eddy.trends;

import java.util.Locale;
import java.util.OptionalDouble;

/** What a trend series computes per bucket, by PostHog's {@code math} names. */
public enum TrendMath {
    TOTAL, DAU, WEEKLY_ACTIVE, MONTHLY_ACTIVE, UNIQUE_GROUP, SUM, AVG, MIN, MAX,
    MEDIAN(0.5), P75(0.75), P90(0.9), P95(0.95), P99(0.99);

    private final OptionalDouble quantile;

    TrendMath() {
        this.quantile = OptionalDouble.empty();
    }

    TrendMath(final double quantile) {
        this.quantile = OptionalDouble.of(quantile);
    }

    /** PostHog's name ({@code total}, {@code dau}, {@code p90}, ...); absent means {@code total}. */
    public static TrendMath parse(final String name) {
        if (name == null || name.isBlank()) {
            return TOTAL;
        }
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("math '" + name + "' is not supported", e);
        }
    }

    /** Counts distinct actors (persons, or groups) rather than events or property values. */
    public boolean distinctActors() {
        return this == DAU || this == WEEKLY_ACTIVE || this == MONTHLY_ACTIVE || this == UNIQUE_GROUP;
    }

    /** Aggregates a numeric property of the events ({@code math_property}). */
    public boolean propertyValues() {
        return ordinal() >= SUM.ordinal();
    }

    public OptionalDouble quantile() {
        return quantile;
    }

    /**
     * The math actually applied with {@code interval}: weekly actives by week or month, and monthly actives by
     * month, are plain distinct actors per bucket, as in PostHog.
     */
    public TrendMath forInterval(final Interval interval) {
        if (this == WEEKLY_ACTIVE && (interval == Interval.WEEK || interval == Interval.MONTH)
                || this == MONTHLY_ACTIVE && interval == Interval.MONTH) {
            return DAU;
        }
        return this;
    }

    /** For weekly and monthly actives, how many days back (the bucket's own day included) activity counts. */
    public int activeDays() {
        return switch (this) {
            case WEEKLY_ACTIVE -> 7;
            case MONTHLY_ACTIVE -> 30;
            default -> 1;
        };
    }
}
