package dev.eddy.stores;

/**
 * Names of Eddy's state stores. A name is part of the changelog topic's name, so renaming one
 * throws away its state: names are fixed here and nowhere else.
 */
public final class StoreNames {
    /** Events per (project, hour, event name) in each partition's timelines, summed across partitions by the query side. */
    public static final String HOURLY_COUNTS = "hourly-counts";
    /** Each person's events in time order ({@code TimelineKeys} → {@code TimelineEvent}). */
    public static final String EVENT_TIMELINES = "event-timelines";
    /** Per (project, event, UTC day, person) active that day, the hours it was ({@code UniqueMarkers}). */
    public static final String UNIQUE_MARKERS = "unique-markers";
    /** Timeline keys by the day Eddy received the event ({@code [epoch day: 8][timeline key]}), for retention. */
    public static final String TIMELINE_EXPIRY = "timeline-expiry";
    /**
     * Each partition's events column by column, derived from its timelines and rebuilt from them (no changelog):
     * sealed blocks, their deleted rows, parts and tail, and the row of each stored event ({@code BlockKeys}).
     */
    public static final String EVENT_BLOCKS = "event-blocks";
    /** {@code project:person} of a merged-away person → the person its timeline moved to. */
    public static final String TIMELINE_REDIRECTS = "timeline-redirects";
    /** What the timeline processor records about its partition's stores ({@code TimelineMetadata}): state, not data. */
    public static final String TIMELINE_METADATA = "timeline-metadata";

    /** Identity: {@code project:distinct_id} to the uuid of its person. */
    public static final String DISTINCT_IDS = "distinct-ids";
    /** Identity: {@code project:event_uuid} of processed live events, windowed by when the gateway received them. */
    public static final String DEDUP_IDS = "dedup-ids";
    /** Identity: the same for events of historical migrations, kept longer. */
    public static final String DEDUP_HISTORICAL_IDS = "dedup-historical-ids";
    /**
     * Identity: distinct ids with a merge in flight ({@code Hold.Open}) and their events waiting for it
     * ({@code Hold.Waiting}), applied in order once the merge is carried out.
     */
    public static final String IDENTITY_HOLDS = "identity-holds";
    /** Persons: {@code project:person_uuid} to the person. */
    public static final String PERSONS = "persons";
    /** Project coordinator: {@code project:person_uuid} to its merge link. */
    public static final String PERSON_LINKS = "person-links";
    /** Project coordinator: project id to its group types (the authoritative copy). */
    public static final String PROJECT_GROUP_TYPES = "project-group-types";
    /** Global: project id to its group types, as the coordinator published them. */
    public static final String GROUP_TYPES = "group-types";
    /** Groups: {@code project:type_index:key} to the group, at its owner. */
    public static final String GROUPS = "groups";
    /** Global: every group, readable on every instance. */
    public static final String GROUPS_GLOBAL = "groups-global";

    /** Global: {@code project:flag_key} to the flag's definition (PostHog's JSON). */
    public static final String FLAG_DEFINITIONS = "flag-definitions";

    private StoreNames() {
    }
}
