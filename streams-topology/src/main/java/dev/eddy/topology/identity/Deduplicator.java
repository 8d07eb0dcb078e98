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
 */
final class Deduplicator {
    /** Tolerance for a retry stamped earlier than the first copy (gateways' clocks differ a little). */
    private static final Duration CLOCK_SKEW = Duration.ofHours(1);

    private final WindowStore<String, Long> live;
    private final WindowStore<String, Long> historical;
    private final Duration liveRetention;
    private final Duration historicalRetention;

    Deduplicator(final WindowStore<String, Long> live, final WindowStore<String, Long> historical,
                 final Duration liveRetention, final Duration historicalRetention) {
        this.live = live;
        this.historical = historical;
        this.liveRetention = liveRetention;
        this.historicalRetention = historicalRetention;
    }

    /** Whether this is the first time the event is seen; remembers it when it is. */
    boolean firstTime(final CapturedEvent event, final boolean fromHistorical) {
        final String id = event.projectId() + ":" + event.uuid();
        final Instant received = event.now() != null ? event.now() : event.timestamp();
        if (seen(live, id, received, liveRetention) || seen(historical, id, received, historicalRetention)) {
            return false;
        }
        (fromHistorical ? historical : live).put(id, received.toEpochMilli(), received.toEpochMilli());
        return true;
    }

    private static boolean seen(final WindowStore<String, Long> store, final String id, final Instant received,
                                final Duration retention) {
        try (WindowStoreIterator<Long> it = store.fetch(id, received.minus(retention), received.plus(CLOCK_SKEW))) {
            return it.hasNext();
        }
    }
}
