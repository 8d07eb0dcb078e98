package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.eddy.trends.CohortBreakdown;
import dev.eddy.trends.PropertyFilter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A funnel's breakdown as PostHog's funnels run it: the value of each event ({@code ""} where the property is
 * missing), which values an actor is evaluated under ({@code breakdown_attribution_type}), and how values are
 * shown. Event and person breakdowns are lists of values even for one property ({@code ["Chrome"]}); a group
 * breakdown named by a single string stays a string.
 *
 * @param properties      the properties broken down by, in order
 * @param type            {@code event}, {@code person} or {@code group}
 * @param groupTypeIndex  the group type of a group breakdown, else -1
 * @param array           whether values are shown as lists
 * @param attribution     {@code first_touch}, {@code last_touch}, {@code all_events} or {@code step}
 * @param attributionStep the 0-based step of {@code step} attribution, else -1
 * @param limit           how many values are shown before the rest is summed up as {@code Other}
 * @param normalizeUrl    {@code breakdown_normalize_url}: trailing {@code /?#} are cut from event values
 * @param cohorts         a cohort breakdown's cohorts ({@code breakdown_type: cohort}): an event's value is the keys of
 *                        the listed cohorts its person is in now (and {@code all}), so every event of a person has the
 *                        same; first and last touch evaluate the person under the first of them in the breakdown's
 *                        order (PostHog's pick among a person's cohorts is arbitrary), all events and step attribution
 *                        under each; shown with {@code breakdown} the cohort's name, {@code breakdown_value} its id (0
 *                        for all), every cohort on its own (no Other)
 */
record FunnelBreakdown(List<String> properties, String type, int groupTypeIndex, boolean array, String attribution, int attributionStep,
                       int limit, boolean normalizeUrl, Optional<CohortBreakdown> cohorts) {
    static final int DEFAULT_LIMIT = 25;
    static final String OTHER = "Other";
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    FunnelBreakdown {
        properties = List.copyOf(properties);
    }

    /**
     * @return the query's breakdown, if it has one
     * @throws IllegalArgumentException on a breakdown PostHog would refuse or Eddy does not run
     */
    static Optional<FunnelBreakdown> parse(final JsonNode query, final int steps, final String orderType) {
        JsonNode breakdown = query.path("breakdown");
        String type = query.path("breakdown_type").isTextual() ? query.get("breakdown_type").asText() : "event";
        int groupIndex = query.path("breakdown_group_type_index").isIntegralNumber() ? query.get("breakdown_group_type_index").asInt() : -1;
        final JsonNode list = query.path("breakdowns");
        if (empty(breakdown) && list.isArray() && !list.isEmpty()) {
            if (list.size() > 1) {
                throw new IllegalArgumentException("Funnels support only one breakdown in breakdowns");
            }
            breakdown = list.get(0).path("property");
            type = list.get(0).path("type").asText("event");
            if (list.get(0).path("group_type_index").isIntegralNumber()) {
                groupIndex = list.get(0).get("group_type_index").asInt();
            }
        }
        if (empty(breakdown)) {
            return Optional.empty();
        }
        if ("events".equals(type)) {
            type = "event";
        }
        if ("cohort".equals(type)) {
            final String attribution = attribution(query);
            final int step = "step".equals(attribution) ? attributionStep(query.path("breakdown_attribution_value"), steps) : -1;
            final CohortBreakdown cohorts = CohortBreakdown.parse(breakdown, query.get(CohortBreakdown.INLINED));
            return Optional.of(new FunnelBreakdown(cohorts.values().stream().map(CohortBreakdown.Value::key).toList(), type, -1, false, attribution,
                    step, Integer.MAX_VALUE, false, Optional.of(cohorts)));
        }
        if (!List.of("event", "person", "group").contains(type)) {
            throw new IllegalArgumentException("breakdown_type " + type + " is not supported in funnels by Eddy yet");
        }
        if ("group".equals(type) && (groupIndex < 0 || groupIndex > 4)) {
            throw new IllegalArgumentException("a group breakdown needs a breakdown_group_type_index from 0 to 4");
        }
        final List<String> properties = new ArrayList<>();
        if (breakdown.isArray()) {
            for (final JsonNode p : breakdown) {
                if (p.isNull()) {
                    continue;
                }
                if (!p.isValueNode() || p.asText().isEmpty()) {
                    throw new IllegalArgumentException("breakdown must be a property name or a list of them");
                }
                properties.add(p.asText());
            }
            if (properties.isEmpty()) {
                return Optional.empty();
            }
        } else if (breakdown.isTextual() || breakdown.isNumber()) {
            properties.add(breakdown.asText());
        } else {
            throw new IllegalArgumentException("breakdown must be a property name or a list of them");
        }
        final boolean array = !(breakdown.isValueNode() && "group".equals(type));
        final int limit = query.path("breakdown_limit").asInt(0);
        if (limit < 0) {
            throw new IllegalArgumentException("breakdown_limit must be at least 1");
        }
        final String attribution = attribution(query);
        int step = -1;
        if ("step".equals(attribution)) {
            step = attributionStep(query.path("breakdown_attribution_value"), steps);
            if ("unordered".equals(orderType) && step != 0) {
                throw new IllegalArgumentException("Only the first step can be used for breakdown attribution in unordered funnels");
            }
        }
        return Optional.of(new FunnelBreakdown(properties, type, groupIndex, array, attribution, step, limit == 0 ? DEFAULT_LIMIT : limit,
                "event".equals(type) && array && query.path("breakdown_normalize_url").asBoolean(false), Optional.empty()));
    }

    private static String attribution(final JsonNode query) {
        final String attribution = query.path("breakdown_attribution_type").isTextual()
                ? query.get("breakdown_attribution_type").asText().toLowerCase(Locale.ROOT) : "first_touch";
        if (!List.of("first_touch", "last_touch", "all_events", "step").contains(attribution)) {
            throw new IllegalArgumentException("breakdown_attribution_type must be first_touch, last_touch, all_events or step");
        }
        return attribution;
    }

    private static int attributionStep(final JsonNode value, final int steps) {
        final int step;
        if (value.isIntegralNumber()) {
            step = value.asInt();
        } else if (value.isTextual() && value.asText().trim().matches("\\d{1,9}")) {
            step = Integer.parseInt(value.asText().trim());
        } else {
            throw new IllegalArgumentException("step attribution needs a breakdown_attribution_value: the step to take the breakdown value from");
        }
        if (step >= steps) {
            throw new IllegalArgumentException("breakdown_attribution_value must be a step of the funnel, from 0 to " + (steps - 1));
        }
        return step;
    }

    private static boolean empty(final JsonNode breakdown) {
        return breakdown.isMissingNode() || breakdown.isNull() || breakdown.isTextual() && breakdown.asText().isEmpty()
                || breakdown.isArray() && breakdown.isEmpty();
    }

    /** The value of one event: per property its text, {@code ""} where missing or null (a cohort breakdown's: its person's cohorts). */
    List<String> valueOf(final PropertyFilter.Source source, final java.time.Instant now) {
        if (cohorts.isPresent()) {
            final List<String> keys = new ArrayList<>(2);
            for (final CohortBreakdown.Value cohort : cohorts.get().values()) {
                if (cohort.contains(source, now)) {
                    keys.add(cohort.key());
                }
            }
            return keys;
        }
        final List<String> value = new ArrayList<>(properties.size());
        for (final String property : properties) {
            final JsonNode node = switch (type) {
                case "person" -> source.person(property);
                case "group" -> source.group(groupTypeIndex, property);
                default -> source.event(property);
            };
            String text = node == null || node.isNull() || node.isMissingNode() ? "" : node.isTextual() ? node.asText() : node.toString();
            if (normalizeUrl) {
                text = dev.eddy.trends.PropertyFilter.withoutTrailingUrlSeparators(text);
            }
            value.add(text);
        }
        return value;
    }

    /** Whether an actor is evaluated per value only over the events carrying it ({@code all_events}). */
    boolean filtersEvents() {
        return "all_events".equals(attribution) && cohorts.isEmpty();
    }

    /**
     * The 0-based step whose event must carry the value an actor is evaluated under, or -1: a cohort breakdown's value
     * is its person's, carried by every event alike.
     */
    int refusingStep() {
        return cohorts.isPresent() ? -1 : attributionStep;
    }

    /**
     * The values an actor is evaluated under: the first or last non-empty value of its events (a group string
     * breakdown takes the first or last event's, empty or not), every value ({@code all_events}), or the values of
     * its events matching the attribution step (an unordered funnel: all values, checked on its first event). A
     * group string breakdown with step attribution also has {@code ""} when an event does not match that step, as
     * PostHog's does (its events outside the step count as empty values).
     */
    List<List<String>> candidates(final List<FunnelEvent> events, final boolean unordered) {
        if (events.isEmpty()) {
            return List.of();
        }
        if (cohorts.isPresent()) {
            final List<String> keys = events.get(0).breakdown();
            if (keys.isEmpty() || "step".equals(attribution) && !unordered && events.stream().noneMatch(e -> e.matches(attributionStep))) {
                return List.of();
            }
            return List.of("first_touch", "last_touch").contains(attribution) ? List.of(List.of(keys.get(0)))
                    : keys.stream().map(List::of).toList();
        }
        return switch (attribution) {
            case "first_touch" -> List.of(touch(events));
            case "last_touch" -> List.of(touch(reversed(events)));
            case "step" -> {
                final Set<List<String>> values = new LinkedHashSet<>();
                for (final FunnelEvent e : events) {
                    if (unordered || e.matches(attributionStep)) {
                        values.add(e.breakdown());
                    } else if (!array) {
                        values.add(List.of(""));
                    }
                }
                yield List.copyOf(values);
            }
            default -> List.copyOf(new LinkedHashSet<>(events.stream().map(FunnelEvent::breakdown).toList()));
        };
    }

    private List<String> touch(final List<FunnelEvent> events) {
        if (!array) {
            return events.get(0).breakdown();
        }
        for (final FunnelEvent e : events) {
            if (e.breakdown().stream().anyMatch(v -> !v.isEmpty())) {
                return e.breakdown();
            }
        }
        return Collections.nCopies(properties.size(), "");
    }

    private static List<FunnelEvent> reversed(final List<FunnelEvent> events) {
        final List<FunnelEvent> copy = new ArrayList<>(events);
        Collections.reverse(copy);
        return copy;
    }

    /**
     * The value as PostHog's funnels show it: a list for event and person breakdowns, one property included
     * ({@code ["Chrome"]}, as its query runner answers the legacy endpoint too), or the single string of a group
     * breakdown asked for as a string.
     */
    JsonNode render(final List<String> value) {
        if (cohorts.isPresent()) {
            final Optional<CohortBreakdown.Value> cohort = cohorts.get().value(value.isEmpty() ? "" : value.get(0));
            return cohort.flatMap(CohortBreakdown.Value::cohort).<JsonNode>map(c -> NODES.numberNode(c.id())).orElse(NODES.numberNode(0));
        }
        if (!array) {
            return NODES.textNode(value.isEmpty() ? "" : value.get(0));
        }
        final ArrayNode node = NODES.arrayNode();
        value.forEach(node::add);
        return node;
    }

    /** How a step shows its value as {@code breakdown}: as {@link #render}, a cohort by its name ({@code all users}). */
    JsonNode name(final List<String> value) {
        if (cohorts.isPresent()) {
            return NODES.textNode(cohorts.get().value(value.isEmpty() ? "" : value.get(0)).map(CohortBreakdown.Value::label).orElse(""));
        }
        return render(value);
    }

    /**
     * The forms in which a persons request may name a value ({@code funnel_step_breakdown}, as a list of texts): as
     * {@link #render} shows it; a cohort by its id, all by 0 or {@code all}.
     */
    List<List<String>> requested(final List<String> value) {
        if (cohorts.isPresent()) {
            final String key = value.isEmpty() ? "" : value.get(0);
            return CohortBreakdown.ALL.equals(key) ? List.of(List.of("0"), List.of(key)) : List.of(List.of(key));
        }
        return List.of(array ? value : List.of(value.isEmpty() ? "" : value.get(0)));
    }

    /** Where a cohort breakdown lists a value (0 for any other breakdown): values that tie are shown in this order. */
    int rank(final List<String> value) {
        return cohorts.map(c -> c.rank(value.isEmpty() ? "" : value.get(0))).orElse(0);
    }

    /** The value that gathers the values past the limit. */
    List<String> other() {
        return List.of(OTHER);
    }
}
