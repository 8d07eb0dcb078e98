package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.TimelineEventSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * PostHog's {@code journeys_for} for funnel tests: persons with properties, groups with properties, and events
 * (times in UTC as {@code 2020-01-01T12:00}; {@code $group_N} in an event's properties puts it in that group). A
 * query runs over every person in one partial ({@link #run}), and also split over two partials that travel as
 * bytes ({@link #runSplit}), which must give the same answer.
 */
final class Journeys {
    private final Map<String, ObjectNode> persons = new LinkedHashMap<>();
    private final Map<String, List<TimelineEvent>> timelines = new LinkedHashMap<>();
    private final Map<String, ObjectNode> groups = new HashMap<>();
    private ZoneId zone = ZoneOffset.UTC;
    private int sequence;

    Journeys person(final String id, final String properties) {
        persons.put(id, (ObjectNode) json(properties));
        timelines.computeIfAbsent(id, k -> new ArrayList<>());
        return this;
    }

    Journeys group(final int typeIndex, final String key, final String properties) {
        groups.put(typeIndex + ":" + key, (ObjectNode) json(properties));
        return this;
    }

    Journeys zone(final String id) {
        zone = ZoneId.of(id);
        return this;
    }

    Journeys event(final String person, final String name, final String time) {
        return event(person, name, time, "{}");
    }

    Journeys event(final String person, final String name, final String time, final String properties) {
        persons.computeIfAbsent(person, k -> Json.mapper().createObjectNode());
        final JsonNode props = json(properties);
        final Map<Integer, String> groupKeys = new HashMap<>();
        for (int i = 0; i < 5; i++) {
            if (props.path("$group_" + i).isTextual()) {
                groupKeys.put(i, props.get("$group_" + i).asText());
            }
        }
        final long micros = TimelineEvent.micros(LocalDateTime.parse(time).toInstant(ZoneOffset.UTC));
        final UUID uuid = UUID.nameUUIDFromBytes(("event-" + sequence++).getBytes(StandardCharsets.UTF_8));
        timelines.computeIfAbsent(person, k -> new ArrayList<>())
                .add(new TimelineEvent(micros, uuid, name, person, groupKeys, properties.getBytes(StandardCharsets.UTF_8)));
        return this;
    }

    JsonNode run(final String query, final Instant now) {
        final FunnelQuery funnel = parse(query, now);
        return funnel.result(fill(funnel, funnel.partial(), now));
    }

    /** Every person's events added to {@code partial}. */
    FunnelQuery.Partial fill(final FunnelQuery funnel, final FunnelQuery.Partial partial, final Instant now) {
        timelines.keySet().forEach(person -> add(funnel, partial, person, now));
        return partial;
    }

    /** The persons alternately over two partials, each encoded and decoded, then merged: must equal {@link #run}. */
    JsonNode runSplit(final String query, final Instant now) {
        return runSplit(parse(query, now), now);
    }

    private JsonNode runSplit(final FunnelQuery funnel, final Instant now) {
        final FunnelQuery.Partial first = funnel.partial();
        final FunnelQuery.Partial second = funnel.partial();
        int i = 0;
        for (final String person : timelines.keySet()) {
            add(funnel, i++ % 2 == 0 ? first : second, person, now);
        }
        final FunnelQuery.Partial merged = funnel.decode(second.encode()).merge(funnel.decode(first.encode()));
        return funnel.result(merged);
    }

    /** {@link #run}, asserting that the split run gives exactly the same. */
    JsonNode runBoth(final String query, final Instant now) {
        final JsonNode whole = run(query, now);
        assertThat(runSplit(query, now)).as("split over two partials").isEqualTo(whole);
        return whole;
    }

    /**
     * The page of persons a persons request lists ({@link FunnelQuery#parseActors}), as {@code [id, ...]}, asserting
     * that two partials sent as bytes list the same.
     */
    List<String> actors(final String request, final Instant now) {
        final FunnelQuery funnel = FunnelQuery.parseActors(json(request), zone, DayOfWeek.SUNDAY, null, now, Optional::empty);
        final JsonNode whole = funnel.result(fill(funnel, funnel.partial(), now));
        assertThat(runSplit(funnel, now)).as("split over two partials").isEqualTo(whole);
        final List<String> ids = new ArrayList<>();
        whole.path("actors").forEach(a -> ids.add(a.get(0).asText()));
        assertThat(whole.path("count").asInt()).isGreaterThanOrEqualTo(ids.size());
        return ids;
    }

    /** How many persons a persons request finds in all (every page). */
    int actorCount(final String request, final Instant now) {
        final FunnelQuery funnel = FunnelQuery.parseActors(json(request), zone, DayOfWeek.SUNDAY, null, now, Optional::empty);
        return funnel.result(fill(funnel, funnel.partial(), now)).path("count").asInt();
    }

    /**
     * A funnel correlation's answer ({@link FunnelCorrelationQuery}), asserting that the persons split over two partials
     * sent as bytes answer the same.
     */
    JsonNode correlation(final String request, final Instant now) {
        final FunnelCorrelationQuery query = FunnelCorrelationQuery.parse(json(request), zone, DayOfWeek.SUNDAY, null, now, Optional::empty);
        final FunnelCorrelationQuery.Partial whole = query.partial();
        final FunnelCorrelationQuery.Partial first = query.partial();
        final FunnelCorrelationQuery.Partial second = query.partial();
        int i = 0;
        for (final String person : timelines.keySet()) {
            final List<TimelineEvent> events = new ArrayList<>(timelines.get(person));
            events.sort(Comparator.comparingLong(TimelineEvent::timeMicros));
            final PropertyLookup lookup = lookup();
            query.add(whole, person, events, e -> new TimelineEventSource(person, e, lookup), lookup.person(person), now);
            query.add(i++ % 2 == 0 ? first : second, person, events, e -> new TimelineEventSource(person, e, lookup), lookup.person(person), now);
        }
        final JsonNode answer = query.result(whole);
        assertThat(query.result(query.decode(second.encode()).merge(query.decode(first.encode())))).as("split over two partials")
                .isEqualTo(answer);
        return answer;
    }

    FunnelQuery parse(final String query, final Instant now) {
        return FunnelQuery.parse(json(query), zone, DayOfWeek.SUNDAY, null, now, Optional::empty);
    }

    private void add(final FunnelQuery funnel, final FunnelQuery.Partial partial, final String person, final Instant now) {
        final List<TimelineEvent> events = new ArrayList<>(timelines.get(person));
        events.sort(Comparator.comparingLong(TimelineEvent::timeMicros));
        final PropertyLookup lookup = lookup();
        funnel.add(partial, person, events, e -> new TimelineEventSource(person, e, lookup), now);
    }

    private PropertyLookup lookup() {
        return new PropertyLookup() {
            @Override
            public ObjectNode person(final String personUuid) {
                return persons.get(personUuid);
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                return groups.getOrDefault(typeIndex + ":" + groupKey, Json.mapper().createObjectNode());
            }
        };
    }

    static JsonNode json(final String text) {
        try {
            return Json.mapper().readTree(text);
        } catch (final IOException e) {
            throw new AssertionError(e);
        }
    }
}
