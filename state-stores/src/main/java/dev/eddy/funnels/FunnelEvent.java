package dev.eddy.funnels;

import java.util.Arrays;
import java.util.List;

/**
 * One event of an actor, as a funnel sees it: when it happened, which steps it matches, which exclusion gaps it
 * falls in, and its breakdown value. An event may match no step at all: a strict funnel still sees it, and it breaks
 * the sequence.
 *
 * @param timeMicros when, in microseconds since the epoch
 * @param uuid       the event's uuid: a group's events from several persons are ordered by it among events of one
 *                   instant, and de-duplicated ({@code ""} where no group is counted: a person's events are ordered
 *                   apart, and only a group funnel's events meet again)
 * @param steps      the 0-based steps it matches
 * @param exclusions the gaps {@code g} it is excluded in: an attempt that reached step {@code g} but not yet step
 *                   {@code g + 1}, within the window, is tainted by it
 * @param breakdown  its breakdown value, one string per breakdown property ({@code ""} where missing); empty
 *                   without a breakdown
 *
 * <p>The arrays are the event's own and never changed, not copied: a funnel over millions of rows shares one array per
 * distinct set of steps among all its events (the caller hands arrays nobody changes afterwards).
 */
public record FunnelEvent(long timeMicros, String uuid, int[] steps, int[] exclusions, List<String> breakdown) {

    public FunnelEvent {
        breakdown = List.copyOf(breakdown);
    }

    /** An event without a breakdown value. */
    public FunnelEvent(final long timeMicros, final String uuid, final int[] steps, final int[] exclusions) {
        this(timeMicros, uuid, steps, exclusions, List.of());
    }

    public static FunnelEvent of(final long timeMicros, final String uuid, final int... steps) {
        return new FunnelEvent(timeMicros, uuid, steps, new int[0]);
    }

    boolean sameMatchesAs(final FunnelEvent other) {
        return Arrays.equals(sorted(steps), sorted(other.steps)) && Arrays.equals(sorted(exclusions), sorted(other.exclusions));
    }

    boolean matches(final int step) {
        for (final int s : steps) {
            if (s == step) {
                return true;
            }
        }
        return false;
    }

    /** {@code values} ascending: itself when it is already (as the arrays funnels build are; never to be changed). */
    static int[] sorted(final int[] values) {
        for (int i = 1; i < values.length; i++) {
            if (values[i] < values[i - 1]) {
                final int[] copy = values.clone();
                Arrays.sort(copy);
                return copy;
            }
        }
        return values;
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof FunnelEvent other && timeMicros == other.timeMicros && uuid.equals(other.uuid)
                && Arrays.equals(steps, other.steps) && Arrays.equals(exclusions, other.exclusions) && breakdown.equals(other.breakdown);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * Long.hashCode(timeMicros) + uuid.hashCode()) + Arrays.hashCode(steps) * 7 + Arrays.hashCode(exclusions)
                + breakdown.hashCode() * 13;
    }

    @Override
    public String toString() {
        return "FunnelEvent[" + timeMicros + ", " + uuid + ", steps=" + Arrays.toString(steps) + ", exclusions="
                + Arrays.toString(exclusions) + (breakdown.isEmpty() ? "" : ", breakdown=" + breakdown) + "]";
    }
}
