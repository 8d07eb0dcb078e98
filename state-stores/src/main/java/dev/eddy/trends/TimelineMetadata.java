package dev.eddy.trends;

import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The keys of a partition's timeline metadata store ({@link dev.eddy.stores.StoreNames#TIMELINE_METADATA}): what the
 * timeline processor records about the state of its other stores, kept apart from their data so no store holds a key
 * that is not one of its records.
 */
public final class TimelineMetadata {
    /**
     * Present once the partition's hourly counts and unique markers include every event of its timelines: until then
     * (a rebuild running after an upgrade), queries read that partition's events instead.
     */
    public static final String ROLLUPS_BUILT = "rollups-built";
    /** While the rollups are rebuilt: the last timeline key (hex) they include. */
    public static final String ROLLUPS_REBUILT_UP_TO = "rollups-rebuilt-up-to";
    /** How many times the event blocks changed, as of the last commit (the blocks have no changelog of their own). */
    public static final String EVENT_BLOCK_CHANGES = "event-block-changes";

    private TimelineMetadata() {
    }

    /** Whether the partition whose metadata {@code store} is has its rollups built. */
    public static boolean rollupsBuilt(final ReadOnlyKeyValueStore<String, String> store) {
        return store.get(ROLLUPS_BUILT) != null;
    }
}
