package dev.eddy.topology.identity;

import dev.eddy.config.StreamsConfig;
import dev.eddy.events.CapturedEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Remembers the uuid of every processed event for the configured retention, so a client retry or a replayed
 * batch has no second effect. Retries of one event share its distinct id and so its partition: the memory is
 * local. Retention runs from when the gateway received the first copy, not from the event's own time, so
 * history of any age is de-duplicated alike. Entries are kept twice, by id for the check and by expiry for
 * purging without a scan.
 */
final class Deduplicator {
    private final KeyValueStore<String, Long> ids;
    private final KeyValueStore<String, Long> byExpiry;
    private final StreamsConfig.Dedup config;

    Deduplicator(final KeyValueStore<String, Long> ids, final KeyValueStore<String, Long> byExpiry,
                 final StreamsConfig.Dedup config) {
        this.ids = ids;
        this.byExpiry = byExpiry;
        this.config = config;
    }

    /** Whether this is the first time the event is seen; remembers it when it is. */
    boolean firstTime(final CapturedEvent event, final boolean historical) {
        final String id = event.projectId() + ":" + event.uuid();
        if (ids.get(id) != null) {
            return false;
        }
        final Instant received = event.now() != null ? event.now() : event.timestamp();
        final long expiry = received.plus(historical ? config.historicalRetention() : config.retention()).toEpochMilli();
        ids.put(id, expiry);
        byExpiry.put(expiryKey(expiry, id), expiry);
        return true;
    }

    /** Forgets every event whose retention ended at or before {@code nowMillis}. */
    void purge(final long nowMillis) {
        final List<String> expired = new ArrayList<>();
        // Keys are "<19-digit expiry>:<id>"; ';' sorts right after ':', so the range ends after every key of nowMillis.
        try (KeyValueIterator<String, Long> it = byExpiry.range("", String.format(Locale.ROOT, "%019d;", nowMillis))) {
            while (it.hasNext()) {
                final KeyValue<String, Long> entry = it.next();
                expired.add(entry.key);
            }
        }
        for (final String key : expired) {
            byExpiry.delete(key);
            ids.delete(key.substring(key.indexOf(':') + 1));
        }
    }

    private static String expiryKey(final long expiry, final String id) {
        return String.format(Locale.ROOT, "%019d:%s", expiry, id);
    }
}
