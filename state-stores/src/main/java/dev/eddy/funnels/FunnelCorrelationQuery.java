package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.insights.Mergeable;
import dev.eddy.insights.PartialQuery;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.ActorPage;
import dev.eddy.trends.ElementsChain;
import dev.eddy.trends.PropertyFilter;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * PostHog's funnel correlation ({@code insights/funnel/correlation}): a funnel's filter with
 * {@code funnel_correlation_type} and its lists, evaluated person by person over each person's whole timeline.
 * Every person who entered the funnel (and was not excluded) is a success when the attempt the funnel picks reached
 * the last step, else a failure; the person's candidates are then:
 * <ul>
 *   <li>{@code events}: the names of the events the person sent after the attempt's first step and before its last
 *   one (converted) or before the conversion window ends (not converted), inside the date range, except the funnel's
 *   step events (an action step's events included) and {@code funnel_correlation_exclude_event_names};</li>
 *   <li>{@code event_with_properties}: for those events named in {@code funnel_correlation_event_names}, every
 *   property as {@code event::key::value} (a text value as it is, another as JSON), except keys in
 *   {@code funnel_correlation_event_exclude_property_names}; with {@code $autocapture} among the names, each event's
 *   {@code $event_type} and elements chain instead, {@code event::elements_chain::type__~~__chain}; a candidate of
 *   fewer than 3 persons is left out;</li>
 *   <li>{@code properties}: the person's properties named in {@code funnel_correlation_names} as {@code key::value}
 *   ({@code ""} when missing), or every property the person has with {@code $all}, except keys in
 *   {@code funnel_correlation_exclude_names}.</li>
 * </ul>
 * The partial holds, per candidate, how many persons with it converted and not, and the totals; the result is
 * {@link FunnelCorrelation}'s over the merged counts, as PostHog's {@code {events: [{event: {event, properties,
 * elements}, success_count, failure_count, odds_ratio, correlation_type}], skewed}}.
 *
 * <p>Asked with {@code funnel_correlation_person_converted} (the persons behind a number, as the answer's people
 * URLs ask), it lists the persons who have one candidate ({@code funnel_correlation_person_entity}, an event with
 * its property values, or {@code funnel_correlation_property_values}, person property values) and converted (true)
 * or not (false): {@code {count, actors: [[id, null], ...]}}, by id.
 */
public final class FunnelCorrelationQuery implements PartialQuery<FunnelCorrelationQuery.Partial> {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String AUTOCAPTURE = "$autocapture";
    private static final String ELEMENTS_DIVIDER = "__~~__";
    /** PostHog keeps an event property value only when more than this many persons have it. */
    private static final int EVENT_PROPERTY_MIN_PERSONS = 2;
    /** The funnel fields a correlation does not take: it evaluates persons through the funnel's steps alone. */
    private static final List<String> NOT_TAKEN = List.of("breakdown", "breakdowns", "breakdown_type", "breakdown_attribution_type",
            "breakdown_attribution_value", "breakdown_limit", "breakdown_normalize_url", "breakdown_group_type_index", "funnel_step",
            "funnel_step_breakdown", "funnel_custom_steps", "entrance_period_start", "drop_off", "funnel_from_step", "funnel_to_step");

    /** What a correlation correlates conversion with. */
    enum Type {
        EVENTS, PROPERTIES, EVENT_WITH_PROPERTIES
    }

    /** A persons request: the candidate, and whether those who converted (true) or not are listed. */
    private record Target(String candidate, boolean converted, ActorPage page) {
    }

    /** Empty when the filter has no steps at all: PostHog answers no correlation then. */
    private final Optional<FunnelQuery> funnel;
    private final Type type;
    private final List<String> propertyNames;
    private final Set<String> excludedPropertyNames;
    private final Set<String> eventNames;
    private final Set<String> excludedEventNames;
    private final Set<String> excludedEventPropertyNames;
    private final Optional<Target> target;

    private FunnelCorrelationQuery(final Optional<FunnelQuery> funnel, final Type type, final List<String> propertyNames,
                                   final Set<String> excludedPropertyNames, final Set<String> eventNames, final Set<String> excludedEventNames,
                                   final Set<String> excludedEventPropertyNames, final Optional<Target> target) {
        this.funnel = funnel;
        this.type = type;
        this.propertyNames = propertyNames;
        this.excludedPropertyNames = excludedPropertyNames;
        this.eventNames = eventNames;
        this.excludedEventNames = excludedEventNames;
        this.excludedEventPropertyNames = excludedEventPropertyNames;
        this.target = target;
    }

    /**
     * @throws IllegalArgumentException with PostHog's message where PostHog refuses the request, or naming what Eddy
     *                                  does not correlate
     */
    public static FunnelCorrelationQuery parse(final JsonNode request, final ZoneId zone, final DayOfWeek weekStart,
                                               final JsonNode testAccountFilters, final Instant now,
                                               final Supplier<Optional<Instant>> earliest) {
        if (!request.isObject()) {
            throw new IllegalArgumentException("a funnel correlation request must be an object");
        }
        if (request.hasNonNull("aggregation_group_type_index") && !request.get("aggregation_group_type_index").asText().isBlank()) {
            throw new IllegalArgumentException("Eddy does not correlate funnels aggregated by groups (aggregation_group_type_index)");
        }
        final String typeName = request.path("funnel_correlation_type").asText("events");
        final Type type = switch (typeName) {
            case "events" -> Type.EVENTS;
            case "properties" -> Type.PROPERTIES;
            case "event_with_properties" -> Type.EVENT_WITH_PROPERTIES;
            default -> throw new IllegalArgumentException("funnel_correlation_type must be events, properties or event_with_properties");
        };
        Type asked = type;
        List<String> propertyNames = names(request, "funnel_correlation_names");
        Set<String> eventNames = new LinkedHashSet<>(names(request, "funnel_correlation_event_names"));
        Set<String> excludedEvents = new TreeSet<>(names(request, "funnel_correlation_exclude_event_names"));
        Optional<Target> target = Optional.empty();
        if (request.hasNonNull("funnel_correlation_person_converted")) {
            // The persons behind one candidate: the candidate of the people URL, read as the one to find.
            final String converted = request.get("funnel_correlation_person_converted").asText().toLowerCase(java.util.Locale.ROOT);
            if (!List.of("true", "false").contains(converted)) {
                throw new IllegalArgumentException("funnel_correlation_person_converted must be true or false");
            }
            final JsonNode values = request.path("funnel_correlation_property_values");
            final JsonNode entity = request.path("funnel_correlation_person_entity");
            final String candidate;
            if (values.isArray() && !values.isEmpty()) {
                final JsonNode value = values.get(0);
                candidate = value.path("key").asText() + "::" + scalar(value.get("value"));
                asked = Type.PROPERTIES;
                propertyNames = List.of(value.path("key").asText());
            } else if (entity.isObject() && entity.hasNonNull("id")) {
                final String event = entity.get("id").asText();
                final JsonNode properties = entity.path("properties");
                excludedEvents = Set.of();
                if (properties.isArray() && !properties.isEmpty()) {
                    final JsonNode property = properties.get(0);
                    candidate = event + "::" + property.path("key").asText() + "::" + scalar(property.get("value"));
                    asked = Type.EVENT_WITH_PROPERTIES;
                    eventNames = Set.of(event);
                } else {
                    candidate = event;
                    asked = Type.EVENTS;
                }
            } else {
                throw new IllegalArgumentException("funnel_correlation_person_entity or funnel_correlation_property_values is required");
            }
            target = Optional.of(new Target(candidate, "true".equals(converted), ActorPage.of(request)));
        }
        if (asked == Type.PROPERTIES && propertyNames.isEmpty()) {
            throw new IllegalArgumentException("Property Correlation expects atleast one Property to run correlation on");
        }
        if (asked == Type.EVENT_WITH_PROPERTIES && eventNames.isEmpty()) {
            throw new IllegalArgumentException("Event Property Correlation expects atleast one event name to run correlation on");
        }
        final ObjectNode steps = ((ObjectNode) request).deepCopy();
        steps.remove(NOT_TAKEN);
        steps.put("funnel_viz_type", "steps");
        final boolean none = steps.path("events").isEmpty() && steps.path("actions").isEmpty();
        final Optional<FunnelQuery> funnel = none ? Optional.empty()
                : Optional.of(FunnelQuery.parse(steps, zone, weekStart, testAccountFilters, now, earliest));
        return new FunnelCorrelationQuery(funnel, asked, List.copyOf(propertyNames), Set.copyOf(names(request, "funnel_correlation_exclude_names")),
                Set.copyOf(eventNames), Set.copyOf(excludedEvents), Set.copyOf(names(request, "funnel_correlation_event_exclude_property_names")),
                target);
    }

    /** A list of names: a JSON list of texts, or one text. */
    private static List<String> names(final JsonNode request, final String field) {
        final JsonNode value = request.path(field);
        if (value.isMissingNode() || value.isNull()) {
            return List.of();
        }
        if (value.isTextual()) {
            return value.asText().isEmpty() ? List.of() : List.of(value.asText());
        }
        if (!value.isArray()) {
            throw new IllegalArgumentException(field + " must be a list of names");
        }
        final List<String> names = new ArrayList<>();
        for (final JsonNode name : value) {
            if (!name.isTextual()) {
                throw new IllegalArgumentException(field + " must be a list of names");
            }
            names.add(name.asText());
        }
        return names;
    }

    /** A property value as a candidate shows it: a text as it is, another value as JSON; a one-value list as its value. */
    private static String scalar(final JsonNode value) {
        if (value == null) {
            return "";
        }
        if (value.isArray() && value.size() == 1) {
            return scalar(value.get(0));
        }
        return value.isTextual() ? value.asText() : value.toString();
    }

    /**
     * What some instance found: per candidate the persons with it who converted and did not, and the totals; for a
     * persons request, the ids of the persons it lists.
     */
    public static final class Partial implements Mergeable<Partial> {
        final Map<String, long[]> candidates = new HashMap<>();
        long successTotal;
        long failureTotal;
        final List<String> actors = new ArrayList<>();

        @Override
        public Partial merge(final Partial other) {
            other.candidates.forEach((name, counts) -> candidates.merge(name, counts.clone(), (a, b) -> {
                a[0] += b[0];
                a[1] += b[1];
                return a;
            }));
            successTotal += other.successTotal;
            failureTotal += other.failureTotal;
            actors.addAll(other.actors);
            return this;
        }

        @Override
        public byte[] encode() {
            final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeLong(successTotal);
                out.writeLong(failureTotal);
                out.writeInt(candidates.size());
                for (final Map.Entry<String, long[]> c : candidates.entrySet()) {
                    writeText(out, c.getKey());
                    out.writeLong(c.getValue()[0]);
                    out.writeLong(c.getValue()[1]);
                }
                out.writeInt(actors.size());
                for (final String actor : actors) {
                    writeText(out, actor);
                }
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        /** A text of any length (a candidate's value may be longer than {@code writeUTF} takes). */
        private static void writeText(final DataOutputStream out, final String text) throws IOException {
            final byte[] utf8 = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            out.writeInt(utf8.length);
            out.write(utf8);
        }

        private static String readText(final DataInputStream in) throws IOException {
            final int length = in.readInt();
            if (length < 0 || length > in.available()) {
                throw new IllegalArgumentException("not a funnel correlation partial");
            }
            return new String(in.readNBytes(length), java.nio.charset.StandardCharsets.UTF_8);
        }

        static Partial decode(final byte[] encoded) {
            final Partial partial = new Partial();
            try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(encoded))) {
                partial.successTotal = in.readLong();
                partial.failureTotal = in.readLong();
                final int count = in.readInt();
                for (int i = 0; i < count; i++) {
                    final String name = readText(in);
                    partial.candidates.put(name, new long[] {in.readLong(), in.readLong()});
                }
                final int actors = in.readInt();
                for (int i = 0; i < actors; i++) {
                    partial.actors.add(readText(in));
                }
                if (in.available() > 0) {
                    throw new IllegalArgumentException("not a funnel correlation partial");
                }
            } catch (final IOException e) {
                throw new IllegalArgumentException("not a funnel correlation partial", e);
            }
            return partial;
        }
    }

    @Override
    public Partial partial() {
        return new Partial();
    }

    @Override
    public Partial decode(final byte[] bytes) {
        return Partial.decode(bytes);
    }

    /** Whether an event at this time may matter (a step, or an event correlated): scans skip the others undecoded. */
    public boolean relevant(final long timeMicros) {
        return funnel.isPresent() && funnel.get().relevant(timeMicros);
    }

    /**
     * Takes one person: evaluates the funnel over the person's events and, if the person entered it, counts the
     * person's candidates as a success or a failure.
     *
     * @param person           the person's id (its uuid)
     * @param events           the person's timeline events in time order (any range)
     * @param source           the properties each event's filters read
     * @param personProperties the person's properties
     */
    public void add(final Partial partial, final String person, final List<TimelineEvent> events,
                    final Function<TimelineEvent, PropertyFilter.Source> source, final JsonNode personProperties, final Instant now) {
        if (funnel.isEmpty()) {
            return;
        }
        final FunnelQuery f = funnel.get();
        final long[] times = f.stepTimes(events, source, now);
        if (times.length == 0) {
            return;
        }
        final boolean converted = times.length == f.stepCount();
        final Set<String> candidates = type == Type.PROPERTIES ? propertyCandidates(personProperties)
                : eventCandidates(events, source, times[0], converted ? times[times.length - 1] : times[0] + f.windowMicros());
        if (target.isPresent()) {
            if (target.get().converted() == converted && candidates.contains(target.get().candidate())) {
                partial.actors.add(person);
            }
            return;
        }
        if (converted) {
            partial.successTotal++;
        } else {
            partial.failureTotal++;
        }
        for (final String candidate : candidates) {
            partial.candidates.computeIfAbsent(candidate, c -> new long[2])[converted ? 0 : 1]++;
        }
    }

    /**
     * The candidates of the events strictly between {@code fromMicros} and {@code toMicros}, inside the range, that
     * are not funnel steps.
     */
    private Set<String> eventCandidates(final List<TimelineEvent> events, final Function<TimelineEvent, PropertyFilter.Source> source,
                                        final long fromMicros, final long toMicros) {
        final FunnelQuery f = funnel.orElseThrow();
        final Set<String> steps = f.stepEventNames();
        final boolean elements = type == Type.EVENT_WITH_PROPERTIES && eventNames.contains(AUTOCAPTURE);
        final Set<String> found = new LinkedHashSet<>();
        for (final TimelineEvent e : events) {
            final long time = e.timeMicros();
            if (time <= fromMicros || time >= toMicros || !f.range().contains(e.time()) || steps.contains(e.event())) {
                continue;
            }
            if (type == Type.EVENTS) {
                if (!excludedEventNames.contains(e.event())) {
                    found.add(e.event());
                }
                continue;
            }
            if (!eventNames.contains(e.event())) {
                continue;
            }
            final PropertyFilter.Source props = source.apply(e);
            if (elements) {
                if (!excludedEventPropertyNames.contains("elements_chain")) {
                    found.add(e.event() + "::elements_chain::" + scalarOrEmpty(props.event("$event_type")) + ELEMENTS_DIVIDER
                            + ElementsChain.of(props).orElse(""));
                }
                continue;
            }
            final JsonNode properties = properties(e);
            for (final Iterator<Map.Entry<String, JsonNode>> it = properties.fields(); it.hasNext(); ) {
                final Map.Entry<String, JsonNode> property = it.next();
                if (!excludedEventPropertyNames.contains(property.getKey())) {
                    found.add(e.event() + "::" + property.getKey() + "::" + scalar(property.getValue()));
                }
            }
        }
        return found;
    }

    private static String scalarOrEmpty(final JsonNode value) {
        return value == null || value.isNull() ? "" : scalar(value);
    }

    private static JsonNode properties(final TimelineEvent e) {
        try {
            final JsonNode parsed = dev.eddy.serde.Json.mapper().readTree(e.properties());
            return parsed == null || !parsed.isObject() ? NODES.objectNode() : parsed;
        } catch (final IOException ex) {
            return NODES.objectNode();
        }
    }

    /** The person's property candidates: the named properties ({@code ""} when missing), or every one with {@code $all}. */
    private Set<String> propertyCandidates(final JsonNode personProperties) {
        final Set<String> found = new LinkedHashSet<>();
        if (propertyNames.contains("$all")) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = personProperties.fields(); it.hasNext(); ) {
                final Map.Entry<String, JsonNode> property = it.next();
                if (!property.getValue().isNull() && !excludedPropertyNames.contains(property.getKey())) {
                    found.add(property.getKey() + "::" + scalar(property.getValue()));
                }
            }
            return found;
        }
        for (final String name : propertyNames) {
            if (!excludedPropertyNames.contains(name)) {
                found.add(name + "::" + scalarOrEmpty(personProperties.get(name)));
            }
        }
        return found;
    }

    /** PostHog's correlation of the merged counts, or a persons request's page of ids. */
    @Override
    public JsonNode result(final Partial whole) {
        if (target.isPresent()) {
            return target.get().page().of(new ArrayList<>(new TreeSet<>(whole.actors)));
        }
        final ObjectNode result = NODES.objectNode();
        final ArrayNode events = result.putArray("events");
        if (funnel.isEmpty()) {
            result.put("skewed", false);
            return result;
        }
        final Map<String, FunnelCorrelation.Counts> counts = new HashMap<>();
        whole.candidates.forEach((name, c) -> {
            if (type != Type.EVENT_WITH_PROPERTIES || c[0] + c[1] > EVENT_PROPERTY_MIN_PERSONS) {
                counts.put(name, new FunnelCorrelation.Counts(c[0], c[1]));
            }
        });
        final FunnelCorrelation.Result correlation = FunnelCorrelation.of(counts, whole.successTotal, whole.failureTotal);
        for (final FunnelCorrelation.Odds odds : correlation.events()) {
            final ObjectNode item = events.addObject();
            item.set("event", definition(odds.name()));
            item.put("success_count", odds.successCount());
            item.put("failure_count", odds.failureCount());
            item.put("odds_ratio", odds.oddsRatio());
            item.put("correlation_type", odds.success() ? "success" : "failure");
        }
        result.put("skewed", correlation.skewed());
        return result;
    }

    /**
     * A candidate as PostHog shows it: {@code {event, properties, elements}}; an autocapture candidate's elements
     * chain as its elements, with its {@code $event_type}.
     */
    private ObjectNode definition(final String name) {
        final ObjectNode definition = NODES.objectNode();
        definition.put("event", name);
        final ObjectNode properties = definition.putObject("properties");
        final ArrayNode elements = definition.putArray("elements");
        final String prefix = AUTOCAPTURE + "::elements_chain::";
        if (type == Type.EVENT_WITH_PROPERTIES && eventNames.contains(AUTOCAPTURE) && name.startsWith(prefix)) {
            final String value = name.substring(prefix.length());
            final int divider = value.indexOf(ELEMENTS_DIVIDER);
            if (divider >= 0) {
                properties.put("$event_type", value.substring(0, divider));
                ChainElements.of(value.substring(divider + ELEMENTS_DIVIDER.length())).forEach(elements::add);
            }
        }
        return definition;
    }

    /** The type of correlation asked (the persons of a candidate ask the type the candidate is of). */
    Type type() {
        return type;
    }
}
