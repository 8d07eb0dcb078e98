package dev.eddy.topology.identity;

import dev.eddy.events.CapturedEvent;
import dev.eddy.persons.Hold;
import dev.eddy.topology.internal.Keys;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The events of distinct ids with a merge in flight, held at the ids' owner until the merge is carried out.
 *
 * <p>A merge event takes several hops (the other id's owner, the project's coordinator, the persons' owners) while
 * the next event of its distinct id takes one: applied at once, that event would reach the person before the merge
 * and lose to the merged properties, or the merge event's own {@code $set_once} would beat the older person's. PostHog
 * applies a distinct id's events in order against the already merged person; holding both ids of a merge until it
 * is carried out does the same.
 *
 * <p>Every waiting event is its own store entry, numbered in arrival order, so holding costs one write per event
 * however many wait. Keys: {@code h} + {@code project:distinct_id} for the {@link Hold.Open} record, {@code e} + the same
 * + NUL + the event's fixed-width number for each {@link Hold.Waiting} one; the leading letter keeps the two apart.
 *
 * <p>Nearly every event's distinct id is not held, so whether one is is answered from memory: the open holds, read
 * from the store when the task's processor starts (after a restore too) and kept with every change. The store is
 * written as before and read only for the waiting events: a hold's own record is new with each merge, so looking it
 * up in RocksDB mostly searched for a key that was not there.
 */
final class HeldEvents {
    /** What applying a released event did. */
    interface Replay {
        /** Applies the event; true when it started a merge of its own, which holds its distinct id again. */
        boolean apply(CapturedEvent event, boolean linked, long timestamp);
    }

    private static final String OPEN = "h";

    private final KeyValueStore<String, Hold> store;
    /** The open holds in the store, by key. */
    private final Map<String, Hold.Open> open = new HashMap<>();

    HeldEvents(final KeyValueStore<String, Hold> store) {
        this.store = store;
        try (KeyValueIterator<String, Hold> holds = store.prefixScan(OPEN, new StringSerializer())) {
            holds.forEachRemaining(hold -> open.put(hold.key, (Hold.Open) hold.value));
        }
    }

    /** Whether the distinct id's events wait for a merge. */
    boolean held(final long project, final String distinctId) {
        return !open.isEmpty() && open.containsKey(openKey(project, distinctId));
    }

    /** One more merge of the distinct id is in flight. */
    void hold(final long project, final String distinctId) {
        final String key = openKey(project, distinctId);
        final Hold.Open current = open.get(key);
        write(key, current == null ? new Hold.Open(1, 0, 0) : new Hold.Open(current.merges() + 1, current.first(), current.next()));
    }

    /** Puts an event of a held distinct id behind the ones already waiting. */
    void append(final CapturedEvent event, final boolean linked, final long timestamp) {
        final String key = openKey(event.projectId(), event.distinctId());
        final Hold.Open current = open.get(key);
        if (current == null) {
            throw new IllegalStateException("no hold for " + key);
        }
        store.put(eventKey(key, current.next()), new Hold.Waiting(event, linked, timestamp));
        write(key, new Hold.Open(current.merges(), current.first(), current.next() + 1));
    }

    private void write(final String key, final Hold.Open hold) {
        open.put(key, hold);
        store.put(key, hold);
    }

    /**
     * One merge of the distinct id is carried out. When it was the last, its waiting events are applied in order; if
     * one starts a merge again, it and those after it wait for that one. A release of an id not held (a merge asked
     * for before holds existed) does nothing.
     */
    void release(final long project, final String distinctId, final Replay replay) {
        final String key = openKey(project, distinctId);
        final Hold.Open current = open.get(key);
        if (current == null) {
            return;
        }
        if (current.merges() > 1) {
            write(key, new Hold.Open(current.merges() - 1, current.first(), current.next()));
            return;
        }
        for (long n = current.first(); n < current.next(); n++) {
            final String entry = eventKey(key, n);
            final Hold.Waiting waiting = (Hold.Waiting) store.get(entry);
            if (replay.apply(waiting.event(), waiting.linked(), waiting.timestamp())) {
                store.put(entry, new Hold.Waiting(waiting.event(), true, waiting.timestamp()));
                write(key, new Hold.Open(1, n, current.next()));
                return;
            }
            // A put of null deletes without reading the value back, as delete does.
            store.put(entry, null);
        }
        store.put(key, null);
        open.remove(key);
    }

    private static String openKey(final long project, final String distinctId) {
        return OPEN + Keys.scoped(project, distinctId);
    }

    private static String eventKey(final String openKey, final long number) {
        final String hex = Long.toHexString(number);
        return "e" + openKey.substring(1) + '\u0000' + "0".repeat(16 - hex.length()) + hex;
    }
}
