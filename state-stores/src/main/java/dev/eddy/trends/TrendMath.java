package dev.eddy.trends;

import java.util.Locale;
import java.util.OptionalDouble;

/** What a trend series computes per bucket, by PostHog's {@code math} names. */
public enum TrendMath {
    TOTAL, DAU, WEEKLY_ACTIVE, MONTHLY_ACTIVE, UNIQUE_GROUP, SUM, AVG, MIN, MAX,
    MEDIAN(0.5), P75(0.75), P90(0.9), P95(0.95), P99(0.99),
    /** Each bucket's events counted per person who has any there, then aggregated over those persons. */
    AVG_COUNT_PER_ACTOR, MIN_COUNT_PER_ACTOR, MAX_COUNT_PER_ACTOR, MEDIAN_COUNT_PER_ACTOR(0.5), P75_COUNT_PER_ACTOR(0.75),
    P90_COUNT_PER_ACTOR(0.9), P95_COUNT_PER_ACTOR(0.95), P99_COUNT_PER_ACTOR(0.99);

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
        return ordinal() >= SUM.ordinal() && ordinal() <= P99.ordinal();
    }

    /**
     * Aggregates, per bucket, the number of events of each person with any there ({@code avg_count_per_actor}, ...): by
     * persons always, as PostHog's trends count them (a {@code math_group_type_index} does not make groups the actors).
     */
    public boolean perActor() {
        return ordinal() >= AVG_COUNT_PER_ACTOR.ordinal();
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
