package dev.eddy.funnels;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * PostHog's funnel correlation ({@code FunnelCorrelation} / {@code FunnelCorrelationQueryRunner}) from the counts a
 * correlation query gathers: for every candidate (an event, an event's property value, a person's property value),
 * how many of the actors who entered the funnel and have it converted (success) and did not (failure), beside the
 * totals of each. No significance test beyond PostHog's: a candidate seen by fewer actors than
 * {@code min(25, 2% of all actors)} is left out; the odds ratio is
 * {@code (s + 1)(F - f + 1) / ((S - s + 1)(f + 1))}, a prior of one actor in every cell; above 1 the candidate goes
 * with success, else with failure; the ten highest successes (descending) then the ten lowest failures (ascending).
 * The totals are skewed when one is more than ten times the other; with no success or no failure at all there is no
 * correlation ({@code []}, skewed).
 */
public final class FunnelCorrelation {
    /** Fewer actors than this (or than {@link #MIN_PERSON_PERCENTAGE} of all, if fewer) leave a candidate out. */
    public static final int MIN_PERSON_COUNT = 25;
    public static final double MIN_PERSON_PERCENTAGE = 0.02;
    /** Added to each cell of the contingency table. */
    public static final int PRIOR_COUNT = 1;
    /** How many candidates each direction answers at most. */
    public static final int PER_DIRECTION = 10;
    /** A ratio of totals above this (either way) is skewed. */
    private static final int SKEW_RATIO = 10;

    private FunnelCorrelation() {
    }

    /** How many actors with a candidate converted ({@code success}) and did not ({@code failure}). */
    public record Counts(long success, long failure) {
        public Counts plus(final Counts other) {
            return new Counts(success + other.success, failure + other.failure);
        }
    }

    /**
     * One candidate's correlation.
     *
     * @param success whether it goes with converting (odds ratio above 1)
     */
    public record Odds(String name, long successCount, long failureCount, double oddsRatio, boolean success) {
    }

    /** The candidates answered (successes first) and whether the totals are skewed. */
    public record Result(List<Odds> events, boolean skewed) {
    }

    /** The odds ratio of a candidate, with {@link #PRIOR_COUNT} in every cell. */
    public static double oddsRatio(final Counts visited, final long successTotal, final long failureTotal) {
        return (double) (visited.success() + PRIOR_COUNT) * (failureTotal - visited.failure() + PRIOR_COUNT)
                / ((double) (successTotal - visited.success() + PRIOR_COUNT) * (visited.failure() + PRIOR_COUNT));
    }

    /** Whether too few actors have the candidate for it to be answered. */
    public static boolean insignificant(final Counts visited, final long successTotal, final long failureTotal) {
        return visited.success() + visited.failure() < Math.min(MIN_PERSON_COUNT, MIN_PERSON_PERCENTAGE * (successTotal + failureTotal));
    }

    /**
     * The correlation of every candidate; candidates of equal odds ratios are ordered by name (PostHog leaves their
     * order to the database).
     */
    public static Result of(final Map<String, Counts> candidates, final long successTotal, final long failureTotal) {
        if (successTotal == 0 || failureTotal == 0) {
            return new Result(List.of(), true);
        }
        final boolean skewed = successTotal > SKEW_RATIO * failureTotal || failureTotal > SKEW_RATIO * successTotal;
        final List<Odds> successes = new ArrayList<>();
        final List<Odds> failures = new ArrayList<>();
        candidates.forEach((name, visited) -> {
            if (insignificant(visited, successTotal, failureTotal)) {
                return;
            }
            final double ratio = oddsRatio(visited, successTotal, failureTotal);
            final Odds odds = new Odds(name, visited.success(), visited.failure(), ratio, ratio > 1);
            (odds.success() ? successes : failures).add(odds);
        });
        successes.sort(Comparator.comparingDouble(Odds::oddsRatio).reversed().thenComparing(Odds::name));
        failures.sort(Comparator.comparingDouble(Odds::oddsRatio).thenComparing(Odds::name));
        final List<Odds> events = new ArrayList<>(successes.subList(0, Math.min(PER_DIRECTION, successes.size())));
        events.addAll(failures.subList(0, Math.min(PER_DIRECTION, failures.size())));
        return new Result(List.copyOf(events), skewed);
    }
}
