package dev.eddy.topology.trends;

import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.TimelineMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Moves what releases before the metadata store kept in other stores, under keys no record has, into the metadata store
 * ({@link TimelineMetadata}): the rollups' built flag (a key of the bookkeeping project 0 in the hourly counts), the
 * rebuild's cursor and the event blocks' change count (keys starting with {@code #} in the redirects). Run when a task
 * opens, before anything reads them; a task that has none (every task after its first opening) changes nothing.
 */
final class LegacyMetadata {
    static final HourlyEventKey BUILT = new HourlyEventKey(0, 0, "#built");
    static final String REBUILD_CURSOR = "#rollups-rebuilt-up-to";
    static final String EVENT_BLOCK_CHANGES = "#event-block-changes";

    private LegacyMetadata() {
    }

    static void migrate(final KeyValueStore<HourlyEventKey, Long> counts, final KeyValueStore<String, String> redirects,
                        final KeyValueStore<String, String> metadata) {
        // Read first: a delete writes a tombstone to the changelog even when there is nothing to delete.
        if (counts.get(BUILT) != null) {
            counts.delete(BUILT);
            metadata.putIfAbsent(TimelineMetadata.ROLLUPS_BUILT, "1");
        }
        move(redirects, REBUILD_CURSOR, metadata, TimelineMetadata.ROLLUPS_REBUILT_UP_TO);
        move(redirects, EVENT_BLOCK_CHANGES, metadata, TimelineMetadata.EVENT_BLOCK_CHANGES);
    }

    private static void move(final KeyValueStore<String, String> from, final String legacy, final KeyValueStore<String, String> to,
                             final String key) {
        final String value = from.get(legacy);
        if (value != null) {
            from.delete(legacy);
            to.putIfAbsent(key, value);
        }
    }
}
