package dev.eddy.trends;

import java.time.Instant;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * One event matching a trend series, reduced to what the series computes from it.
 *
 * @param timestamp when it happened
 * @param actor     whom it counts for distinct-actor math: the person, or the group key with a group index
 * @param value     the numeric value of the series' {@code math_property}; empty when missing or not a number
 * @param breakdown its breakdown value (PostHog's null sentinel when it has none); empty string without breakdown
 */
public record TrendEvent(Instant timestamp, String actor, OptionalDouble value, String breakdown) {
    /** PostHog's breakdown value for a missing, null or empty property. */
    public static final String NULL_BREAKDOWN = "$$_posthog_breakdown_null_$$";
    /** PostHog's breakdown value for everything past the breakdown limit. */
    public static final String OTHER_BREAKDOWN = "$$_posthog_breakdown_other_$$";

    public TrendEvent {
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(breakdown, "breakdown");
    }

    public static TrendEvent of(final Instant timestamp, final String actor) {
        return new TrendEvent(timestamp, actor, OptionalDouble.empty(), "");
    }
}
