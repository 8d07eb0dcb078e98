package dev.eddy.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.UUID;

/**
 * A page of a project's events, as PostHog's {@code EventsQuery} lists them: those in a time range (both ends
 * exclusive, as PostHog compares), of some event names, of one person, matching property filters, newest first (or
 * oldest), {@code limit} from {@code offset}. Every streams instance keeps the first {@code offset + limit + 1}
 * matches of its partitions ({@link Top}); the shares merge ({@link Page#merge}) and {@link #page} cuts the page, the one
 * more row telling whether there are more.
 *
 * @param afterMicros  events after this time only, microseconds ({@link Long#MIN_VALUE}: no bound)
 * @param beforeMicros events before this time only ({@link Long#MAX_VALUE}: no bound)
 * @param events       the event names asked for; empty is every event
 * @param person       the one person whose events are asked for, if any
 * @param properties   property filters as PostHog writes them (event, person, group and inlined cohort filters), a
 *                     group all of which must match; null for none
 * @param action       the action whose events are asked for, as an entity ({@code {"type": "actions", "id": 5}}, its
 *                     definition inlined), or null
 * @param ascending    oldest first instead of newest first
 */
public record EventListQuery(long projectId, long afterMicros, long beforeMicros, List<String> events, Optional<UUID> person,
                             JsonNode properties, JsonNode action, int limit, int offset, boolean ascending) {

    public EventListQuery {
        events = List.copyOf(events);
    }

    /**
     * One listed event with what its columns may show of its person.
     *
     * @param person                its person's uuid (its timeline's)
     * @param personCreatedAtMicros when its person was created; {@link Long#MIN_VALUE} when the person is not known
     * @param personProperties      its person's properties ({@code {}} when not known)
     */
    public record Row(String person, TimelineEvent event, long personCreatedAtMicros, ObjectNode personProperties) {
    }

    /**
     * The matches a share keeps, at most {@code kept} ({@link #kept}: the page, everything before it and one row more,
     * which tells whether there are more), in the query's order ({@code ascending} or not).
     */
    public record Page(List<Row> rows, boolean ascending, int kept) {
        public Page {
            rows = List.copyOf(rows);
        }

        /** Two shares of disjoint events as one, cut to what the page can need. */
        public static Page merge(final Page a, final Page b) {
            final List<Row> both = new ArrayList<>(a.rows());
            both.addAll(b.rows());
            both.sort(a.ascending() ? OLDEST_FIRST : NEWEST_FIRST);
            return new Page(both.subList(0, Math.min(a.kept(), both.size())), a.ascending(), a.kept());
        }
    }

    /** Newest first, then by uuid, so pages never overlap however the shares were read. */
    private static final Comparator<Row> NEWEST_FIRST = Comparator.<Row>comparingLong(r -> r.event().timeMicros()).reversed()
            .thenComparing(r -> r.event().uuid());
    private static final Comparator<Row> OLDEST_FIRST = Comparator.<Row>comparingLong(r -> r.event().timeMicros())
            .thenComparing(r -> r.event().uuid());

    public Comparator<Row> order() {
        return ascending ? OLDEST_FIRST : NEWEST_FIRST;
    }

    /** How many rows a share keeps: the page and everything before it, and one more. */
    public int kept() {
        return (int) Math.min(Integer.MAX_VALUE, (long) offset + limit + 1);
    }

    /** Whether an event at {@code micros} is in the range. */
    public boolean inRange(final long micros) {
        return micros > afterMicros && micros < beforeMicros;
    }

    /** A new, empty share. */
    public Top top() {
        return new Top();
    }

    /** A share of no events. */
    public Page empty() {
        return new Page(List.of(), ascending, kept());
    }

    /** This query's rows of the whole: {@code limit} from {@code offset}. */
    public List<Row> page(final Page whole) {
        final int from = Math.min(offset, whole.rows().size());
        return whole.rows().subList(from, Math.min(from + limit, whole.rows().size()));
    }

    /** Whether the whole holds rows past this page. */
    public boolean hasMore(final Page whole) {
        return whole.rows().size() > (long) offset + limit;
    }

    /**
     * The first {@link #kept} rows offered, in the query's order, holding no more than that many at any time. An event
     * that could not make it ({@link #wants}) need not be decoded.
     */
    public final class Top {
        /** The worst kept row first. */
        private final PriorityQueue<Row> rows = new PriorityQueue<>(order().reversed());

        /** Whether an event at {@code micros} could still be kept. */
        public boolean wants(final long micros) {
            if (rows.size() < kept()) {
                return true;
            }
            final long worst = rows.peek().event().timeMicros();
            return ascending ? micros <= worst : micros >= worst;
        }

        public void offer(final Row row) {
            rows.add(row);
            if (rows.size() > kept()) {
                rows.poll();
            }
        }

        public Page page() {
            final List<Row> sorted = new ArrayList<>(rows);
            sorted.sort(order());
            return new Page(sorted, ascending, kept());
        }
    }

    /** The query as instances send it to each other. */
    public ObjectNode toRequest() {
        final ObjectNode request = Json.mapper().createObjectNode();
        request.put("project_id", projectId);
        request.put("after", afterMicros);
        request.put("before", beforeMicros);
        final ArrayNode names = request.putArray("events");
        events.forEach(names::add);
        person.ifPresent(p -> request.put("person", p.toString()));
        if (properties != null) {
            request.set("properties", properties);
        }
        if (action != null) {
            request.set("action", action);
        }
        request.put("limit", limit);
        request.put("offset", offset);
        request.put("ascending", ascending);
        return request;
    }

    /** @throws IllegalArgumentException when the request is not one {@link #toRequest} wrote */
    public static EventListQuery fromRequest(final JsonNode request) {
        for (final String field : new String[] {"project_id", "after", "before", "events", "limit", "offset", "ascending"}) {
            if (!request.hasNonNull(field)) {
                throw new IllegalArgumentException("an events request needs '" + field + "'");
            }
        }
        final List<String> names = new ArrayList<>();
        request.get("events").forEach(n -> names.add(n.asText()));
        return new EventListQuery(request.get("project_id").asLong(), request.get("after").asLong(), request.get("before").asLong(), names,
                request.hasNonNull("person") ? Optional.of(UUID.fromString(request.get("person").asText())) : Optional.empty(),
                request.get("properties"), request.get("action"), request.get("limit").asInt(), request.get("offset").asInt(), request.get("ascending").asBoolean());
    }
}
