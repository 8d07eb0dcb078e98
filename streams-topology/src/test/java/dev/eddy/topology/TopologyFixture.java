package dev.eddy.topology;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.groups.GroupState;
import dev.eddy.groups.GroupTypes;
import dev.eddy.persons.PersonIds;
import dev.eddy.persons.PersonMerge;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Eddy's whole topology in a {@link TopologyTestDriver}, with helpers that send events the way the gateway does
 * and read what came out: enriched events, merges, and the persons, distinct ids and groups stores.
 *
 * <p>An event's enrichment is what its timeline received: the persons processor hands each event to its timeline
 * inside the task, so the fixture reads the timelines' changelog, where every event written into a timeline appears
 * in order under its person. An event moved there by a merge (its old entry deleted first) is not a new enrichment.
 */
public final class TopologyFixture implements AutoCloseable {
    public static final long PROJECT = 1;
    public static final String TOKEN = "phc_fixture";

    private final TopologyTestDriver driver;
    private final EddyTopics topics;
    private final TestInputTopic<String, CapturedEvent> ingest;
    private final TestInputTopic<String, CapturedEvent> historical;
    private final TestInputTopic<String, CapturedEvent> overflow;
    private final TestOutputTopic<org.apache.kafka.common.utils.Bytes, byte[]> timelineWrites;
    private final TestOutputTopic<String, PersonMerge> merges;
    private final List<EnrichedEvent> enrichedSeen = new ArrayList<>();
    /** Every event sent, by the uuid its timeline entry has: what an enrichment read from a timeline is rebuilt from. */
    private final Map<UUID, CapturedEvent> sent = new HashMap<>();
    private final TestOutputTopic<String, EnrichedEvent> personless;
    /** The events that went to their timeline on {@code events.enriched}: personless ones. */
    private final java.util.Set<String> personlessSeen = new java.util.HashSet<>();
    /** The uuids whose timeline entry was last deleted (moved by a merge, say): their next write is no enrichment. */
    private final java.util.Set<UUID> left = new java.util.HashSet<>();
    private final List<PersonMerge> mergesSeen = new ArrayList<>();
    private Instant clock = Instant.parse("2026-11-22T10:00:00Z");

    public TopologyFixture(final Path stateDir, final Map<String, String> env) {
        final Map<String, String> all = new HashMap<>(env);
        all.put("EDDY_STATE_DIR", stateDir.toString());
        final EddyConfig config = ConfigLoader.load(all, Optional.empty());
        topics = EddyTopics.of(config.kafka());
        driver = new TopologyTestDriver(EddyTopology.build(topics, config.streams()),
                StreamsProperties.of(config, "127.0.0.1:8000"), clock);
        ingest = input(topics.ingest().name());
        historical = input(topics.historical().name());
        overflow = input(topics.overflow().name());
        personless = driver.createOutputTopic(topics.enriched().name(), topics.enriched().keySerde().deserializer(),
                topics.enriched().valueSerde().deserializer());
        timelineWrites = driver.createOutputTopic(config.applicationId() + "-" + StoreNames.EVENT_TIMELINES + "-changelog",
                new org.apache.kafka.common.serialization.BytesDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer());
        merges = driver.createOutputTopic(topics.personMerges().name(), topics.personMerges().keySerde().deserializer(),
                topics.personMerges().valueSerde().deserializer());
    }

    private TestInputTopic<String, CapturedEvent> input(final String topic) {
        return driver.createInputTopic(topic, topics.ingest().keySerde().serializer(), topics.ingest().valueSerde().serializer());
    }

    public TopologyTestDriver driver() {
        return driver;
    }

    public EddyTopics topics() {
        return topics;
    }

    /** An event of {@code distinctId} one second after the previous one, with the given properties. */
    public CapturedEvent event(final String distinctId, final String name, final String propertiesJson) {
        clock = clock.plusSeconds(1);
        return new CapturedEvent(1, UUID.randomUUID().toString(), PROJECT, TOKEN, distinctId, name, json(propertiesJson),
                clock, clock, null, "127.0.0.1", null, null);
    }

    public CapturedEvent send(final String distinctId, final String name, final String propertiesJson) {
        return send(event(distinctId, name, propertiesJson));
    }

    public CapturedEvent send(final CapturedEvent event) {
        remember(event);
        ingest.pipeInput(event.partitionKey(), event, event.now());
        return event;
    }

    public CapturedEvent sendHistorical(final CapturedEvent event) {
        remember(event);
        historical.pipeInput(event.partitionKey(), event, event.now());
        return event;
    }

    public CapturedEvent sendOverflow(final CapturedEvent event) {
        remember(event);
        overflow.pipeInput(null, event, event.now());
        return event;
    }

    private void remember(final CapturedEvent event) {
        sent.putIfAbsent(dev.eddy.timelines.TimelineKeys.eventUuid(event.uuid()), event);
    }

    /**
     * Every event enriched so far, in order: each write of an event into a timeline that is not a move, with the
     * person of that timeline and the properties and groups stored there. A re-delivered event counts again.
     */
    public List<EnrichedEvent> enriched() {
        personless.readValuesToList().forEach(e -> personlessSeen.add(e.event().uuid()));
        for (final org.apache.kafka.streams.test.TestRecord<org.apache.kafka.common.utils.Bytes, byte[]> write
                : timelineWrites.readRecordsToList()) {
            final UUID uuid = dev.eddy.timelines.TimelineKeys.event(write.key());
            if (write.value() == null) {
                left.add(uuid);
                continue;
            }
            if (left.remove(uuid)) {
                continue;
            }
            final dev.eddy.timelines.TimelineEvent stored = dev.eddy.timelines.TimelineEvent.decode(write.value());
            final CapturedEvent original = sent.get(uuid);
            if (original == null) {
                throw new AssertionError("a timeline received event " + uuid + ", which the fixture never sent");
            }
            final CapturedEvent event = new CapturedEvent(original.v(), original.uuid(), original.projectId(), original.token(),
                    original.distinctId(), original.event(), json(new String(stored.properties(), java.nio.charset.StandardCharsets.UTF_8)),
                    original.timestamp(), original.now(), original.sentAt(), original.ip(), original.siteUrl(), original.lib());
            final Map<String, String> groups = new HashMap<>();
            stored.groups().forEach((index, key) -> groups.put(Integer.toString(index), key));
            final String person = dev.eddy.timelines.TimelineKeys.person(write.key()).toString();
            enrichedSeen.add(new EnrichedEvent(EnrichedEvent.VERSION, event, person, personlessSeen.contains(original.uuid()), groups));
        }
        return enrichedSeen;
    }

    public EnrichedEvent enrichedOf(final CapturedEvent event) {
        return enriched().stream().filter(e -> e.event().uuid().equals(event.uuid())).findFirst()
                .orElseThrow(() -> new AssertionError("no enriched event for " + event.uuid()));
    }

    public List<PersonMerge> merges() {
        mergesSeen.addAll(merges.readValuesToList());
        return mergesSeen;
    }

    /** The person a distinct id resolves to now, following merged-away stubs. */
    public PersonState personOf(final String distinctId) {
        final String id = distinctIds().get(PROJECT + ":" + distinctId);
        if (id == null) {
            throw new AssertionError("distinct id " + distinctId + " has no person");
        }
        PersonState person = persons().get(PROJECT + ":" + id);
        while (person != null && person.mergedInto() != null) {
            person = persons().get(PROJECT + ":" + person.mergedInto());
        }
        return person;
    }

    /** The persons that have not been merged away. */
    public List<PersonState> livePersons() {
        final List<PersonState> live = new ArrayList<>();
        try (KeyValueIterator<String, PersonState> it = persons().all()) {
            it.forEachRemaining(kv -> {
                if (kv.value.mergedInto() == null) {
                    live.add(kv.value);
                }
            });
        }
        return live;
    }

    /** The events in the timeline of the person with this uuid, in time order. */
    public List<dev.eddy.timelines.TimelineEvent> timeline(final String personUuid) {
        final KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> store = driver.getKeyValueStore(StoreNames.EVENT_TIMELINES);
        final UUID person = UUID.fromString(personUuid);
        final List<dev.eddy.timelines.TimelineEvent> events = new ArrayList<>();
        try (KeyValueIterator<org.apache.kafka.common.utils.Bytes, byte[]> it = store.range(
                dev.eddy.timelines.TimelineKeys.personStart(PROJECT, person), dev.eddy.timelines.TimelineKeys.personEnd(PROJECT, person))) {
            it.forEachRemaining(kv -> events.add(dev.eddy.timelines.TimelineEvent.decode(kv.value)));
        }
        return events;
    }

    /** Pipes an enriched event straight into {@code events.enriched}, as a late delivery would arrive. */
    public void sendEnriched(final EnrichedEvent event) {
        remember(event.event());
        driver.createInputTopic(topics.enriched().name(), topics.enriched().keySerde().serializer(),
                topics.enriched().valueSerde().serializer()).pipeInput(event.key(), event, clock);
    }

    public KeyValueStore<String, PersonState> persons() {
        return driver.getKeyValueStore(StoreNames.PERSONS);
    }

    public KeyValueStore<String, String> distinctIds() {
        return driver.getKeyValueStore(StoreNames.DISTINCT_IDS);
    }

    public Optional<GroupState> group(final int typeIndex, final String key) {
        final KeyValueStore<String, GroupState> store = driver.getKeyValueStore(StoreNames.GROUPS_GLOBAL);
        return Optional.ofNullable(store.get(GroupState.key(PROJECT, typeIndex, key)));
    }

    public GroupTypes groupTypes() {
        final KeyValueStore<String, GroupTypes> store = driver.getKeyValueStore(StoreNames.GROUP_TYPES);
        return Optional.ofNullable(store.get(Long.toString(PROJECT))).orElse(GroupTypes.none(PROJECT));
    }

    /** Sum of the warnings-total metrics with this reason. */
    public double warnings(final String reason) {
        return driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("warnings-total") && reason.equals(e.getKey().tags().get("reason")))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum();
    }

    public static String uuidOf(final String distinctId) {
        return PersonIds.personUuid(PROJECT, distinctId);
    }

    public static ObjectNode json(final String json) {
        try {
            return (ObjectNode) Json.mapper().readTree(json);
        } catch (final Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    /** Moves the clock of the next events (their event time, receive time and record timestamp) forward. */
    public void advanceClock(final java.time.Duration by) {
        clock = clock.plus(by);
    }

    @Override
    public void close() {
        driver.close();
    }

}
