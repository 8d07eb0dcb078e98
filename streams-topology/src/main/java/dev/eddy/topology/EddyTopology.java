package dev.eddy.topology;

import dev.eddy.config.StreamsConfig;
import dev.eddy.persons.PersonSerdes;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.groups.GroupsProcessor;
import dev.eddy.topology.identity.IdentityProcessor;
import dev.eddy.topology.identity.IngestRouter;
import dev.eddy.topology.persons.PersonsProcessor;
import dev.eddy.topology.persons.ProjectCoordinator;
import dev.eddy.topology.trends.TimelineProcessor;
import dev.eddy.trends.HourlyEventKey;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Eddy's Kafka Streams topology, a pure function of the topic registry and the Streams configuration: {@code main}
 * and the tests build the same one. Every source, processor, sink and store is named, so a change never renames
 * state.
 *
 * <pre>
 * events.ingest, events.historical ─► ingest-router ─► identity ◄─ identity.commands ◄─ overflow-router ◄─ events.overflow
 *   identity (distinct-ids, identity-holds, dedup-ids, dedup-historical-ids) ─► identity.commands (links) · project.commands
 *                                        · persons.commands · groups.commands
 *                                        ─► events.enriched (personless events)
 *   project-coordinator (person-links, project-group-types) ─► persons.commands · groups.commands · groups.types
 *   persons (persons)                    ─► event-timelines (in the task) · persons.merges
 *                                        · identity.commands (remaps, releases) · persons.commands
 *   groups (groups)                      ─► groups.state ─► global groups-global;   groups.types ─► global group-types
 *   persons, events.enriched, persons.merges, timelines.moves
 *                                        ─► event-timelines (event-timelines, hourly-counts, unique-markers,
 *                                           timeline-expiry, timeline-redirects, timeline-metadata, event-blocks)
 *                                           ─► timelines.moves
 *   (persons and event-timelines are one sub-topology: a person and its timeline share a task, and the persons
 *   processor hands each event straight to its timeline)
 * </pre>
 *
 * <p>Every command topic is keyed so that the processor reading it owns the key: {@code identity.commands} by
 * {@code token:distinct_id}, co-partitioned with the ingest topics; {@code project.commands} by project;
 * {@code persons.commands} by {@code project:person}; {@code groups.commands} by {@code project:type:key}.
 */
public final class EddyTopology {
    static final String EVENTS_SOURCE = "events-source";
    static final String OVERFLOW_SOURCE = "overflow-source";
    static final String IDENTITY_COMMANDS_SOURCE = "identity-commands-source";
    static final String PROJECT_COMMANDS_SOURCE = "project-commands-source";
    static final String PERSON_COMMANDS_SOURCE = "person-commands-source";
    static final String GROUP_COMMANDS_SOURCE = "group-commands-source";
    static final String ENRICHED_SOURCE = "enriched-source";
    static final String INGEST_ROUTER = "ingest-router";
    static final String OVERFLOW_ROUTER = "overflow-router";
    static final String OVERFLOW_SINK = "overflow-to-identity-commands";
    static final String IDENTITY = "identity";
    static final String PROJECT = "project-coordinator";
    static final String PERSONS = "persons";
    static final String GROUPS = "groups";
    static final String GROUPS_SINK = "groups-to-group-states";
    static final String MERGES_SOURCE = "person-merges-source";
    static final String MOVES_SOURCE = "timeline-moves-source";
    static final String TIMELINES = PersonsProcessor.TO_TIMELINES;

    private EddyTopology() {
    }

    /**
     * For each partitioned store read by key, the input topic whose partitioning places its keys: a key's owner is
     * the instance running that topic's partition of the key. The rollups are kept beside the timelines, partition
     * for partition.
     */
    public static java.util.Map<String, String> keyTopics(final EddyTopics topics) {
        return java.util.Map.of(StoreNames.DISTINCT_IDS, topics.ingest().name(), StoreNames.PERSONS, topics.personCommands().name(),
                StoreNames.EVENT_TIMELINES, topics.enriched().name(), StoreNames.HOURLY_COUNTS, topics.enriched().name(),
                StoreNames.UNIQUE_MARKERS, topics.enriched().name(), StoreNames.EVENT_BLOCKS, topics.enriched().name(),
                StoreNames.TIMELINE_METADATA, topics.enriched().name());
    }

    /** The topology, with unreadable global-store records only logged (tests). */
    public static Topology build(final EddyTopics topics, final StreamsConfig streams) {
        return build(topics, streams, DeadLetters.LOG_ONLY);
    }

    /** @param deadLetters where the global stores' loaders send records they cannot read */
    public static Topology build(final EddyTopics topics, final StreamsConfig streams, final DeadLetters deadLetters) {
        final Topology t = new Topology();

        // Captured events: keyed ones straight to their distinct id's owner, overflow re-keyed first.
        t.addSource(EVENTS_SOURCE, Serdes.String().deserializer(), topics.ingest().valueSerde().deserializer(),
                topics.ingest().name(), topics.historical().name());
        t.addProcessor(INGEST_ROUTER, () -> new IngestRouter(topics.historical().name()), EVENTS_SOURCE);
        t.addSource(OVERFLOW_SOURCE, Serdes.String().deserializer(), topics.overflow().valueSerde().deserializer(),
                topics.overflow().name());
        t.addProcessor(OVERFLOW_ROUTER, () -> new IngestRouter(topics.historical().name()), OVERFLOW_SOURCE);
        sink(t, OVERFLOW_SINK, topics.identityCommands(), OVERFLOW_ROUTER);

        // Identity, co-partitioned with the ingest topics.
        source(t, IDENTITY_COMMANDS_SOURCE, topics.identityCommands());
        t.addProcessor(IDENTITY, () -> new IdentityProcessor(streams.dedup()), INGEST_ROUTER, IDENTITY_COMMANDS_SOURCE);
        t.addStateStore(store(StoreNames.DISTINCT_IDS, Serdes.String()), IDENTITY);
        t.addStateStore(store(StoreNames.IDENTITY_HOLDS, PersonSerdes.hold()), IDENTITY);
        t.addStateStore(dedup(StoreNames.DEDUP_IDS, streams.dedup().retention()), IDENTITY);
        t.addStateStore(dedup(StoreNames.DEDUP_HISTORICAL_IDS, streams.dedup().historicalRetention()), IDENTITY);
        sink(t, IdentityProcessor.TO_IDENTITY, topics.identityCommands(), IDENTITY);
        sink(t, IdentityProcessor.TO_PROJECT, topics.projectCommands(), IDENTITY);
        sink(t, IdentityProcessor.TO_PERSONS, topics.personCommands(), IDENTITY);
        sink(t, IdentityProcessor.TO_GROUPS, topics.groupCommands(), IDENTITY);
        sink(t, IdentityProcessor.TO_ENRICHED, topics.enriched(), IDENTITY);

        // The project coordinator: merges and group type indexes.
        source(t, PROJECT_COMMANDS_SOURCE, topics.projectCommands());
        t.addProcessor(PROJECT, ProjectCoordinator::new, PROJECT_COMMANDS_SOURCE);
        t.addStateStore(store(StoreNames.PERSON_LINKS, PersonSerdes.personLink()), PROJECT);
        t.addStateStore(store(StoreNames.PROJECT_GROUP_TYPES, PersonSerdes.groupTypes()), PROJECT);
        sink(t, ProjectCoordinator.TO_PERSONS, topics.personCommands(), PROJECT);
        sink(t, ProjectCoordinator.TO_GROUPS, topics.groupCommands(), PROJECT);
        sink(t, ProjectCoordinator.TO_GROUP_TYPES, topics.groupTypes(), PROJECT);

        // Persons.
        source(t, PERSON_COMMANDS_SOURCE, topics.personCommands());
        t.addProcessor(PERSONS, PersonsProcessor::new, PERSON_COMMANDS_SOURCE);
        t.addStateStore(store(StoreNames.PERSONS, PersonSerdes.personState()), PERSONS);
        sink(t, PersonsProcessor.TO_PERSONS, topics.personCommands(), PERSONS);
        sink(t, PersonsProcessor.TO_IDENTITY, topics.identityCommands(), PERSONS);
        sink(t, PersonsProcessor.TO_MERGES, topics.personMerges(), PERSONS);

        // Groups, published to every instance.
        source(t, GROUP_COMMANDS_SOURCE, topics.groupCommands());
        t.addProcessor(GROUPS, GroupsProcessor::new, GROUP_COMMANDS_SOURCE);
        t.addStateStore(store(StoreNames.GROUPS, PersonSerdes.groupState()), GROUPS);
        sink(t, GROUPS_SINK, topics.groupStates(), GROUPS);
        global(t, StoreNames.GROUP_TYPES, topics.groupTypes(), deadLetters);
        global(t, StoreNames.GROUPS_GLOBAL, topics.groupStates(), deadLetters);
        // Feature flag definitions, for evaluating /decide and /flags on any instance.
        global(t, StoreNames.FLAG_DEFINITIONS, topics.flagDefinitions(), deadLetters);

        // Analytics over enriched events: a person's from its persons processor, personless ones from their topic.
        source(t, ENRICHED_SOURCE, topics.enriched());
        // Each person's timeline, with the partition's hourly counts; merges move the merged-away person's events to
        // the survivor's.
        source(t, MERGES_SOURCE, topics.personMerges());
        source(t, MOVES_SOURCE, topics.timelineMoves());
        t.addProcessor(TIMELINES, () -> new TimelineProcessor(streams.timelineRetention()), PERSONS, ENRICHED_SOURCE,
                MERGES_SOURCE, MOVES_SOURCE);
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.EVENT_TIMELINES),
                Serdes.Bytes(), Serdes.ByteArray()), TIMELINES);
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.HOURLY_COUNTS),
                HourlyEventKey.serde(), Serdes.Long()).withCachingEnabled(), TIMELINES);
        // One entry per person and day stored, read by each of the person's events that day: cached.
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.TIMELINE_EXPIRY),
                Serdes.Bytes(), Serdes.ByteArray()).withCachingEnabled(), TIMELINES);
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.UNIQUE_MARKERS),
                Serdes.Bytes(), Serdes.ByteArray()).withCachingEnabled(), TIMELINES);
        t.addStateStore(store(StoreNames.TIMELINE_REDIRECTS, Serdes.String()), TIMELINES);
        // What the timeline processor records about the stores above (rollups built, a rebuild's cursor, the blocks'
        // change count): a few keys per partition, apart from the stores' records.
        t.addStateStore(store(StoreNames.TIMELINE_METADATA, Serdes.String()), TIMELINES);
        // The event blocks are derived from the timelines and rebuilt from them wherever they are missing (a new
        // instance, a failover, an unclean stop, which under exactly-once wipes the task's whole state): no changelog.
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(StoreNames.EVENT_BLOCKS),
                Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled(), TIMELINES);
        sink(t, TimelineProcessor.TO_MOVES, topics.timelineMoves(), TIMELINES);
        // One task holds a person's timeline and the person: the persons and the analytics processors are one
        // sub-topology, whose inputs are all keyed by project:person. A trend or funnel then reads the person
        // properties it filters on from the same partition as the events, on one instance.
        t.connectProcessorAndStateStores(TIMELINES, StoreNames.PERSONS);
        return t;
    }

    /**
     * A key-value store with a record cache: several updates of one key within a commit interval reach RocksDB
     * and the changelog once, at the commit. Reads, interactive queries included, go through the cache.
     */
    private static <V> StoreBuilder<KeyValueStore<String, V>> store(final String name,
                                                                     final org.apache.kafka.common.serialization.Serde<V> values) {
        return Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), values).withCachingEnabled();
    }

    /** Event uuids by receive time; whole segments expire with stream time (no cache: every key is new). */
    private static StoreBuilder<WindowStore<String, Long>> dedup(final String name, final Duration retention) {
        return Stores.windowStoreBuilder(Stores.persistentWindowStore(name, retention, Duration.ofMillis(1), false),
                Serdes.String(), Serdes.Long());
    }

    private static void source(final Topology t, final String name, final Topic<String, ?> topic) {
        t.addSource(name, topic.keySerde().deserializer(), topic.valueSerde().deserializer(), topic.name());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void sink(final Topology t, final String name, final Topic<String, ?> topic, final String parent) {
        t.addSink(name, topic.name(), topic.keySerde().serializer(), (org.apache.kafka.common.serialization.Serializer) topic.valueSerde().serializer(),
                parent);
    }

    /**
     * A read-only copy on every instance of a compacted topic; the topic is its changelog. Values arrive as bytes and
     * are read by the loader, which sends those it cannot read to {@code deadLetters} and keeps the key's last value.
     */
    private static <V> void global(final Topology t, final String store, final Topic<String, V> topic, final DeadLetters deadLetters) {
        t.addGlobalStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(store), Serdes.String(),
                        topic.valueSerde()).withLoggingDisabled(), store + "-source",
                topic.keySerde().deserializer(), Serdes.ByteArray().deserializer(), topic.name(), store + "-loader",
                () -> new GlobalLoader<>(store, topic, deadLetters));
    }

    /** Puts every readable record of a global store's topic into the store (a null value deletes). */
    private static final class GlobalLoader<V> implements Processor<String, byte[], Void, Void> {
        private final String storeName;
        private final Topic<String, V> topic;
        private final DeadLetters deadLetters;
        private ProcessorContext<Void, Void> context;
        private KeyValueStore<String, V> store;

        GlobalLoader(final String storeName, final Topic<String, V> topic, final DeadLetters deadLetters) {
            this.storeName = storeName;
            this.topic = topic;
            this.deadLetters = deadLetters;
        }

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            this.context = context;
            store = context.getStateStore(storeName);
        }

        @Override
        public void process(final Record<String, byte[]> record) {
            if (record.value() == null) {
                store.delete(record.key());
                return;
            }
            final V value;
            try {
                value = topic.valueSerde().deserializer().deserialize(topic.name(), record.value());
                if (value == null) {
                    throw new org.apache.kafka.common.errors.SerializationException("the value reads as nothing");
                }
            } catch (final RuntimeException e) {
                final var metadata = context.recordMetadata();
                deadLetters.send(metadata.map(m -> m.topic()).orElse(topic.name()), metadata.map(m -> m.partition()).orElse(-1),
                        metadata.map(m -> m.offset()).orElse(-1L),
                        record.key() == null ? null : record.key().getBytes(java.nio.charset.StandardCharsets.UTF_8), record.value(), e);
                return;
            }
            store.put(record.key(), value);
        }
    }
}
