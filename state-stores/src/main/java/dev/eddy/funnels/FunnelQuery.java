package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.DateRange;
import dev.eddy.trends.Interval;
import dev.eddy.trends.PropertyFilter;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A funnel query in PostHog's filter format ({@code events} as steps, {@code funnel_order_type},
 * {@code funnel_window_interval} and {@code _unit}/{@code _type}, the deprecated {@code funnel_window_days},
 * {@code exclusions}, {@code properties}, dates), run person by person over timeline events: each actor's events in
 * range become {@link FunnelEvent}s, the ordered, strict or unordered engine decides how far the actor got, and the
 * outcomes (a {@link Partial} per instance, merged) give PostHog's steps.
 */
public final class FunnelQuery {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final long DEFAULT_WINDOW_DAYS = 14;

    /** One step: an event (or any event) and its own filters. */
    record Step(int order, Optional<String> event, PropertyFilter properties, ObjectNode definition) {
        boolean matches(final TimelineEvent e, final PropertyFilter.Source source, final Instant now) {
            return event.map(e.event()::equals).orElse(true) && properties.test(source, now);
        }
    }

    /** An exclusion: events that, between two steps, remove the actor. */
    record Exclusion(Optional<String> event, PropertyFilter properties, int fromStep, int toStep) {
    }

    private final List<Step> steps;
    private final List<Exclusion> exclusions;
    private final String orderType;
    private final long windowMicros;
    private final DateRange range;
    private final PropertyFilter global;
    private final Optional<TimeToConvert> timeToConvert;

    private FunnelQuery(final List<Step> steps, final List<Exclusion> exclusions, final String orderType, final long windowMicros,
                        final DateRange range, final PropertyFilter global, final Optional<TimeToConvert> timeToConvert) {
        this.steps = steps;
        this.exclusions = exclusions;
        this.orderType = orderType;
        this.windowMicros = windowMicros;
        this.range = range;
        this.global = global;
        this.timeToConvert = timeToConvert;
    }

    /**
     * @throws IllegalArgumentException with PostHog's message where PostHog refuses the query
     */
    public static FunnelQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                    final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (query.path("actions").isArray() && !query.get("actions").isEmpty()) {
            throw new IllegalArgumentException("actions are not supported by Eddy yet; use events");
        }
        final String viz = query.path("funnel_viz_type").asText("steps");
        if (!"steps".equals(viz) && !"time_to_convert".equals(viz)) {
            throw new IllegalArgumentException("funnel_viz_type " + viz + " is not supported by Eddy yet");
        }
        for (final String unsupported : List.of("breakdown", "aggregation_group_type_index")) {
            if (query.hasNonNull(unsupported) && !query.get(unsupported).asText().isEmpty()) {
                throw new IllegalArgumentException(unsupported + " is not supported in funnels by Eddy yet");
            }
        }
        final JsonNode events = query.path("events");
        if (!events.isMissingNode() && !events.isNull() && !events.isArray()) {
            throw new IllegalArgumentException("events must be a list");
        }
        final List<ObjectNode> entities = new ArrayList<>();
        events.forEach(e -> {
            if (!e.isObject()) {
                throw new IllegalArgumentException("every entry of events must be an object");
            }
            entities.add((ObjectNode) e);
        });
        if (entities.size() < 2) {
            throw new IllegalArgumentException("Funnels require at least two steps.");
        }
        entities.sort(Comparator.comparingInt(e -> e.path("order").asInt(-1)));
        final List<Step> steps = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            steps.add(new Step(i, id(entities.get(i)), PropertyFilter.parse(entities.get(i).get("properties")), entities.get(i)));
        }
        final String orderType = query.path("funnel_order_type").asText("ordered").toLowerCase(Locale.ROOT);
        if (!List.of("ordered", "strict", "unordered").contains(orderType)) {
            throw new IllegalArgumentException("funnel_order_type must be ordered, strict or unordered");
        }
        final List<Exclusion> exclusions = exclusions(query.path("exclusions"), steps, orderType);
        final DateRange range = DateRange.resolve(text(query.get("date_from")), text(query.get("date_to")), Interval.DAY, zone, weekStart,
                now, earliest);
        PropertyFilter global = PropertyFilter.parse(query.get("properties"));
        if (query.path("filter_test_accounts").asBoolean(false) && testAccountFilters != null && testAccountFilters.isArray()) {
            global = global.and(PropertyFilter.parse(testAccountFilters));
        }
        Optional<TimeToConvert> timeToConvert = Optional.empty();
        if ("time_to_convert".equals(viz)) {
            final int n = steps.size();
            final int from = query.path("funnel_from_step").asInt(0);
            final int to = query.path("funnel_to_step").asInt(n - 1);
            if (to <= 0 || to >= n) {
                final List<String> allowed = new ArrayList<>();
                for (int i = 1; i < n; i++) {
                    allowed.add(Integer.toString(i));
                }
                throw new IllegalArgumentException("Filter parameter funnel_to_step can only be one of " + String.join(", ", allowed)
                        + " for time to convert!");
            }
            if (from < 0 || from >= to) {
                throw new IllegalArgumentException("Funnel step range is invalid. funnelToStep should be greater than funnelFromStep.");
            }
            final Optional<Integer> bins = query.hasNonNull("bin_count") ? Optional.of(Math.max(1, Math.min(90, query.get("bin_count").asInt(1))))
                    : Optional.empty();
            timeToConvert = Optional.of(new TimeToConvert(from, to, bins));
        }
        return new FunnelQuery(steps, exclusions, orderType, window(query).toNanos() / 1000, range, global, timeToConvert);
    }

    /**
     * {@code funnel_viz_type: time_to_convert}: how long converting from one step to another took.
     *
     * @param bins the requested number of bins ({@code bin_count}, 1 to 90), else PostHog's automatic count
     */
    record TimeToConvert(int fromStep, int toStep, Optional<Integer> bins) {
    }

    private static List<Exclusion> exclusions(final JsonNode list, final List<Step> steps, final String orderType) {
        final List<Exclusion> exclusions = new ArrayList<>();
        if (list.isMissingNode() || list.isNull()) {
            return exclusions;
        }
        if (!list.isArray()) {
            throw new IllegalArgumentException("exclusions must be a list");
        }
        final int n = steps.size();
        for (final JsonNode e : list) {
            final int from = e.path("funnel_from_step").asInt(0);
            final int to = e.path("funnel_to_step").asInt(n - 1);
            if (from >= to) {
                throw new IllegalArgumentException("Exclusion event range is invalid. End of range should be greater than start.");
            }
            if (from >= n - 1) {
                throw new IllegalArgumentException("Exclusion event range is invalid. Start of range is greater than number of steps.");
            }
            if (to > n - 1) {
                throw new IllegalArgumentException("Exclusion event range is invalid. End of range is greater than number of steps.");
            }
            final Optional<String> event = e.path("id").isNull() || e.path("id").isMissingNode() ? Optional.empty()
                    : Optional.of(e.get("id").asText());
            for (int s = from; s <= to; s++) {
                if (steps.get(s).event().equals(event) && e.path("properties").isMissingNode()) {
                    throw new IllegalArgumentException("Exclusion steps cannot contain an event that's part of funnel steps.");
                }
            }
            if ("unordered".equals(orderType) && (from != 0 || to != n - 1)) {
                throw new IllegalArgumentException("Partial Exclusions not allowed in unordered funnels");
            }
            exclusions.add(new Exclusion(event, PropertyFilter.parse(e.get("properties")), from, to));
        }
        return exclusions;
    }

    /** {@code funnel_window_interval} with its unit ({@code _unit} or {@code _type}), else {@code funnel_window_days}, else 14 days. */
    private static Duration window(final JsonNode query) {
        if (query.hasNonNull("funnel_window_interval")) {
            final long n = query.get("funnel_window_interval").asLong(DEFAULT_WINDOW_DAYS);
            if (n < 1) {
                throw new IllegalArgumentException("funnel_window_interval must be at least 1");
            }
            final String unit = (query.hasNonNull("funnel_window_interval_unit") ? query.get("funnel_window_interval_unit")
                    : query.path("funnel_window_interval_type")).asText("day").toLowerCase(Locale.ROOT);
            return switch (unit.endsWith("s") ? unit.substring(0, unit.length() - 1) : unit) {
                case "second" -> Duration.ofSeconds(n);
                case "minute" -> Duration.ofMinutes(n);
                case "hour" -> Duration.ofHours(n);
                case "day" -> Duration.ofDays(n);
                case "week" -> Duration.ofDays(7 * n);
                // PostHog's funnel aggregation counts a month as 31 days.
                case "month" -> Duration.ofDays(31 * n);
                default -> throw new IllegalArgumentException(unit + " not supported");
            };
        }
        if (query.hasNonNull("funnel_window_days")) {
            final long days = query.get("funnel_window_days").asLong(DEFAULT_WINDOW_DAYS);
            if (days < 1) {
                throw new IllegalArgumentException("funnel_window_days must be at least 1");
            }
            return Duration.ofDays(days);
        }
        return Duration.ofDays(DEFAULT_WINDOW_DAYS);
    }

    /** The outcomes of some of the actors; partials of the same query add up. */
    public static final class Partial {
        private final List<FunnelOutcome> outcomes = new ArrayList<>();

        public Partial merge(final Partial other) {
            outcomes.addAll(other.outcomes);
            return this;
        }

        /** This partial as bytes for another instance of the same query to {@link FunnelQuery#decode}. */
        public byte[] encode() {
            return dev.eddy.serde.Binary.write(PARTIAL_VERSION, out -> {
                out.writeInt(outcomes.size());
                for (final FunnelOutcome o : outcomes) {
                    out.writeInt(o.stepReached());
                    out.writeBoolean(o.excluded());
                    out.writeInt(o.timings().length);
                    for (final double t : o.timings()) {
                        out.writeDouble(t);
                    }
                }
            });
        }
    }

    private static final int PARTIAL_VERSION = 1;

    /**
     * A partial {@link Partial#encode}d by an instance running this same query.
     *
     * @throws IllegalArgumentException when the bytes are not such a partial
     */
    public Partial decode(final byte[] encoded) {
        return dev.eddy.serde.Binary.read(encoded, PARTIAL_VERSION, "a funnel partial", in -> {
            final Partial partial = partial();
            final int count = in.readInt();
            for (int i = 0; i < count; i++) {
                final int step = in.readInt();
                final boolean excluded = in.readBoolean();
                final double[] timings = new double[in.readInt()];
                for (int t = 0; t < timings.length; t++) {
                    timings[t] = in.readDouble();
                }
                partial.outcomes.add(new FunnelOutcome(step, excluded, timings));
            }
            return partial;
        });
    }

    public Partial partial() {
        return new Partial();
    }

    /** Whether an event at this time is in the query's range: scans skip the others without decoding them. */
    public boolean relevant(final long timeMicros) {
        return range.contains(TimelineEvent.instant(timeMicros));
    }

    /**
     * Evaluates one actor.
     *
     * @param events the actor's timeline events in time order (any range: those outside the query's are skipped)
     * @param source the properties each event's filters read
     */
    public void add(final Partial partial, final List<TimelineEvent> events, final Function<TimelineEvent, PropertyFilter.Source> source,
                    final Instant now) {
        final List<FunnelEvent> fed = new ArrayList<>();
        final boolean strict = "strict".equals(orderType);
        for (final TimelineEvent e : events) {
            if (!range.contains(e.time())) {
                continue;
            }
            final PropertyFilter.Source props = source.apply(e);
            if (!global.test(props, now)) {
                continue;
            }
            final List<Integer> matched = new ArrayList<>();
            for (final Step step : steps) {
                if (step.matches(e, props, now)) {
                    matched.add(step.order());
                }
            }
            final List<Integer> gaps = new ArrayList<>();
            for (final Exclusion x : exclusions) {
                if (x.event().map(e.event()::equals).orElse(true) && x.properties().test(props, now)) {
                    for (int g = x.fromStep(); g < x.toStep(); g++) {
                        if (!gaps.contains(g)) {
                            gaps.add(g);
                        }
                    }
                }
            }
            // A strict funnel sees every event; the others only those that are a step or an exclusion.
            if (matched.isEmpty() && gaps.isEmpty() && !strict) {
                continue;
            }
            fed.add(new FunnelEvent(e.timeMicros(), e.uuid().toString(), matched.stream().mapToInt(Integer::intValue).toArray(),
                    gaps.stream().mapToInt(Integer::intValue).toArray()));
        }
        if (fed.isEmpty()) {
            return;
        }
        partial.outcomes.add("unordered".equals(orderType) ? new UnorderedFunnel(steps.size(), windowMicros).evaluate(fed)
                : new OrderedFunnel(steps.size(), windowMicros, strict).evaluate(fed));
    }

    /** PostHog's answer: the step list ({@code []} when nobody entered), or the time-to-convert histogram. */
    public JsonNode result(final Partial whole) {
        if (timeToConvert.isPresent()) {
            return timeToConvert(whole, timeToConvert.get());
        }
        final ArrayNode result = NODES.arrayNode();
        final List<FunnelSteps.Step> counted = FunnelSteps.of(steps.size(), whole.outcomes);
        final boolean unordered = "unordered".equals(orderType);
        for (final FunnelSteps.Step s : counted) {
            final Step step = steps.get(s.order());
            final ObjectNode node = result.addObject();
            if (unordered) {
                node.putNull("action_id");
                node.put("name", "Completed " + (s.order() + 1) + " step" + (s.order() > 0 ? "s" : ""));
                node.putNull("custom_name");
            } else {
                node.set("action_id", step.event().<JsonNode>map(NODES::textNode).orElse(NODES.nullNode()));
                node.set("name", step.event().<JsonNode>map(NODES::textNode).orElse(NODES.nullNode()));
                node.set("custom_name", step.definition().path("custom_name").isTextual() ? step.definition().get("custom_name") : NODES.nullNode());
            }
            node.put("order", s.order());
            node.putArray("people");
            node.put("count", s.count());
            node.put("type", "events");
            node.set("average_conversion_time", s.average().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
            node.set("median_conversion_time", s.median().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
            // Listing the persons of a step is not served yet.
            node.putNull("converted_people_url");
            node.putNull("dropped_people_url");
        }
        return result;
    }

    /**
     * PostHog's histogram of the time from {@code fromStep} to {@code toStep} among the actors who got that far:
     * {@code bin_count} bins (else the cube root of the number of actors, 1 to 60) of equal whole-second width from
     * the shortest time, plus one past the longest; {@code [[bin start, actors], ...]} and the average.
     */
    private static ObjectNode timeToConvert(final Partial whole, final TimeToConvert t) {
        final List<Double> samples = new ArrayList<>();
        for (final FunnelOutcome outcome : whole.outcomes) {
            if (outcome.stepReached() >= t.toStep()) {
                double total = 0;
                for (int i = t.fromStep(); i < t.toStep(); i++) {
                    total += outcome.timings()[i];
                }
                samples.add(total);
            }
        }
        final ObjectNode result = NODES.objectNode();
        final ArrayNode bins = result.putArray("bins");
        if (samples.isEmpty()) {
            result.putNull("average_conversion_time");
            return result;
        }
        final int count = t.bins().orElseGet(() -> (int) Math.max(1, Math.min(60, Math.ceil(Math.cbrt(samples.size())))));
        final double min = Math.floor(samples.stream().mapToDouble(Double::doubleValue).min().orElseThrow());
        final double max = Math.ceil(samples.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
        double width = Math.ceil((max - min) / count);
        if (width <= 0) {
            width = 60;
        }
        final long[] actors = new long[count + 1];
        for (final double sample : samples) {
            actors[(int) Math.min(count, Math.floor((sample - min) / width))]++;
        }
        for (int k = 0; k <= count; k++) {
            bins.addArray().add(Math.round(min + k * width)).add(actors[k]);
        }
        result.put("average_conversion_time", samples.stream().mapToDouble(Double::doubleValue).average().orElseThrow());
        return result;
    }

    private static Optional<String> id(final ObjectNode entity) {
        final JsonNode id = entity.get("id");
        return id == null || id.isNull() ? Optional.empty() : Optional.of(id.asText());
    }

    private static Optional<String> text(final JsonNode node) {
        return node == null || node.isNull() || node.asText().isBlank() ? Optional.empty() : Optional.of(node.asText());
    }
}
