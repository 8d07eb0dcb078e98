package dev.eddy.query.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.EventListQuery;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.query.InvalidQuery;
import dev.eddy.query.PartitionRead;
import dev.eddy.query.Stores;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.Action;
import dev.eddy.trends.PropertyFilter;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.TimelineEventSource;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A page of a project's events ({@link EventListQuery}, PostHog's {@code EventsQuery}) over the timelines of the
 * partitions an instance runs: each event's time and name are read from its bytes, and only an event in the range, of
 * an asked name (an action's one event, when it has one), that could still be on the page is decoded and tested
 * against the filters (an action's included) (its person's and groups'
 * properties read as trends read them). Each kept row carries its person's creation time and properties, for the
 * columns that show them.
 */
public final class EventListRead implements PartitionRead<EventListQuery.Page> {
    /** The kind under which instances ask each other for it. */
    public static final String KIND = "events";
    private static final int PARTIAL_VERSION = 1;
    private static final int CHECK_EVERY = 4096;

    @Override
    public String store() {
        return StoreNames.EVENT_TIMELINES;
    }

    @Override
    public EventListQuery.Page read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
        final EventListQuery query = query(request);
        final PropertyFilter filter;
        final List<String> events;
        try {
            final PropertyFilter asked = PropertyFilter.parse(query.properties());
            final Optional<Action> action = Optional.ofNullable(query.action()).map(Action::ofEntity);
            filter = action.map(a -> a.filter().and(asked)).orElse(asked);
            events = action.flatMap(Action::onlyEvent).filter(only -> query.events().isEmpty()).map(List::of).orElse(query.events());
        } catch (final IllegalArgumentException e) {
            throw new InvalidQuery(e.getMessage());
        }
        final byte[][] names = TimelineEvent.names(events);
        final Instant now = Instant.now();
        final EventListQuery.Top top = query.top();
        final ReadOnlyKeyValueStore<String, GroupState> groups = Stores.global(app, StoreNames.GROUPS_GLOBAL);
        // The persons store of each kept row's partition (a person lives on its timeline's partition).
        final Map<String, ReadOnlyKeyValueStore<String, PersonState>> personsOf = new HashMap<>();
        for (final int p : partitions) {
            check.run();
            final ReadOnlyKeyValueStore<String, PersonState> persons = Stores.partition(app, StoreNames.PERSONS, p);
            final PropertyLookup lookup = TimelineScans.properties(query.projectId(), persons, groups);
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = Stores.partition(app, StoreNames.EVENT_TIMELINES, p);
            final Bytes from = query.person().map(u -> TimelineKeys.personStart(query.projectId(), u)).orElse(TimelineKeys.projectStart(query.projectId()));
            final Bytes to = query.person().map(u -> TimelineKeys.personEnd(query.projectId(), u)).orElse(TimelineKeys.projectEnd(query.projectId()));
            long seen = 0;
            try (KeyValueIterator<Bytes, byte[]> it = timelines.range(from, to)) {
                while (it.hasNext()) {
                    if (++seen % CHECK_EVERY == 0) {
                        check.run();
                    }
                    final var entry = it.next();
                    final long time = TimelineEvent.timeOf(entry.value);
                    if (!query.inRange(time) || names.length > 0 && !TimelineEvent.nameIn(entry.value, names) || !top.wants(time)) {
                        continue;
                    }
                    final TimelineEvent event = TimelineEvent.decode(entry.value);
                    final String person = TimelineKeys.person(entry.key).toString();
                    if (filter.matchesEverything() || filter.test(new TimelineEventSource(person, event, lookup), now)) {
                        top.offer(new EventListQuery.Row(person, event, Long.MIN_VALUE, null));
                        personsOf.put(person, persons);
                    }
                }
            }
        }
        // The kept rows' persons, read at the end: only they are shown.
        final List<EventListQuery.Row> rows = new ArrayList<>();
        for (final EventListQuery.Row row : top.page().rows()) {
            final PersonState person = personsOf.get(row.person()).get(query.projectId() + ":" + row.person());
            rows.add(new EventListQuery.Row(row.person(), row.event(), person == null || person.createdAt() == null ? Long.MIN_VALUE
                    : TimelineEvent.micros(person.createdAt()), person == null ? Json.mapper().createObjectNode() : person.properties()));
        }
        return new EventListQuery.Page(rows, query.ascending(), query.kept());
    }

    /** {@code [rows: 4]([person][event length: 4][event][person created: 8][person properties length: 4][JSON])*}. */
    @Override
    public byte[] encode(final EventListQuery.Page partial) {
        return Binary.write(PARTIAL_VERSION, out -> {
            out.writeInt(partial.rows().size());
            for (final EventListQuery.Row row : partial.rows()) {
                Binary.writeId(out, row.person());
                final byte[] event = row.event().encode();
                out.writeInt(event.length);
                out.write(event);
                out.writeLong(row.personCreatedAtMicros());
                final byte[] properties = Json.mapper().writeValueAsBytes(row.personProperties());
                out.writeInt(properties.length);
                out.write(properties);
            }
        });
    }

    @Override
    public EventListQuery.Page decode(final JsonNode request, final byte[] bytes) {
        final EventListQuery query = query(request);
        return Binary.read(bytes, PARTIAL_VERSION, "an events partial", in -> {
            final int size = in.readInt();
            final List<EventListQuery.Row> rows = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                final String person = Binary.readId(in);
                final byte[] event = new byte[in.readInt()];
                in.readFully(event);
                final long created = in.readLong();
                final byte[] properties = new byte[in.readInt()];
                in.readFully(properties);
                rows.add(new EventListQuery.Row(person, TimelineEvent.decode(event), created, object(properties)));
            }
            return new EventListQuery.Page(rows, query.ascending(), query.kept());
        });
    }

    @Override
    public EventListQuery.Page merge(final EventListQuery.Page into, final EventListQuery.Page other) {
        return EventListQuery.Page.merge(into, other);
    }

    private static ObjectNode object(final byte[] json) throws IOException {
        return Json.mapper().readTree(json) instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
    }

    private static EventListQuery query(final JsonNode request) {
        try {
            return EventListQuery.fromRequest(request);
        } catch (final IllegalArgumentException e) {
            throw new InvalidQuery(e.getMessage());
        }
    }
}
