package dev.eddy.topology.trends;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.persons.PersonMerge;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps each person's events in time order in {@link StoreNames#EVENT_TIMELINES}, the store funnels and filtered
 * trends read. Fed, on the partitions of {@code project:person}, by:
 * <ul>
 *   <li>{@code events.enriched}: the event joins its person's timeline;</li>
 *   <li>{@code persons.merges}: the merged-away person's timeline moves to the survivor (each event re-sent on
 *   {@code timelines.moves}, keyed by the survivor, and deleted here), and the person is remembered as redirected,
 *   so an event of it that arrives later (the two input topics are not ordered with each other) follows;</li>
 *   <li>{@code timelines.moves}: moved events join the survivor's timeline (or follow it further if the survivor
 *   has since been merged too).</li>
 * </ul>
 * So an anonymous person's events before {@code $identify} are in the identified person's timeline, and funnels
 * and unique counts see one person. An event is stored under its own time and uuid: a re-delivered event
 * overwrites itself.
 */
public final class TimelineProcessor implements Processor<String, Object, String, byte[]> {
    public static final String TO_MOVES = "timelines-to-moves";
    /** Bounds the redirect chain followed for one event; chains are short (one per merge of the same person). */
    private static final int MAX_REDIRECTS = 64;

    private ProcessorContext<String, byte[]> context;
    private KeyValueStore<Bytes, byte[]> timelines;
    private KeyValueStore<String, String> redirects;

    @Override
    public void init(final ProcessorContext<String, byte[]> context) {
        this.context = context;
        this.timelines = context.getStateStore(StoreNames.EVENT_TIMELINES);
        this.redirects = context.getStateStore(StoreNames.TIMELINE_REDIRECTS);
    }

    @Override
    public void process(final Record<String, Object> record) {
        final Object value = record.value();
        if (value instanceof EnrichedEvent enriched) {
            add(record, enriched.event().projectId(), enriched.personId(), encode(enriched.event(), enriched.groups()));
        } else if (value instanceof PersonMerge merge) {
            move(record, merge);
        } else if (value instanceof byte[] moved) {
            add(record, projectOf(record.key()), personOf(record.key()), moved);
        } else if (value != null) {
            throw new IllegalArgumentException("unexpected record " + value.getClass().getName());
        }
    }

    /** Stores the event in the person's timeline, or sends it on to the person it was merged into. */
    private void add(final Record<String, ?> record, final long projectId, final String person, final byte[] event) {
        final String target = resolve(projectId, person);
        if (!target.equals(person)) {
            context.forward(record.withKey(projectId + ":" + target).withValue(event), TO_MOVES);
            return;
        }
        final TimelineEvent decoded = TimelineEvent.decode(event);
        timelines.put(TimelineKeys.of(projectId, UUID.fromString(person), decoded.timeMicros(), decoded.uuid()), event);
    }

    private void move(final Record<String, ?> record, final PersonMerge merge) {
        if (merge.source().equals(merge.target())) {
            return;
        }
        redirects.put(merge.projectId() + ":" + merge.source(), merge.target());
        final UUID source = UUID.fromString(merge.source());
        final List<KeyValue<Bytes, byte[]>> events = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.personStart(merge.projectId(), source),
                TimelineKeys.personEnd(merge.projectId(), source))) {
            it.forEachRemaining(events::add);
        }
        final String target = merge.projectId() + ":" + merge.target();
        for (final KeyValue<Bytes, byte[]> event : events) {
            context.forward(record.withKey(target).withValue(event.value), TO_MOVES);
            timelines.delete(event.key);
        }
    }

    /** The person whose timeline holds {@code person}'s events now: itself unless it was merged away. */
    private String resolve(final long projectId, final String person) {
        String current = person;
        for (int hops = 0; hops < MAX_REDIRECTS; hops++) {
            final String next = redirects.get(projectId + ":" + current);
            if (next == null || next.equals(person)) {
                return current;
            }
            current = next;
        }
        return current;
    }

    private static byte[] encode(final CapturedEvent event, final Map<String, String> groups) {
        final Map<Integer, String> byIndex = new HashMap<>();
        groups.forEach((index, key) -> byIndex.put(Integer.parseInt(index), key));
        final byte[] properties;
        try {
            properties = Json.mapper().writeValueAsBytes(event.properties());
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("event properties that were read from JSON write back as JSON", e);
        }
        return new TimelineEvent(TimelineEvent.micros(event.timestamp()), uuidOf(event.uuid()), event.event(), event.distinctId(), byIndex, properties).encode();
    }

    /** The event's uuid; an id that is not one (capture accepts any string) gets a stable name-based uuid. */
    private static UUID uuidOf(final String id) {
        try {
            return UUID.fromString(id);
        } catch (final IllegalArgumentException e) {
            return UUID.nameUUIDFromBytes(id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    private static long projectOf(final String key) {
        return Long.parseLong(key.substring(0, key.indexOf(':')));
    }

    private static String personOf(final String key) {
        return key.substring(key.indexOf(':') + 1);
    }
}
