package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.BlockFilter;
import dev.eddy.trends.BlockRows;
import dev.eddy.trends.DateRange;
import dev.eddy.trends.Interval;
import dev.eddy.insights.Mergeable;
import dev.eddy.insights.PartialQuery;
import dev.eddy.trends.Action;
import dev.eddy.trends.PropertyFilter;
import dev.eddy.trends.PropertyLookup;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A funnel query in PostHog's filter format ({@code events} as steps, {@code funnel_order_type},
 * {@code funnel_window_interval} and {@code _unit}/{@code _type}, the deprecated {@code funnel_window_days},
 * {@code exclusions}, {@code properties}, dates, {@code breakdown}, {@code aggregation_group_type_index},
 * {@code funnel_viz_type} steps, time_to_convert or trends), run over timeline events.
 *
 * <p>Persons are evaluated one by one as their timelines are read: each person's events in range become
 * {@link FunnelEvent}s, the ordered, strict or unordered engine decides how far the person got (per entrance period
 * for trends, per breakdown value), and only the outcomes stay in the {@link Partial}. Groups
 * ({@code aggregation_group_type_index}) are spread over many persons and over the instances that own them, so
 * their partials keep each group's compact funnel events instead, and the groups are evaluated once every partial
 * is merged, in {@link #result}. Partials travel between instances as bytes ({@link Partial#encode()},
 * {@link #decode(byte[])}).
 */
public final class FunnelQuery implements PartialQuery<FunnelQuery.Partial> {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final long DEFAULT_WINDOW_DAYS = 14;
    /** The most steps one funnel may have (steps are indexed in 2 bytes in partials; far more than any funnel needs). */
    static final int MAX_STEPS = 100;
    /** PostHog reads at most this many rows of a broken-down funnel trend. */
    private static final int TRENDS_MAX_ROWS = 1_000;

    /**
     * One step: an event (or any event) and its own filters; or an action ({@code action}), whose event is the one
     * all its steps name, if any, and whose filters are its steps' and the entity's own.
     */
    record Step(int order, Optional<String> event, PropertyFilter properties, ObjectNode definition, Optional<Action> action) {
        /** A step of the entity {@code entity}: an event, or an action with its definition inlined. */
        static Step of(final int order, final ObjectNode entity) {
            final PropertyFilter own = PropertyFilter.parse(entity.get("properties"));
            if ("actions".equals(entity.path("type").asText())) {
                final Action action = Action.ofEntity(entity);
                return new Step(order, action.onlyEvent(), action.filter().and(own), entity, Optional.of(action));
            }
            return new Step(order, id(entity), own, entity, Optional.empty());
        }

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
    private final Optional<PeriodFunnel> trends;
    private final Optional<FunnelBreakdown> breakdown;
    private final OptionalInt aggregationGroup;
    /** The actors a persons request lists ({@link #parseActors}), or empty for the funnel's figures. */
    private final Optional<FunnelActors> actors;
    /** How each actor is evaluated (both kinds hold only the funnel's settings: shared by every actor and thread). */
    private final OrderedFunnel ordered;
    private final UnorderedFunnel unordered;

    private FunnelQuery(final List<Step> steps, final List<Exclusion> exclusions, final String orderType, final long windowMicros,
                        final DateRange range, final PropertyFilter global, final Optional<TimeToConvert> timeToConvert,
                        final Optional<PeriodFunnel> trends, final Optional<FunnelBreakdown> breakdown, final OptionalInt aggregationGroup,
                        final Optional<FunnelActors> actors) {
        this.steps = steps;
        this.exclusions = exclusions;
        this.orderType = orderType;
        this.windowMicros = windowMicros;
        this.range = range;
        this.global = global;
        this.timeToConvert = timeToConvert;
        this.trends = trends;
        this.breakdown = breakdown;
        this.aggregationGroup = aggregationGroup;
        this.actors = actors;
        this.ordered = "unordered".equals(orderType) ? null : new OrderedFunnel(steps.size(), windowMicros, "strict".equals(orderType));
        this.unordered = "unordered".equals(orderType) ? new UnorderedFunnel(steps.size(), windowMicros) : null;
    }

    /**
     * @throws IllegalArgumentException with PostHog's message where PostHog refuses the query
     */
    public static FunnelQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                    final Instant now, final Supplier<Optional<Instant>> earliest) {
        return parse(query, zone, weekStart, testAccountFilters, now, earliest, false);
    }

    /**
     * The actors behind a number of the funnel {@code request} describes, as PostHog's {@code persons/funnel/} lists
     * them ({@link FunnelActors}): its {@link #result} is a page of their ids, {@code {count, actors: [[id, null], ...]}}.
     * A time-to-convert funnel lists the persons of its steps, as PostHog's does.
     *
     * @throws IllegalArgumentException naming what is wrong with the request, or what Eddy does not list yet
     */
    public static FunnelQuery parseActors(final JsonNode request, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                          final Instant now, final Supplier<Optional<Instant>> earliest) {
        if (!request.isObject()) {
            throw new IllegalArgumentException("a persons request must be an object");
        }
        if (request.hasNonNull("aggregation_group_type_index")) {
            throw new IllegalArgumentException("the groups behind a funnel's numbers are not listed by Eddy yet");
        }
        final com.fasterxml.jackson.databind.node.ObjectNode funnel = ((com.fasterxml.jackson.databind.node.ObjectNode) request).deepCopy();
        if ("time_to_convert".equals(funnel.path("funnel_viz_type").asText())) {
            funnel.put("funnel_viz_type", "steps");
        }
        return parse(funnel, zone, weekStart, testAccountFilters, now, earliest, true);
    }

    private static FunnelQuery parse(final JsonNode query, final ZoneId zone, final DayOfWeek weekStart, final JsonNode testAccountFilters,
                                     final Instant now, final Supplier<Optional<Instant>> earliest, final boolean listsActors) {
        // The legacy filter's line graph without a viz type is a funnel trend.
        final String viz = query.path("funnel_viz_type").isTextual() ? query.get("funnel_viz_type").asText()
                : "ActionsLineGraph".equals(query.path("display").asText()) ? "trends" : "steps";
        if (!List.of("steps", "time_to_convert", "trends").contains(viz)) {
            throw new IllegalArgumentException("funnel_viz_type must be steps, time_to_convert or trends");
        }
        final JsonNode byHogQL = query.path("funnel_aggregate_by_hogql");
        if (byHogQL.isTextual() && !byHogQL.asText().isBlank() && !"person_id".equals(byHogQL.asText().trim())) {
            throw new IllegalArgumentException("funnel_aggregate_by_hogql is not supported by Eddy yet");
        }
        final OptionalInt aggregationGroup = aggregationGroup(query.path("aggregation_group_type_index"));
        final List<ObjectNode> entities = new ArrayList<>();
        for (final String kind : List.of("events", "actions")) {
            final JsonNode list = query.path(kind);
            if (!list.isMissingNode() && !list.isNull() && !list.isArray()) {
                throw new IllegalArgumentException(kind + " must be a list");
            }
            list.forEach(e -> {
                if (!e.isObject()) {
                    throw new IllegalArgumentException("every entry of " + kind + " must be an object");
                }
                entities.add("actions".equals(kind) ? ((ObjectNode) e).deepCopy().put("type", "actions") : (ObjectNode) e);
            });
        }
        if (entities.size() < 2) {
            throw new IllegalArgumentException("Funnels require at least two steps.");
        }
        if (entities.size() > MAX_STEPS) {
            throw new IllegalArgumentException("Funnels have at most " + MAX_STEPS + " steps, got " + entities.size() + ".");
        }
        entities.sort(Comparator.comparingInt(e -> e.path("order").asInt(-1)));
        final List<Step> steps = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            steps.add(Step.of(i, entities.get(i)));
        }
        final int n = steps.size();
        final Optional<Integer> fromStep = step(query, "funnel_from_step");
        final Optional<Integer> toStep = step(query, "funnel_to_step");
        fromStep.filter(f -> f < 0 || f > n - 2).ifPresent(f -> {
            throw new IllegalArgumentException("funnelFromStep is out of bounds. It must be between 0 and " + (n - 2) + ".");
        });
        toStep.filter(t -> t < 1 || t > n - 1).ifPresent(t -> {
            throw new IllegalArgumentException("funnelToStep is out of bounds. It must be between 1 and " + (n - 1) + ".");
        });
        if (fromStep.isPresent() && toStep.isPresent() && fromStep.get() >= toStep.get()) {
            throw new IllegalArgumentException("Funnel step range is invalid. funnelToStep should be greater than funnelFromStep.");
        }
        final String orderType = query.path("funnel_order_type").asText("ordered").toLowerCase(Locale.ROOT);
        if (!List.of("ordered", "strict", "unordered").contains(orderType)) {
            throw new IllegalArgumentException("funnel_order_type must be ordered, strict or unordered");
        }
        final List<Exclusion> exclusions = exclusions(query.path("exclusions"), steps, orderType);
        final Optional<FunnelBreakdown> breakdown = FunnelBreakdown.parse(query, n, orderType);
        final Interval interval = Interval.parse(query.path("interval").isTextual() ? query.get("interval").asText() : null);
        final DateRange range = DateRange.resolve(text(query.get("date_from")), text(query.get("date_to")), interval, zone, weekStart,
                now, earliest);
        PropertyFilter global = PropertyFilter.parse(query.get("properties"));
        if (query.path("filter_test_accounts").asBoolean(false) && testAccountFilters != null && testAccountFilters.isArray()) {
            global = global.and(PropertyFilter.parse(testAccountFilters));
        }
        final long windowMicros = window(query).toNanos() / 1000;
        Optional<TimeToConvert> timeToConvert = Optional.empty();
        Optional<PeriodFunnel> trends = Optional.empty();
        if ("time_to_convert".equals(viz)) {
            // PostHog reads a 0 "to" step as absent (the last step).
            final int from = fromStep.orElse(0);
            final int to = toStep.filter(t -> t != 0).orElse(n - 1);
            if (to <= 0 || to >= n) {
                final List<String> allowed = new ArrayList<>();
                for (int i = 1; i < n; i++) {
                    allowed.add(Integer.toString(i));
                }
                throw new IllegalArgumentException("Filter parameter funnel_to_step can only be one of " + String.join(", ", allowed)
                        + " for time to convert!");
            }
            if (from >= to) {
                throw new IllegalArgumentException("Funnel step range is invalid. funnelToStep should be greater than funnelFromStep.");
            }
            final Optional<Integer> bins = query.hasNonNull("bin_count") ? Optional.of(Math.max(1, Math.min(90, query.get("bin_count").asInt(1))))
                    : Optional.empty();
            timeToConvert = Optional.of(new TimeToConvert(from, to, bins));
        } else if ("trends".equals(viz)) {
            trends = Optional.of(new PeriodFunnel(n, windowMicros, orderType, fromStep.orElse(0), toStep.orElse(n - 1)));
        }
        final Optional<FunnelActors> actors = listsActors ? Optional.of(FunnelActors.parse(query, n, trends.isPresent(), range, zone))
                : Optional.empty();
        return new FunnelQuery(steps, exclusions, orderType, windowMicros, range, global, timeToConvert, trends, breakdown, aggregationGroup,
                actors);
    }

    private static OptionalInt aggregationGroup(final JsonNode index) {
        if (index.isMissingNode() || index.isNull() || index.isTextual() && index.asText().isBlank()) {
            return OptionalInt.empty();
        }
        final int group = index.isIntegralNumber() ? index.asInt() : index.isTextual() && index.asText().trim().matches("\\d") ? Integer.parseInt(index.asText().trim()) : -1;
        if (group < 0 || group > 4) {
            throw new IllegalArgumentException("aggregation_group_type_index must be a group type index from 0 to 4");
        }
        return OptionalInt.of(group);
    }

    private static Optional<Integer> step(final JsonNode query, final String field) {
        final JsonNode value = query.path(field);
        if (value.isMissingNode() || value.isNull()) {
            return Optional.empty();
        }
        if (value.isIntegralNumber() || value.isTextual() && value.asText().trim().matches("-?\\d{1,9}")) {
            return Optional.of(value.asInt());
        }
        throw new IllegalArgumentException(field + " must be a step number");
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
            final Step excluded = Step.of(-1, (ObjectNode) e);
            for (int s = from; s <= to; s++) {
                if (steps.get(s).event().equals(excluded.event()) && steps.get(s).action().equals(excluded.action())
                        && e.path("properties").isMissingNode()) {
                    throw new IllegalArgumentException("Exclusion steps cannot contain an event that's part of funnel steps.");
                }
            }
            if ("unordered".equals(orderType) && (from != 0 || to != n - 1)) {
                throw new IllegalArgumentException("Partial Exclusions not allowed in unordered funnels");
            }
            exclusions.add(new Exclusion(excluded.event(), excluded.properties(), from, to));
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

    /**
     * What some instance found for the query; partials of the same query add up ({@link #merge}). Persons leave only
     * their outcomes (per breakdown value; per breakdown value and entrance period for trends); groups leave their
     * funnel events, evaluated when the merged partial gives the {@link #result}.
     */
    public static final class Partial implements Mergeable<Partial> {
        /** Per breakdown value ({@code []} without one), the outcomes of the actors evaluated under it. */
        final Map<List<String>, List<FunnelOutcome>> outcomes = new HashMap<>();
        /** Funnel trends: per breakdown value, per period {@code p}: actors reaching the from step at {@code 2p}, converting at {@code 2p + 1}. */
        final Map<List<String>, long[]> periods = new HashMap<>();
        /** Group-aggregated funnels: per group key, the funnel events of the group seen so far. */
        final Map<String, List<FunnelEvent>> groups = new HashMap<>();
        /**
         * Funnels shown as steps without a breakdown ({@link #tallied}): actors summed up instead of listed in
         * {@link #outcomes} (a kept funnel's persons, {@link FunnelProgress}); null when none are.
         */
        FunnelTally tally;
        /** A persons request's: per breakdown value, the ids of the actors it {@link FunnelActors#takes takes} under it. */
        final Map<List<String>, List<String>> actors = new HashMap<>();

        /** Adds actors summed up in {@code more} (a funnel {@link #tallied}). */
        void add(final FunnelTally more) {
            tally = tally == null ? new FunnelTally(more.steps()).merge(more) : tally.merge(more);
        }

        @Override
        public Partial merge(final Partial other) {
            if (other.tally != null) {
                add(other.tally);
            }
            other.outcomes.forEach((value, list) -> outcomes.computeIfAbsent(value, v -> new ArrayList<>()).addAll(list));
            other.periods.forEach((value, counts) -> periods.merge(value, counts.clone(), (a, b) -> {
                if (a.length != b.length) {
                    throw new IllegalArgumentException("partials of funnel trends over different periods");
                }
                for (int i = 0; i < a.length; i++) {
                    a[i] += b[i];
                }
                return a;
            }));
            other.groups.forEach((key, events) -> groups.computeIfAbsent(key, k -> new ArrayList<>()).addAll(events));
            other.actors.forEach((value, ids) -> actors.computeIfAbsent(value, v -> new ArrayList<>()).addAll(ids));
            return this;
        }

        /** About what it takes on the heap (outcomes are counted as references: they are shared). */
        long memoryBytes() {
            long bytes = 128 + (tally == null ? 0 : tally.memoryBytes());
            for (final List<FunnelOutcome> list : outcomes.values()) {
                bytes += 64 + 8L * list.size();
            }
            for (final long[] counts : periods.values()) {
                bytes += 64 + 8L * counts.length;
            }
            for (final List<FunnelEvent> events : groups.values()) {
                bytes += 64 + 64L * events.size();
            }
            for (final List<String> ids : actors.values()) {
                bytes += 64 + 88L * ids.size();
            }
            return bytes;
        }

        /** The partial as bytes, for another instance to {@link FunnelQuery#decode} and merge. */
        @Override
        public byte[] encode() {
            return PartialCodec.encode(this);
        }
    }

    @Override
    public Partial partial() {
        return new Partial();
    }

    /**
     * What decides a person's {@link FunnelProgress.Contribution contribution} besides the person's own rows, when
     * nothing else does: steps, exclusions, order, window, range, filters and breakdown. Empty when the contribution
     * also depends on persons' or groups' properties (which change after the event), on the moment of the query (a
     * relative date filter), or the funnel counts groups (whose events come from many persons): then nothing of it
     * may be kept for another query ({@link FunnelProgress}).
     */
    public Optional<String> progressShape() {
        if (actors.isPresent() || aggregationGroup.isPresent() || !global.fixedByEvent() || breakdown.isPresent() && !"event".equals(breakdown.get().type())) {
            return Optional.empty();
        }
        final StringBuilder shape = new StringBuilder("order=").append(orderType).append(";window=").append(windowMicros)
                .append(";range=").append(range).append(";global=").append(global).append(";trends=").append(trends.map(String::valueOf).orElse(""));
        breakdown.ifPresent(b -> {
            final com.fasterxml.jackson.databind.node.ArrayNode properties = NODES.arrayNode();
            b.properties().forEach(properties::add);
            shape.append(";breakdown=").append(properties).append(',').append(b.array()).append(',').append(b.attribution()).append(',')
                    .append(b.attributionStep()).append(',').append(b.normalizeUrl());
        });
        for (final Step step : steps) {
            if (!step.properties().fixedByEvent()) {
                return Optional.empty();
            }
            shape.append(";step=").append(step.order()).append(',').append(quoted(step.event())).append(',').append(step.properties());
        }
        for (final Exclusion x : exclusions) {
            if (!x.properties().fixedByEvent()) {
                return Optional.empty();
            }
            shape.append(";exclusion=").append(quoted(x.event())).append(',').append(x.fromStep()).append(',').append(x.toStep()).append(',')
                    .append(x.properties());
        }
        return Optional.of(shape.toString());
    }

    /** A name as a JSON string (null when absent), so that no name reads like another or like what follows it. */
    private static String quoted(final Optional<String> name) {
        return name.map(n -> NODES.textNode(n).toString()).orElse("null");
    }

    /**
     * A partial another instance {@link Partial#encode() encoded} for this query.
     *
     * @throws IllegalArgumentException on bytes that are not such a partial
     */
    @Override
    public Partial decode(final byte[] bytes) {
        return PartialCodec.decode(bytes, steps.size(), trends.isPresent() ? range.buckets().size() : 0);
    }

    /**
     * The events a person's funnel can use, if only named ones (empty when a step or exclusion takes any event, or the
     * funnel is strict and sees every event): scans skip the others without decoding them.
     */
    public Optional<java.util.Set<String>> eventNames() {
        if ("strict".equals(orderType)) {
            return Optional.empty();
        }
        final java.util.Set<String> names = new java.util.HashSet<>();
        for (final Step step : steps) {
            if (step.event().isEmpty()) {
                return Optional.empty();
            }
            names.add(step.event().get());
        }
        for (final Exclusion exclusion : exclusions) {
            if (exclusion.event().isEmpty()) {
                return Optional.empty();
            }
            names.add(exclusion.event().get());
        }
        return Optional.of(names);
    }

    /** Whether an event at this time is in the query's range: scans skip the others without decoding them. */
    public boolean relevant(final long timeMicros) {
        return range.contains(TimelineEvent.instant(timeMicros));
    }

    /**
     * Takes one person's events: evaluates the person, or (aggregating by groups) keeps the events for their groups.
     *
     * @param person the person's id (its uuid), which a persons request lists
     * @param events the person's timeline events in time order (any range: those outside the query's are skipped)
     * @param source the properties each event's filters and breakdown read
     */
    public void add(final Partial partial, final String person, final List<TimelineEvent> events,
                    final Function<TimelineEvent, PropertyFilter.Source> source, final Instant now) {
        final List<FunnelEvent> fed = new ArrayList<>();
        for (final TimelineEvent e : events) {
            if (!range.contains(e.time())) {
                continue;
            }
            String group = null;
            if (aggregationGroup.isPresent()) {
                group = e.groups().get(aggregationGroup.getAsInt());
                if (group == null || group.isEmpty()) {
                    // PostHog leaves out events without the group the funnel counts.
                    continue;
                }
            }
            final FunnelEvent event = funnelEvent(e, source.apply(e), now);
            if (event == null) {
                continue;
            }
            if (group != null) {
                partial.groups.computeIfAbsent(group, k -> new ArrayList<>()).add(event);
            } else {
                fed.add(event);
            }
        }
        evaluate(fed, partial, person);
    }

    /**
     * An event in the query's range as the funnel sees it: the steps it matches, the gaps it is excluded in, its
     * breakdown value; null when the global filters leave it out, or (a funnel that is not strict) when it is neither
     * a step nor an exclusion.
     */
    private FunnelEvent funnelEvent(final TimelineEvent e, final PropertyFilter.Source props, final Instant now) {
        if (!global.test(props, now)) {
            return null;
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
        if (matched.isEmpty() && gaps.isEmpty() && !"strict".equals(orderType)) {
            return null;
        }
        return new FunnelEvent(e.timeMicros(), e.uuid().toString(), matched.stream().mapToInt(Integer::intValue).toArray(),
                gaps.stream().mapToInt(Integer::intValue).toArray(), breakdown.map(b -> b.valueOf(props, now)).orElse(List.of()));
    }

    /**
     * When one person's attempt through the funnel (evaluated without breakdown or groups, as a funnel correlation
     * asks) completed each step it reached, first step first; empty when the person never entered or was excluded.
     *
     * @param events the person's timeline events in time order (those outside the query's range are skipped)
     */
    long[] stepTimes(final List<TimelineEvent> events, final Function<TimelineEvent, PropertyFilter.Source> source, final Instant now) {
        final List<FunnelEvent> fed = new ArrayList<>();
        for (final TimelineEvent e : events) {
            if (range.contains(e.time())) {
                final FunnelEvent event = funnelEvent(e, source.apply(e), now);
                if (event != null) {
                    fed.add(event);
                }
            }
        }
        if (fed.isEmpty()) {
            return new long[0];
        }
        return unordered != null ? unordered.stepTimes(fed) : ordered.stepTimes(fed);
    }

    /** The conversion window, in microseconds from the first step (inclusive). */
    long windowMicros() {
        return windowMicros;
    }

    /** The query's date range. */
    DateRange range() {
        return range;
    }

    /**
     * The names of the events the steps take, as PostHog's correlation leaves them out: each event step's event and
     * every event an action step's steps name (a step of any event names none).
     */
    java.util.Set<String> stepEventNames() {
        final java.util.Set<String> names = new java.util.TreeSet<>();
        for (final Step step : steps) {
            if (step.action().isPresent()) {
                step.definition().path(dev.eddy.trends.Action.INLINED).path("steps")
                        .forEach(s -> text(s.get("event")).filter(n -> !n.isEmpty()).ifPresent(names::add));
            } else {
                step.event().ifPresent(names::add);
            }
        }
        return names;
    }

    /**
     * Collects the funnel events of event blocks' rows person by person, then evaluates each person as
     * {@link #add(Partial, List, Function, Instant)} evaluates its timeline: the same rows skipped, the same steps,
     * exclusions and breakdown values, each person's events in timeline order (time, then uuid). A row is one array
     * read of its event code unless the funnel could use it; filters on one event property are decided once per
     * distinct value.
     */
    public final class BlockRowsCollector {
        private final PropertyLookup properties;
        private final Instant now;
        /** Each actor's index: a person by its uuid, a group by its key (a string). */
        private final ActorIndex actors = new ActorIndex();
        private final List<Object> actorKeys = new ArrayList<>();
        /**
         * The rows taken, in buckets by their actor's index (one bucket until there are {@link #SPLIT_AT} rows, then
         * {@link #BUCKETS}): each actor's rows are gathered and put in timeline order one bucket at a time, within the
         * processor's cache, instead of across a partition's arrays of hundreds of thousands of rows.
         */
        private Rows[] buckets;
        private int size;
        private int splitAt = SPLIT_AT;
        /**
         * The rows' kinds: what a row matches and its breakdown value, as an event at time 0. A funnel over millions of
         * rows has a handful (a few hundred with a breakdown): an int a row instead of an event object, which is made
         * only as its actor is evaluated.
         */
        private final List<FunnelEvent> kinds = new ArrayList<>();
        /**
         * The blocks rows were taken from, which rows name by index: an event's uuid orders two of a person's events at
         * the same time, and is read (its column decoded) only then.
         */
        private final List<EventBlock> taken = new ArrayList<>();
        private final Map<FunnelEvent, Integer> kindIndex = new HashMap<>();
        private int lastKind = -1;
        /** Steps or exclusion gaps matched (one bit each), as the array events share. */
        private final Map<BitSet, int[]> interned = new HashMap<>();
        private final BitSet matched = new BitSet();
        private final BitSet gaps = new BitSet();
        /** Steps or gaps matched as one long's bits, as the array events share (when every step and gap fits one). */
        private final Map<Long, int[]> internedMasks = new HashMap<>();
        private final int[][] smallMasks = new int[256][];
        private final boolean masks = steps.stream().allMatch(s -> s.order() < Long.SIZE)
                && exclusions.stream().allMatch(e -> e.toStep() <= Long.SIZE);
        /** Per exclusion, its gaps' bits. */
        private final long[] gapMasks = exclusions.stream().mapToLong(e -> e.toStep() <= Long.SIZE && e.fromStep() < e.toStep()
                ? (e.toStep() == Long.SIZE ? -1L : (1L << e.toStep()) - 1) & -(1L << e.fromStep()) : 0L).toArray();

        private final long first = firstMicros();
        private final long last = lastMicros();
        private final int share;
        private final int shares;
        /** When set, the only actors whose rows are taken (shares aside). */
        private java.util.Set<?> only;
        /** The actors the last {@link #add} took rows of, in the order met. */
        private final List<Object> lastBlockActors = new ArrayList<>();
        private final RowsTaken lastBlockRows = new RowsTaken();

        private BlockRowsCollector(final PropertyLookup properties, final Instant now, final int share, final int shares) {
            this.properties = properties;
            this.now = now;
            this.share = share;
            this.shares = shares;
            this.buckets = new Rows[] {new Rows(taken)};
        }

        /** Spreads the rows over buckets from {@code rows} rows on instead of {@link #SPLIT_AT} (tests). */
        void spreadFrom(final int rows) {
            splitAt = rows;
        }

        /** Takes the rows of these actors only (persons' uuids, groups' keys) from the next {@link #add} on; null for all. */
        void only(final java.util.Set<?> actorKeys) {
            this.only = actorKeys;
        }

        /** The actors (persons' uuids, groups' keys) the last {@link #add} took at least one row of. */
        List<Object> lastBlockActors() {
            return lastBlockActors;
        }

        /** The rows the last {@link #add} took, each with its actor ({@link #actorKey(int)}), in row order. */
        RowsTaken lastBlockRows() {
            return lastBlockRows;
        }

        /** The actor (a person's uuid, a group's key) of an index {@link #lastBlockRows} gives. */
        Object actorKey(final int actor) {
            return actorKeys.get(actor);
        }

        /** How many actors were taken so far: their indices are 0 to one less. */
        int actorCount() {
            return actorKeys.size();
        }

        /** The actors taken so far, in the order met. */
        List<Object> actors() {
            return actorKeys;
        }

        /** Adds the rows of {@code block} but the {@code deleted} ones. */
        public void add(final EventBlock block, final BitSet deleted) {
            add(block, deleted, null);
        }

        /**
         * Adds rows {@code taken} of {@code block} (ascending; none of them deleted), or all rows but the
         * {@code deleted} ones when {@code taken} is null.
         */
        void add(final EventBlock block, final BitSet deleted, final int[] taken) {
            lastBlockActors.clear();
            lastBlockRows.clear();
            if (block.rows() == 0 || block.lastMicros() < first || block.firstMicros() > last) {
                return;
            }
            final boolean strict = "strict".equals(orderType);
            final EventBlock.Column names = block.events();
            // Per event code: whether a row of it can be a step or an exclusion (a strict funnel sees every event).
            final boolean[] wanted = new boolean[names.size()];
            final int[] stepCodes = new int[steps.size()];
            final int[] exclusionCodes = new int[exclusions.size()];
            boolean any = strict;
            for (int i = 0; i < steps.size(); i++) {
                stepCodes[i] = code(names, steps.get(i).event(), wanted);
                any |= stepCodes[i] != -1;
            }
            for (int i = 0; i < exclusions.size(); i++) {
                exclusionCodes[i] = code(names, exclusions.get(i).event(), wanted);
            }
            if (!any) {
                return;
            }
            if (strict) {
                java.util.Arrays.fill(wanted, true);
            }
            final BlockRows rows = new BlockRows(block, properties);
            final BlockFilter globalFilter = global.matchesEverything() ? null : BlockFilter.of(rows, global, now);
            final BlockFilter[] stepFilters = new BlockFilter[steps.size()];
            for (int i = 0; i < steps.size(); i++) {
                stepFilters[i] = steps.get(i).properties().matchesEverything() ? null : BlockFilter.of(rows, steps.get(i).properties(), now);
            }
            final BlockFilter[] exclusionFilters = new BlockFilter[exclusions.size()];
            for (int i = 0; i < exclusions.size(); i++) {
                exclusionFilters[i] = exclusions.get(i).properties().matchesEverything() ? null
                        : BlockFilter.of(rows, exclusions.get(i).properties(), now);
            }
            final EventBlock.Column groupColumn = aggregationGroup.isPresent() ? groupColumn(block, aggregationGroup.getAsInt()) : null;
            // The collector's actor index of each person (or group) code of this block, found on first use.
            final EventBlock.Persons persons = groupColumn != null ? null : block.persons();
            final int[] actorOf = new int[groupColumn != null ? groupColumn.size() : persons.size()];
            // The block's index among those taken, when a row of it is.
            int blockRef = -1;
            java.util.Arrays.fill(actorOf, NOT_YET);
            int next = 0;
            for (int r = taken == null ? deleted.nextClearBit(0) : taken.length > 0 ? taken[0] : block.rows(); r < block.rows();
                 r = taken == null ? deleted.nextClearBit(r + 1) : ++next < taken.length ? taken[next] : block.rows()) {
                final int code = names.code(r);
                if (!wanted[code]) {
                    continue;
                }
                final long t = block.timeMicros(r);
                if (t < first || t > last) {
                    continue;
                }
                String group = null;
                if (aggregationGroup.isPresent()) {
                    final JsonNode key = groupColumn == null ? null : groupColumn.value(r);
                    if (key == null || key.asText().isEmpty()) {
                        continue;
                    }
                    group = key.asText();
                }
                final int actorCode = persons != null ? persons.code(r) : groupColumn.code(r);
                if (actorOf[actorCode] == NOT_YET) {
                    // A person's uuid hashed as UUID.hashCode does, without making the uuid.
                    final int hash = persons == null ? group.hashCode() : uuidHash(persons.high(actorCode), persons.low(actorCode));
                    actorOf[actorCode] = (only == null || only.contains(actorKey(group, persons, actorCode)))
                            && Math.floorMod(hash, shares) == share ? MINE : OTHER_SHARE;
                }
                if (actorOf[actorCode] == OTHER_SHARE) {
                    continue;
                }
                if (globalFilter != null && !globalFilter.test(r)) {
                    continue;
                }
                final int[] stepsMatched;
                final int[] gapsMatched;
                if (masks) {
                    // A bit per step or gap (every funnel but one of more than 63 steps): no BitSet to hash per row.
                    long m = 0;
                    for (int i = 0; i < steps.size(); i++) {
                        if ((stepCodes[i] == ANY_EVENT || stepCodes[i] == code) && (stepFilters[i] == null || stepFilters[i].test(r))) {
                            m |= 1L << steps.get(i).order();
                        }
                    }
                    long g = 0;
                    for (int i = 0; i < exclusions.size(); i++) {
                        if ((exclusionCodes[i] == ANY_EVENT || exclusionCodes[i] == code) && (exclusionFilters[i] == null || exclusionFilters[i].test(r))) {
                            g |= gapMasks[i];
                        }
                    }
                    if (m == 0 && g == 0 && !strict) {
                        continue;
                    }
                    stepsMatched = intern(m);
                    gapsMatched = intern(g);
                } else {
                    matched.clear();
                    for (int i = 0; i < steps.size(); i++) {
                        if ((stepCodes[i] == ANY_EVENT || stepCodes[i] == code) && (stepFilters[i] == null || stepFilters[i].test(r))) {
                            matched.set(steps.get(i).order());
                        }
                    }
                    gaps.clear();
                    for (int i = 0; i < exclusions.size(); i++) {
                        if ((exclusionCodes[i] == ANY_EVENT || exclusionCodes[i] == code) && (exclusionFilters[i] == null || exclusionFilters[i].test(r))) {
                            gaps.set(exclusions.get(i).fromStep(), exclusions.get(i).toStep());
                        }
                    }
                    if (matched.isEmpty() && gaps.isEmpty() && !strict) {
                        continue;
                    }
                    stepsMatched = intern(matched);
                    gapsMatched = intern(gaps);
                }
                final int rowKind = kindOf(stepsMatched, gapsMatched, breakdown.isPresent() ? breakdown.get().valueOf(rows.at(r), now) : List.of());
                if (actorOf[actorCode] == MINE) {
                    actorOf[actorCode] = persons != null ? person(persons, actorCode) : actor(group);
                    lastBlockActors.add(actorKeys.get(actorOf[actorCode]));
                }
                if (blockRef < 0) {
                    blockRef = this.taken.size();
                    this.taken.add(block);
                }
                add(actorOf[actorCode], t, blockRef, r, rowKind);
                lastBlockRows.add(actorOf[actorCode], r);
            }
        }

        /** A row's actor: its group's key (a string) when the funnel counts groups, else its person's uuid. */
        private static Object actorKey(final String group, final EventBlock.Persons persons, final int personCode) {
            return group != null ? group : persons.uuid(personCode);
        }

        /** What {@link java.util.UUID#hashCode} is for the uuid of these halves. */
        private static int uuidHash(final long high, final long low) {
            final long both = high ^ low;
            return (int) (both >> 32) ^ (int) both;
        }

        /** The index of the person of {@code code} of {@code persons}, a new one if the person is new. */
        private int person(final EventBlock.Persons persons, final int code) {
            final int found = actors.indexOf(persons.high(code), persons.low(code), actorKeys.size());
            if (found == actorKeys.size()) {
                actorKeys.add(persons.uuid(code));
            }
            return found;
        }

        /** The index of the group of key {@code key}, a new one if the group is new. */
        private int actor(final String key) {
            final int found = actors.indexOf(key, actorKeys.size());
            if (found == actorKeys.size()) {
                actorKeys.add(key);
            }
            return found;
        }

        private void add(final int actor, final long t, final int blockRef, final int row, final int rowKind) {
            if (size == splitAt && buckets.length == 1) {
                final Rows all = buckets[0];
                buckets = new Rows[BUCKETS];
                java.util.Arrays.setAll(buckets, b -> new Rows(taken));
                for (int i = 0; i < all.size; i++) {
                    buckets[all.actor[i] & (BUCKETS - 1)].add(all.actor[i], all.time[i], all.block[i], all.row[i], all.kind[i]);
                }
            }
            buckets[actor & (buckets.length - 1)].add(actor, t, blockRef, row, rowKind);
            size++;
        }

        /**
         * The kind of a row matching {@code stepsMatched} and {@code gapsMatched} (arrays interned: the same matches,
         * the same arrays) with breakdown value {@code value}: a new one when none is alike.
         */
        private int kindOf(final int[] stepsMatched, final int[] gapsMatched, final List<String> value) {
            // The last kind again (rows of one event come in runs), then the first few by identity, then the index.
            if (lastKind >= 0 && alike(kinds.get(lastKind), stepsMatched, gapsMatched, value)) {
                return lastKind;
            }
            for (int k = 0; k < Math.min(kinds.size(), 8); k++) {
                if (alike(kinds.get(k), stepsMatched, gapsMatched, value)) {
                    lastKind = k;
                    return k;
                }
            }
            // Time and uuid are the row's own: a kind is the event's matches and value at time 0.
            final FunnelEvent prototype = new FunnelEvent(0, "", stepsMatched, gapsMatched, value);
            final Integer known = kindIndex.get(prototype);
            if (known != null) {
                lastKind = known;
                return known;
            }
            lastKind = kinds.size();
            kinds.add(prototype);
            kindIndex.put(prototype, lastKind);
            return lastKind;
        }

        private static boolean alike(final FunnelEvent kind, final int[] stepsMatched, final int[] gapsMatched, final List<String> value) {
            return kind.steps() == stepsMatched && kind.exclusions() == gapsMatched && kind.breakdown().equals(value);
        }

        /** The numbers of the bits {@code mask} has, ascending: one array per distinct mask. */
        private int[] intern(final long mask) {
            // Masks of the first eight steps or gaps (nearly every funnel) from an array: no boxing per row.
            if (mask >= 0 && mask < smallMasks.length) {
                if (smallMasks[(int) mask] == null) {
                    smallMasks[(int) mask] = BitSet.valueOf(new long[] {mask}).stream().toArray();
                }
                return smallMasks[(int) mask];
            }
            return internedMasks.computeIfAbsent(mask, m -> BitSet.valueOf(new long[] {m}).stream().toArray());
        }

        /** The numbers {@code bits} has, ascending. */
        private int[] intern(final BitSet bits) {
            int[] values = interned.get(bits);
            if (values == null) {
                values = bits.stream().toArray();
                interned.put((BitSet) bits.clone(), values);
            }
            return values;
        }

        /**
         * Evaluates every person collected (and keeps groups' events) into {@code partial}: a funnel {@link #tallied}
         * adds its persons summed up (hundreds of thousands of outcomes a partition are not listed to be summed later).
         */
        public void finish(final Partial partial) {
            final FunnelTally.Builder tally = tallied() ? new FunnelTally.Builder(stepCount()) : null;
            finishEach((actor, actorEvents) -> {
                if (actor instanceof String group) {
                    partial.groups.computeIfAbsent(group, k -> new ArrayList<>()).addAll(actorEvents);
                } else if (tally != null) {
                    tally.add(outcome(actorEvents));
                } else {
                    evaluate(actorEvents, partial, actor.toString());
                }
            });
            if (tally != null && !tally.isEmpty()) {
                partial.add(tally.build());
            }
        }

        /** Hands each actor collected (a person's uuid, a group's key) its rows' funnel events, in timeline order. */
        void finishEach(final java.util.function.BiConsumer<Object, List<FunnelEvent>> each) {
            finishEach((index, actor, actorEvents) -> each.accept(actor, actorEvents));
        }

        /** What {@link #finishEach(EachActor)} hands each actor. */
        interface EachActor {
            /** @param index the actor's index ({@link #actorKey(int)}) */
            void accept(int index, Object actor, List<FunnelEvent> events);
        }

        /** {@link #finishEach(java.util.function.BiConsumer)}, with each actor's index. */
        void finishEach(final EachActor each) {
            final int shift = Integer.numberOfTrailingZeros(buckets.length);
            final int actorCount = actorKeys.size();
            for (int b = 0; b < buckets.length; b++) {
                final Rows rows = buckets[b];
                final int n = rows.size;
                if (n == 0) {
                    continue;
                }
                // The bucket's rows grouped by actor (a counting sort on the actor's index within the bucket), then
                // each actor's in timeline order: time, then the uuid's bytes (unsigned), as the timeline's keys sort.
                final int locals = (actorCount >>> shift) + 1;
                final int[] start = new int[locals + 1];
                for (int i = 0; i < n; i++) {
                    start[(rows.actor[i] >>> shift) + 1]++;
                }
                for (int a = 0; a < locals; a++) {
                    start[a + 1] += start[a];
                }
                final int[] next = java.util.Arrays.copyOf(start, start.length);
                final int[] order = new int[n];
                for (int i = 0; i < n; i++) {
                    order[next[rows.actor[i] >>> shift]++] = i;
                }
                for (int a = 0; a < locals; a++) {
                    if (start[a + 1] == start[a]) {
                        continue;
                    }
                    // Rows arrive in the order events were stored, mostly the order they happened: an insertion sort.
                    for (int i = start[a] + 1; i < start[a + 1]; i++) {
                        final int row = order[i];
                        int j = i - 1;
                        while (j >= start[a] && rows.before(row, order[j])) {
                            order[j + 1] = order[j];
                            j--;
                        }
                        order[j + 1] = row;
                    }
                    final List<FunnelEvent> actorEvents = new ArrayList<>(start[a + 1] - start[a]);
                    for (int i = start[a]; i < start[a + 1]; i++) {
                        actorEvents.add(event(rows, order[i]));
                    }
                    final int actor = a << shift | b;
                    each.accept(actor, actorKeys.get(actor), actorEvents);
                }
            }
            buckets = new Rows[] {new Rows(taken)};
            size = 0;
            taken.clear();
        }

        /** Row {@code row} of {@code rows} as an event. Only a group's events, from several persons, are compared by uuid (evaluateGroups). */
        private FunnelEvent event(final Rows rows, final int row) {
            final FunnelEvent k = kinds.get(rows.kind[row]);
            return new FunnelEvent(rows.time[row], aggregationGroup.isPresent() ? taken.get(rows.block[row]).uuid(rows.row[row]).toString() : "",
                    k.steps(), k.exclusions(), k.breakdown());
        }
    }

    /**
     * Rows a collector took, of some of its actors: each row's actor index, time and kind, and where it is (a block
     * among those taken, and its row there), which gives its event's uuid when needed.
     */
    private static final class Rows {
        private final List<EventBlock> blocks;
        int[] actor = new int[64];
        long[] time = new long[64];
        int[] block = new int[64];
        int[] row = new int[64];
        int[] kind = new int[64];
        int size;

        Rows(final List<EventBlock> blocks) {
            this.blocks = blocks;
        }

        void add(final int rowActor, final long t, final int rowBlock, final int blockRow, final int rowKind) {
            final int n = size;
            if (n == actor.length) {
                actor = java.util.Arrays.copyOf(actor, n * 2);
                time = java.util.Arrays.copyOf(time, n * 2);
                block = java.util.Arrays.copyOf(block, n * 2);
                row = java.util.Arrays.copyOf(row, n * 2);
                kind = java.util.Arrays.copyOf(kind, n * 2);
            }
            actor[n] = rowActor;
            time[n] = t;
            block[n] = rowBlock;
            row[n] = blockRow;
            kind[n] = rowKind;
            size = n + 1;
        }

        /**
         * Whether row {@code a} comes before row {@code b} in a timeline: by time, then by the uuid's bytes (unsigned),
         * read from their blocks only for two rows at the same time.
         */
        boolean before(final int a, final int b) {
            final int c = Long.compare(time[a], time[b]);
            if (c != 0) {
                return c < 0;
            }
            final EventBlock first = blocks.get(block[a]);
            final EventBlock second = blocks.get(block[b]);
            final int high = Long.compareUnsigned(first.uuidHigh(row[a]), second.uuidHigh(row[b]));
            return (high != 0 ? high : Long.compareUnsigned(first.uuidLow(row[a]), second.uuidLow(row[b]))) < 0;
        }
    }

    /**
     * The index of each actor met: a person's by its uuid's two longs in an open-addressed table (no boxing, no
     * {@code UUID.equals} call chains: a funnel looks persons up once per block they have rows in), a group's by key.
     */
    static final class ActorIndex {
        /**
         * Per slot, three longs: the uuid's two halves and the index + 1 (0 for an empty slot), side by side, so a
         * lookup reads one cache line where three arrays took three (a partition's table outgrows the cache, and a
         * funnel looks up each person once per block it has rows in: about a third of a 10M funnel's time).
         */
        private long[] slots = new long[3 << 10];
        private int capacity = 1 << 10;
        private int persons;
        private final Map<String, Integer> groups = new HashMap<>();

        /** The index of the group of key {@code key}, {@code next} if new. */
        int indexOf(final String key, final int next) {
            return groups.computeIfAbsent(key, k -> next);
        }

        /** The index of the person whose uuid has halves {@code h} and {@code l}, {@code next} if new. */
        int indexOf(final long h, final long l, final int next) {
            int slot = KeptPersons.slot(h, l, capacity);
            while (slots[3 * slot + 2] != 0) {
                if (slots[3 * slot] == h && slots[3 * slot + 1] == l) {
                    return (int) slots[3 * slot + 2] - 1;
                }
                slot = (slot + 1) & (capacity - 1);
            }
            slots[3 * slot] = h;
            slots[3 * slot + 1] = l;
            slots[3 * slot + 2] = next + 1L;
            if (++persons * 2 > capacity) {
                grow();
            }
            return next;
        }

        private void grow() {
            final long[] old = slots;
            final int oldCapacity = capacity;
            capacity = oldCapacity * 2;
            slots = new long[3 * capacity];
            for (int i = 0; i < oldCapacity; i++) {
                if (old[3 * i + 2] != 0) {
                    int slot = KeptPersons.slot(old[3 * i], old[3 * i + 1], capacity);
                    while (slots[3 * slot + 2] != 0) {
                        slot = (slot + 1) & (capacity - 1);
                    }
                    System.arraycopy(old, 3 * i, slots, 3 * slot, 3);
                }
            }
        }
    }

    /** Rows a collector took from one block: each row's actor index and row number, in row order. */
    static final class RowsTaken {
        private int[] actors = new int[256];
        private int[] rows = new int[256];
        private int size;

        void clear() {
            size = 0;
        }

        void add(final int actor, final int row) {
            if (size == rows.length) {
                actors = java.util.Arrays.copyOf(actors, size * 2);
                rows = java.util.Arrays.copyOf(rows, size * 2);
            }
            actors[size] = actor;
            rows[size++] = row;
        }

        int size() {
            return size;
        }

        int actor(final int i) {
            return actors[i];
        }

        int row(final int i) {
            return rows[i];
        }
    }

    private static final int ANY_EVENT = -2;
    /** Rows a collector takes before it puts them in {@link #BUCKETS} buckets by actor. */
    private static final int SPLIT_AT = 1 << 16;
    private static final int BUCKETS = 64;
    /** The breakdown values of a funnel without a breakdown: the one empty value. */
    private static final List<List<String>> NO_BREAKDOWN = List.of(List.of());
    /** An actor code of a block not met yet in {@link BlockRowsCollector#add}. */
    private static final int NOT_YET = -1;
    /** An actor code of a block whose actor is another share's. */
    private static final int OTHER_SHARE = -2;
    /** An actor code of a block whose actor is this share's, with no row collected yet. */
    private static final int MINE = -3;

    /** The code of a step's or exclusion's event in a block ({@link #ANY_EVENT} for any), marking it wanted; -1 if absent. */
    private static int code(final EventBlock.Column names, final Optional<String> event, final boolean[] wanted) {
        if (event.isEmpty()) {
            java.util.Arrays.fill(wanted, true);
            return ANY_EVENT;
        }
        final int code = names.codeOf(event.get());
        if (code >= 0) {
            wanted[code] = true;
        }
        return code;
    }

    private static EventBlock.Column groupColumn(final EventBlock block, final int typeIndex) {
        return typeIndex >= 0 && typeIndex < EventBlock.GROUP_TYPES ? block.group(typeIndex) : null;
    }

    /** A collector of blocks' rows for this funnel, reading person and group properties through {@code properties}. */
    public BlockRowsCollector collector(final PropertyLookup properties, final Instant now) {
        return collector(properties, now, 0, 1);
    }

    /**
     * A collector of the actors of share {@code share} of {@code shares} only (by their uuid's or key's hash): a
     * partition too large to gather at once is read in shares, one after the other, each actor evaluated in exactly
     * one of them.
     */
    public BlockRowsCollector collector(final PropertyLookup properties, final Instant now, final int share, final int shares) {
        if (shares < 1 || share < 0 || share >= shares) {
            throw new IllegalArgumentException("share " + share + " of " + shares);
        }
        return new BlockRowsCollector(properties, now, share, shares);
    }

    /** Whether the funnel's range holds a moment between {@code firstMicros} and {@code lastMicros}. */
    public boolean overlaps(final long firstMicros, final long lastMicros) {
        return lastMicros >= firstMicros() && firstMicros <= lastMicros();
    }

    private long firstMicros() {
        final Instant from = range.from().toInstant();
        return Math.addExact(Math.multiplyExact(from.getEpochSecond(), 1_000_000L), (from.getNano() + 999) / 1000);
    }

    private long lastMicros() {
        final Instant to = range.to().toInstant();
        return Math.floorDiv(to.getEpochSecond() * 1_000_000_000L + to.getNano(), 1000L);
    }

    /** One actor's outcome (its events in timeline order) in a funnel {@link #tallied}. */
    FunnelOutcome outcome(final List<FunnelEvent> events) {
        if (!tallied()) {
            throw new IllegalStateException("a funnel with breakdowns, periods or time to convert has no single outcome an actor");
        }
        if (events.isEmpty()) {
            return FunnelOutcome.NOT_ENTERED;
        }
        return unordered != null ? unordered.evaluate(events, -1, List.of()) : ordered.evaluate(events, -1, List.of());
    }

    /** What one person (its events in timeline order) adds to a partial, alone; null when nothing. */
    FunnelProgress.Contribution contribution(final List<FunnelEvent> events) {
        final Partial own = new Partial();
        evaluate(events, own, null);
        return FunnelProgress.Contribution.of(own);
    }

    /**
     * A person's evaluation that goes on as later events come ({@link OrderedFunnel.Run}), or empty when this funnel
     * evaluates each person from all its events at once: unordered funnels (any step may start), funnel trends
     * (entrance periods), breakdowns (a person's values come from all its events) and groups.
     */
    Optional<OrderedFunnel.Run> run() {
        return ordered == null || trends.isPresent() || breakdown.isPresent() || aggregationGroup.isPresent()
                ? Optional.empty() : Optional.of(ordered.run());
    }

    /** A run of this funnel as {@link OrderedFunnel.Run#freeze} left it (a funnel that has {@link #run runs}). */
    OrderedFunnel.Run thaw(final long[] frozen) {
        return ordered.thaw(frozen);
    }

    /** The length of a funnel trend's period counts (two cells per bucket). */
    int periodCells() {
        return trends.isPresent() ? 2 * range.buckets().size() : 0;
    }

    /**
     * Evaluates one actor (its events in time order) under each breakdown value it has, into {@code into}; a persons
     * request's also keeps the actor's id ({@code actor}) under each value where it is listed.
     */
    private void evaluate(final List<FunnelEvent> fed, final Partial into, final String actor) {
        if (fed.isEmpty()) {
            return;
        }
        final List<List<String>> values = breakdown.isEmpty() ? NO_BREAKDOWN : breakdown.get().candidates(fed, unordered != null);
        final int attributionStep = breakdown.isEmpty() ? -1 : breakdown.get().refusingStep();
        final boolean filtered = breakdown.isPresent() && breakdown.get().filtersEvents();
        for (final List<String> value : values) {
            final List<FunnelEvent> events = filtered ? fed.stream().filter(e -> e.breakdown().equals(value)).toList() : fed;
            if (events.isEmpty()) {
                continue;
            }
            if (trends.isPresent()) {
                final Map<Integer, Integer> converted = trends.get().evaluate(events, e -> range.bucketOf(TimelineEvent.instant(e.timeMicros())),
                        attributionStep, value);
                if (converted.isEmpty()) {
                    continue;
                }
                final long[] counts = into.periods.computeIfAbsent(value, v -> new long[2 * range.buckets().size()]);
                converted.forEach((period, result) -> {
                    counts[2 * period]++;
                    if (result == 1) {
                        counts[2 * period + 1]++;
                    }
                    if (actors.isPresent() && actors.get().takes(period, result)) {
                        into.actors.computeIfAbsent(value, v -> new ArrayList<>()).add(actor);
                    }
                });
                continue;
            }
            final FunnelOutcome outcome = unordered != null ? unordered.evaluate(events, attributionStep, value)
                    : ordered.evaluate(events, attributionStep, value);
            if (outcome.counts()) {
                into.outcomes.computeIfAbsent(value, v -> new ArrayList<>()).add(outcome);
                if (actors.isPresent() && actors.get().takes(outcome)) {
                    into.actors.computeIfAbsent(value, v -> new ArrayList<>()).add(actor);
                }
            }
        }
    }

    /**
     * PostHog's answer over the whole query (every partial merged into {@code whole}): the steps ({@code []} when
     * nobody entered; a list of step lists with a breakdown), the time-to-convert histogram, or the trend items.
     */
    @Override
    public JsonNode result(final Partial whole) {
        final Partial evaluated = evaluateGroups(whole);
        if (actors.isPresent()) {
            return actors(evaluated, actors.get());
        }
        if (timeToConvert.isPresent()) {
            return timeToConvert(evaluated, timeToConvert.get());
        }
        if (trends.isPresent()) {
            return trends(evaluated);
        }
        if (breakdown.isEmpty()) {
            final FunnelTally tally = FunnelTally.of(steps.size(), evaluated.outcomes.getOrDefault(List.of(), List.of()));
            return steps(evaluated.tally == null ? tally : tally.merge(evaluated.tally), Optional.empty());
        }
        final ArrayNode result = NODES.arrayNode();
        for (final Map.Entry<List<String>, List<FunnelOutcome>> group : limited(evaluated.outcomes)) {
            result.add(steps(FunnelTally.of(steps.size(), group.getValue()), Optional.of(group.getKey())));
        }
        return result;
    }

    /** How many steps the funnel has. */
    public int stepCount() {
        return steps.size();
    }

    /**
     * Whether this funnel's answer needs of its actors only their {@link FunnelTally tally} (steps shown without a
     * breakdown, over persons): a kept funnel then adds its persons summed up, not one by one.
     */
    public boolean tallied() {
        return actors.isEmpty() && breakdown.isEmpty() && trends.isEmpty() && timeToConvert.isEmpty() && aggregationGroup.isEmpty();
    }

    /** Actors evaluated so far, and the groups of a group-aggregated funnel evaluated now, each over its events in time order. */
    private Partial evaluateGroups(final Partial whole) {
        if (whole.groups.isEmpty()) {
            return whole;
        }
        final Partial evaluated = new Partial().merge(whole);
        evaluated.groups.clear();
        for (final String key : new TreeMap<>(whole.groups).keySet()) {
            final List<FunnelEvent> events = new ArrayList<>(whole.groups.get(key));
            // Persons' timelines interleave; a group's events are ordered by time (then uuid, so that how the
            // persons were spread over partials does not matter), each event once.
            events.sort(Comparator.comparingLong(FunnelEvent::timeMicros).thenComparing(FunnelEvent::uuid));
            final List<FunnelEvent> distinct = new ArrayList<>(events.size());
            for (final FunnelEvent e : events) {
                final FunnelEvent last = distinct.isEmpty() ? null : distinct.get(distinct.size() - 1);
                if (last == null || last.timeMicros() != e.timeMicros() || !last.uuid().equals(e.uuid())) {
                    distinct.add(e);
                }
            }
            evaluate(distinct, evaluated, key);
        }
        return evaluated;
    }

    /**
     * The breakdown values as PostHog shows them: ordered by how many reached the last step, then the one before,
     * and so on (then by value, where PostHog leaves the order open), the first {@code breakdown_limit} on their own,
     * the rest summed up as {@code Other}.
     */
    private List<Map.Entry<List<String>, List<FunnelOutcome>>> limited(final Map<List<String>, List<FunnelOutcome>> outcomes) {
        final FunnelBreakdown b = breakdown.orElseThrow();
        final Map<List<String>, List<FunnelOutcome>> grouped = new HashMap<>();
        shownValues(outcomes).forEach((value, shown) -> grouped.computeIfAbsent(shown, v -> new ArrayList<>()).addAll(outcomes.get(value)));
        final List<Map.Entry<List<String>, List<FunnelOutcome>>> result = new ArrayList<>();
        for (final List<String> value : byCounts(grouped)) {
            if (result.size() <= b.limit()) {
                result.add(Map.entry(value, grouped.get(value)));
            }
        }
        return result;
    }

    /** Each breakdown value as its steps are shown: itself among the first {@code breakdown_limit}, else {@code Other}. */
    private Map<List<String>, List<String>> shownValues(final Map<List<String>, List<FunnelOutcome>> outcomes) {
        final FunnelBreakdown b = breakdown.orElseThrow();
        final Map<List<String>, List<String>> shown = new java.util.LinkedHashMap<>();
        for (final List<String> value : byCounts(outcomes)) {
            shown.put(value, shown.size() < b.limit() ? value : b.other());
        }
        return shown;
    }

    /**
     * A persons request's page: the ids of the actors it takes, under the breakdown value it names (as the funnel
     * shows values: those past the limit as {@code Other}), each once, in order.
     */
    private JsonNode actors(final Partial whole, final FunnelActors target) {
        final Map<List<String>, List<String>> shown = breakdown.isEmpty() || trends.isPresent() ? Map.of() : shownValues(whole.outcomes);
        final java.util.TreeSet<String> ids = new java.util.TreeSet<>();
        whole.actors.forEach((value, list) -> {
            final List<String> as = shown.getOrDefault(value, value);
            if (breakdown.isEmpty() || breakdown.get().requested(as).stream().anyMatch(target::takesValue)) {
                ids.addAll(list);
            }
        });
        return target.page().of(new ArrayList<>(ids));
    }

    private List<List<String>> byCounts(final Map<List<String>, List<FunnelOutcome>> outcomes) {
        final int n = steps.size();
        final Map<List<String>, long[]> counts = new HashMap<>();
        outcomes.forEach((value, list) -> {
            final long[] c = new long[n];
            for (final FunnelOutcome o : list) {
                for (int s = 0; s <= o.stepReached() && s < n; s++) {
                    c[s]++;
                }
            }
            counts.put(value, c);
        });
        final Comparator<List<String>> byReached = (a, b) -> {
            for (int s = n - 1; s >= 0; s--) {
                final int c = Long.compare(counts.get(b)[s], counts.get(a)[s]);
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        };
        return counts.keySet().stream().sorted(byReached.thenComparingInt(breakdown.get()::rank).thenComparing(FunnelQuery::compareValues)).toList();
    }

    /** Values compared as ClickHouse compares arrays of strings: element by element, then the shorter first. */
    private static int compareValues(final List<String> a, final List<String> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            final int c = a.get(i).compareTo(b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }

    /** One funnel's step list, with its breakdown value if broken down. */
    private ArrayNode steps(final FunnelTally tally, final Optional<List<String>> value) {
        final ArrayNode result = NODES.arrayNode();
        final List<FunnelSteps.Step> counted = tally.report();
        for (final FunnelSteps.Step s : counted) {
            final Step step = steps.get(s.order());
            final ObjectNode node = result.addObject();
            if (unordered != null) {
                node.putNull("action_id");
                node.put("name", "Completed " + (s.order() + 1) + " step" + (s.order() > 0 ? "s" : ""));
                node.putNull("custom_name");
            } else {
                node.set("action_id", step.action().<JsonNode>map(a -> NODES.numberNode(a.id()))
                        .or(() -> step.event().map(NODES::textNode)).orElse(NODES.nullNode()));
                node.set("name", step.action().<JsonNode>map(a -> NODES.textNode(a.name()))
                        .or(() -> step.event().map(NODES::textNode)).orElse(NODES.nullNode()));
                node.set("custom_name", step.definition().path("custom_name").isTextual() ? step.definition().get("custom_name") : NODES.nullNode());
            }
            node.put("order", s.order());
            node.putArray("people");
            node.put("count", s.count());
            node.put("type", step.action().isPresent() && unordered == null ? "actions" : "events");
            node.set("average_conversion_time", s.average().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
            node.set("median_conversion_time", s.median().<JsonNode>map(NODES::numberNode).orElse(NODES.nullNode()));
            value.ifPresent(v -> {
                node.set("breakdown", breakdown.orElseThrow().name(v));
                node.set("breakdown_value", breakdown.orElseThrow().render(v));
            });
            // The links to the step's persons are the gateway's to write (it knows the project and the filter).
            node.putNull("converted_people_url");
            node.putNull("dropped_people_url");
        }
        return result;
    }

    /**
     * PostHog's funnel trend items: per entrance period the percentage of actors who reached the from step that
     * also reached the to step (rounded to two decimals; 0 without any), with the periods' {@code days} and
     * {@code labels}. Broken down: one item per value, values ordered as PostHog's rows are cut (most actors
     * reaching the from step first, at most {@code breakdown_limit} values and 1000 rows), then shown sorted by value.
     */
    private ArrayNode trends(final Partial whole) {
        final List<ZonedDateTime> buckets = range.buckets();
        final ArrayNode result = NODES.arrayNode();
        if (breakdown.isEmpty()) {
            final long[] counts = whole.periods.getOrDefault(List.of(), new long[2 * buckets.size()]);
            result.add(trendItem(counts, buckets, 0, buckets.size()));
            return result;
        }
        final Map<List<String>, Long> entered = new HashMap<>();
        whole.periods.forEach((value, counts) -> {
            long total = 0;
            for (int p = 0; p < buckets.size(); p++) {
                total += counts[2 * p];
            }
            entered.put(value, total);
        });
        final List<List<String>> ranked = entered.keySet().stream()
                .sorted(Comparator.<List<String>>comparingLong(entered::get).reversed().thenComparing((a, b) -> compareValues(b, a))).toList();
        long rows = Math.min((long) breakdown.get().limit() * buckets.size(), TRENDS_MAX_ROWS);
        final Map<List<String>, Integer> shown = new TreeMap<>(FunnelQuery::compareValues);
        for (final List<String> value : ranked) {
            if (rows <= 0) {
                break;
            }
            final int periods = (int) Math.min(rows, buckets.size());
            shown.put(value, periods);
            rows -= periods;
        }
        shown.forEach((value, periods) -> {
            final ObjectNode item = trendItem(whole.periods.get(value), buckets, 0, periods);
            item.set("breakdown_value", breakdown.get().render(value));
            result.add(item);
        });
        return result;
    }

    private ObjectNode trendItem(final long[] counts, final List<ZonedDateTime> buckets, final int from, final int to) {
        final ObjectNode item = NODES.objectNode();
        item.put("count", to - from);
        final ArrayNode data = item.putArray("data");
        final ArrayNode days = item.putArray("days");
        final ArrayNode labels = item.putArray("labels");
        for (int p = from; p < to; p++) {
            final long entered = counts[2 * p];
            final long converted = counts[2 * p + 1];
            // ClickHouse's round(x, 2) of a float: to the nearest hundredth, halves to even.
            data.add(entered > 0 ? Math.rint((double) converted / entered * 100 * 100) / 100 : 0.0);
            days.add(range.day(buckets.get(p)));
            labels.add(range.label(buckets.get(p)));
        }
        return item;
    }

    /**
     * PostHog's histogram of the time from {@code fromStep} to {@code toStep} among the actors who got that far:
     * {@code bin_count} bins (else the cube root of the number of actors, 1 to 60) of equal whole-second width from
     * the shortest time, plus one past the longest; {@code [[bin start, actors], ...]} and the average.
     */
    private static ObjectNode timeToConvert(final Partial whole, final TimeToConvert t) {
        final List<Double> samples = new ArrayList<>();
        for (final List<FunnelOutcome> outcomes : whole.outcomes.values()) {
            for (final FunnelOutcome outcome : outcomes) {
                if (outcome.stepReached() >= t.toStep()) {
                    double total = 0;
                    for (int i = t.fromStep(); i < t.toStep(); i++) {
                        total += outcome.timings()[i];
                    }
                    samples.add(total);
                }
            }
        }
        // Sorted, so that the average does not depend on the order partials were merged in.
        samples.sort(Comparator.naturalOrder());
        final ObjectNode result = NODES.objectNode();
        final ArrayNode bins = result.putArray("bins");
        if (samples.isEmpty()) {
            result.putNull("average_conversion_time");
            return result;
        }
        final int count = t.bins().orElseGet(() -> (int) Math.max(1, Math.min(60, Math.ceil(Math.cbrt(samples.size())))));
        final double min = Math.floor(samples.get(0));
        final double max = Math.ceil(samples.get(samples.size() - 1));
        double width = Math.ceil((max - min) / count);
        if (width <= 0) {
            width = 60;
        }
        final long[] actors = new long[count + 1];
        double sum = 0;
        for (final double sample : samples) {
            actors[(int) Math.min(count, Math.floor((sample - min) / width))]++;
            sum += sample;
        }
        for (int k = 0; k <= count; k++) {
            bins.addArray().add(Math.round(min + k * width)).add(actors[k]);
        }
        result.put("average_conversion_time", sum / samples.size());
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
