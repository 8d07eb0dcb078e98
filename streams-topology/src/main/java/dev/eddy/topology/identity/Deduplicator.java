package dev.eddy.topology.identity;

import dev.eddy.events.CapturedEvent;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Remembers the uuid of every processed event for the configured retention, so a client retry or a replayed
 * batch has no second effect. Retries of one event share its distinct id and so its partition: the memory is
 * local. Retention runs from when the gateway received the first copy, not from the event's own time, so history
 * of any age is de-duplicated alike.
 *
 * <p>The uuids live in window stores whose window start is that receive time: Kafka Streams drops whole expired
 * segments as stream time passes, so forgetting costs nothing per event, and every event costs one changelog
 * record. Historical migrations have a store of their own with a longer retention; both are checked.
 *
 * <p>Each store is written once per task before its first event ({@link #prime}): Kafka Streams 4.3 keeps no
 * committed changelog offset for a segmented (window) store that was never written, and under exactly-once it then
 * takes the whole task for corrupted at the next start, wiping the identity stores and restoring them from the
 * changelogs on every restart of a deployment that never imports history.
 *
 * <p>Most deployments import no history, or only now and then: while the historical store is empty (as read when the
 * task's processor starts, and until an import writes it), live events are checked against the live store alone.
 */
final class Deduplicator {
    /** Tolerance for a retry stamped earlier than the first copy (gateways' clocks differ a little). */
    private static final Duration CLOCK_SKEW = Duration.ofHours(1);
    private static final String PRIMER_KEY = "";

    private final WindowStore<String, Long> live;
    private final WindowStore<String, Long> historical;
    private final Duration liveRetention;
    private final Duration historicalRetention;
    /** Whether this task has written both stores since it started. */
    private boolean primed;
    /** Whether the historical store may hold an id. */
    private boolean historicalUsed;

    Deduplicator(final WindowStore<String, Long> live, final WindowStore<String, Long> historical,
                 final Duration liveRetention, final Duration historicalRetention) {
        this.live = live;
        this.historical = historical;
        this.liveRetention = liveRetention;
        this.historicalRetention = historicalRetention;
        try (var any = historical.all()) {
            this.historicalUsed = any.hasNext();
        }
    }

    /** Whether this is the first time the event is seen; remembers it when it is. */
    boolean firstTime(final CapturedEvent event, final boolean fromHistorical) {
        final String id = event.projectId() + ":" + event.uuid();
        final Instant received = event.now() != null ? event.now() : event.timestamp();
        if (!primed) {
            prime(received);
        }
        if (seen(live, id, received, liveRetention)
                || historicalUsed && seen(historical, id, received, historicalRetention)) {
            return false;
        }
        historicalUsed |= fromHistorical;
        (fromHistorical ? historical : live).put(id, received.toEpochMilli(), received.toEpochMilli());
        return true;
    }

    /**
     * Gives both stores a changelog offset: a tombstone for a key no event has (ids are {@code project:uuid}), one
     * changelog record per store per task start, in the task's transaction; the stores' contents do not change.
     */
    private void prime(final Instant received) {
        live.put(PRIMER_KEY, null, received.toEpochMilli());
        historical.put(PRIMER_KEY, null, received.toEpochMilli());
        primed = true;
    }

    private static boolean seen(final WindowStore<String, Long> store, final String id, final Instant received,
                                final Duration retention) {
        // The fetch by epoch milliseconds: the one by instants formats an error message prefix on every call.
        final long at = received.toEpochMilli();
        try (WindowStoreIterator<Long> it = store.fetch(id, at - retention.toMillis(), at + CLOCK_SKEW.toMillis())) {
            return it.hasNext();
        }
    }
}
