package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.IsoInstants;
import dev.eddy.trends.ActorPage;
import dev.eddy.trends.DateRange;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;

/**
 * Which of a funnel's actors PostHog's {@code persons/funnel/} endpoint lists, as a step's
 * {@code converted_people_url} and {@code dropped_people_url} ask:
 * <ul>
 *   <li>{@code funnel_step} N &gt; 0: those who completed step N (N or more steps, 1-based); -N: those who dropped off
 *   before step N (exactly N - 1 steps); {@code funnel_custom_steps}: those who completed exactly one of the numbers
 *   of steps listed (and overrides {@code funnel_step});</li>
 *   <li>{@code funnel_step_breakdown}: only under that breakdown value (a string, or a list for a list
 *   breakdown; {@code Other} the values past the limit);</li>
 *   <li>a funnel trend ({@code funnel_viz_type: trends}): {@code entrance_period_start} names the period the actors
 *   entered in, {@code drop_off} whether those who did not convert (true) or those who did (false) are listed.</li>
 * </ul>
 * The page ({@code limit}, {@code offset}) is of the actors ordered by id, as PostHog orders them by
 * {@code aggregation_target}.
 *
 * @param completed      per number of steps completed (0..n), whether an actor who completed that many is listed
 * @param entrancePeriod a funnel trend's entrance period (an index of the range's buckets; -1 for none of them)
 */
record FunnelActors(BitSet completed, Optional<List<String>> breakdownValue, Optional<Integer> entrancePeriod, boolean dropOff, ActorPage page) {
    /**
     * @param steps  the funnel's number of steps
     * @param trends whether the funnel is a funnel trend
     * @throws IllegalArgumentException naming what the request lacks or has wrong
     */
    static FunnelActors parse(final JsonNode request, final int steps, final boolean trends, final DateRange range, final ZoneId zone) {
        final ActorPage page = ActorPage.of(request);
        final Optional<List<String>> value = request.hasNonNull("funnel_step_breakdown")
                ? Optional.of(values(request.get("funnel_step_breakdown"))) : Optional.empty();
        if (trends) {
            if (!request.hasNonNull("entrance_period_start") || !request.hasNonNull("drop_off")) {
                throw new IllegalArgumentException("entrance_period_start and drop_off are required: the period and whether to list those who "
                        + "dropped off (true) or converted (false)");
            }
            final JsonNode drop = request.get("drop_off");
            if (!drop.isBoolean() && !List.of("true", "false").contains(drop.asText())) {
                throw new IllegalArgumentException("drop_off must be true or false");
            }
            final BitSet all = new BitSet();
            all.set(0, steps + 1);
            return new FunnelActors(all, value, Optional.of(period(request.get("entrance_period_start").asText(), range, zone)),
                    drop.asBoolean() || "true".equals(drop.asText()), page);
        }
        final BitSet completed = new BitSet();
        final JsonNode custom = request.path("funnel_custom_steps");
        if (custom.isArray() && !custom.isEmpty()) {
            for (final JsonNode n : custom) {
                if (!n.canConvertToInt() && !(n.isTextual() && n.asText().matches("-?\\d{1,9}"))) {
                    throw new IllegalArgumentException("funnel_custom_steps must be a list of numbers of steps");
                }
                final int count = n.asInt();
                if (count >= 1 && count <= steps) {
                    completed.set(count);
                }
            }
            return new FunnelActors(completed, value, Optional.empty(), false, page);
        }
        final JsonNode stepNode = request.get("funnel_step");
        if (stepNode == null || stepNode.isNull()) {
            throw new IllegalArgumentException("funnel_step is required: N lists those who completed step N, -N those who dropped off before it");
        }
        final int step;
        try {
            step = Integer.parseInt(stepNode.asText().trim());
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("funnel_step must be a number of the funnel's steps");
        }
        if (step == -1) {
            throw new IllegalArgumentException("Nobody drops off before the first step: to list those who dropped off after it use funnel_step -2");
        }
        if (step == 0 || Math.abs(step) > steps) {
            throw new IllegalArgumentException("funnel_step must be between 1 and " + steps + " (converted), or -" + steps + " and -2 (dropped off)");
        }
        if (step > 0) {
            completed.set(step, steps + 1);
        } else {
            completed.set(-step - 1);
        }
        return new FunnelActors(completed, value, Optional.empty(), false, page);
    }

    /** Whether an actor with this outcome (under a value {@link #takesValue taken}) is listed. */
    boolean takes(final FunnelOutcome outcome) {
        return outcome.counts() && completed.get(outcome.stepReached() + 1);
    }

    /** Whether an actor of a funnel trend, entered in {@code period} and converted ({@code result} 1) or not, is listed. */
    boolean takes(final int period, final int result) {
        return entrancePeriod.isPresent() && entrancePeriod.get() == period && (result == 1) != dropOff;
    }

    /**
     * Whether the actors evaluated under breakdown value {@code value} (shown as {@code shown}: itself, or
     * {@code Other} past the limit) are listed.
     */
    boolean takesValue(final List<String> shown) {
        return breakdownValue.map(shown::equals).orElse(true);
    }

    /** A breakdown value as asked: a list of values, or one. */
    private static List<String> values(final JsonNode value) {
        final List<String> values = new ArrayList<>();
        // As the funnel keys values (FunnelBreakdown.valueOf): a text as it is, another value as JSON, null as "".
        for (final JsonNode v : value.isArray() ? value : List.of(value)) {
            values.add(v.isNull() ? "" : v.isTextual() ? v.asText() : v.toString());
        }
        return List.copyOf(values);
    }

    /** The index of the range's bucket that starts at {@code text} (the trend's {@code days} entry), or -1. */
    private static int period(final String text, final DateRange range, final ZoneId zone) {
        final ZonedDateTime start;
        try {
            start = text.length() == 10 ? LocalDate.parse(text).atStartOfDay(zone)
                    : text.endsWith("Z") || text.matches(".*[+-]\\d\\d:\\d\\d$") ? IsoInstants.parse(text.replace(' ', 'T')).atZone(zone)
                    : LocalDateTime.parse(text.replace(' ', 'T')).atZone(zone);
        } catch (final DateTimeParseException e) {
            throw new IllegalArgumentException("entrance_period_start must be a date or a date and time, as the trend's days give them");
        }
        final String day = range.day(start);
        final List<ZonedDateTime> buckets = range.buckets();
        for (int p = 0; p < buckets.size(); p++) {
            if (range.day(buckets.get(p)).equals(day)) {
                return p;
            }
        }
        return -1;
    }
}
