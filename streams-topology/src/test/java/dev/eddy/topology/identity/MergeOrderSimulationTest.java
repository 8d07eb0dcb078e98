package dev.eddy.topology.identity;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.StreamsConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.persons.IdentityCommand;
import dev.eddy.persons.PersonCommand;
import dev.eddy.persons.PersonIds;
import dev.eddy.persons.PersonSerdes;
import dev.eddy.persons.PersonState;
import dev.eddy.persons.ProjectCommand;
import dev.eddy.persons.PropertyUpdates;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.internal.Keys;
import dev.eddy.topology.persons.PersonsProcessor;
import dev.eddy.topology.persons.ProjectCoordinator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Eddy's identity, coordinator and persons processors as tasks over simulated partitions, each partition a queue,
 * with records delivered in a random order that keeps every partition's own order: the interleavings a Kafka
 * cluster allows, which a {@code TopologyTestDriver} (finishing each input before the next) never shows. Events of
 * one distinct id arrive back to back, as a client sends them, racing the merges they start; the persons must come
 * out as PostHog's sequential rules give them.
 */
class MergeOrderSimulationTest {
    private static final long PROJECT = 1;
    private static final String TOKEN = "phc_sim";
    private static final int PARTITIONS = 4;
    private static final List<String> IDS = List.of("anon-0", "anon-1", "anon-2", "anon-3", "anon-4", "anon-5",
            "user-0", "user-1", "user-2", "user-3", "guest", "0");
    private static final List<String> KEYS = List.of("plan", "color", "url");

    @Test
    void anEventRacingTheIdentifyBeforeItIsAppliedToTheMergedPerson() {
        for (long seed = 0; seed < 50; seed++) {
            final Pipeline pipeline = new Pipeline(new Random(seed));
            pipeline.sendAndSettle(List.of(event("anon", "$pageview", "{\"$set_once\":{\"first_seen_url\":\"/a\"}}")));
            pipeline.sendAndSettle(List.of(
                    event("user", "$identify", "{\"$anon_distinct_id\":\"anon\",\"$set_once\":{\"first_seen_url\":\"/c\"},"
                            + "\"$set\":{\"email\":\"u@x\"}}"),
                    event("user", "$pageview", "{\"$set_once\":{\"first_seen_url\":\"/b\"},\"$set\":{\"last_url\":\"/b\"}}")));

            final PersonState person = pipeline.personOf("user");
            assertThat(person.uuid()).isEqualTo(PersonIds.personUuid(PROJECT, "anon"));
            assertThat(person.properties().get("first_seen_url").asText()).as("seed %d", seed).isEqualTo("/a");
            assertThat(person.properties().get("last_url").asText()).isEqualTo("/b");
            assertThat(person.properties().get("email").asText()).isEqualTo("u@x");
            assertThat(person.distinctIds()).containsExactlyInAnyOrder("anon", "user");
            assertThat(pipeline.enrichedPersons()).as("every event applied once, to the survivor")
                    .containsExactly(person.uuid(), person.uuid(), person.uuid());
        }
    }

    @Test
    void anEventOfTheOtherIdArrivingAfterTheMergeReachedItIsAppliedAfterTheMerge() {
        for (long seed = 0; seed < 50; seed++) {
            final Pipeline pipeline = new Pipeline(new Random(seed));
            pipeline.sendAndSettle(List.of(event("anon", "$pageview", "{\"$set\":{\"plan\":\"free\"}}")));
            pipeline.sendAndSettle(List.of(event("user", "login", "{\"$set\":{\"plan\":\"pro\"}}")));
            pipeline.send(List.of(event("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}")));
            // PostHog merges within the identify's transaction: the anonymous id's next event sees the merged person.
            pipeline.deliverUntil(() -> pipeline.delivered(IdentityCommand.Link.class) == 1);
            assertThat(pipeline.holdsOf("anon")).isTrue();
            pipeline.sendAndSettle(List.of(event("anon", "upgrade", "{\"$set\":{\"plan\":\"team\"}}")));

            final PersonState person = pipeline.personOf("anon");
            assertThat(person.uuid()).isEqualTo(PersonIds.personUuid(PROJECT, "user"));
            assertThat(person.properties().get("plan").asText()).as("seed %d", seed).isEqualTo("team");
            assertThat(pipeline.enrichedPersons()).hasSize(4).endsWith(person.uuid());
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void personsMatchPostHogsSequentialRulesUnderAnyDelivery(final long seed) {
        final Random random = new Random(seed);
        final Pipeline pipeline = new Pipeline(random);
        final SequentialPostHog model = new SequentialPostHog();
        int events = 0;
        for (int burst = 0; burst < 120; burst++) {
            final String distinctId = IDS.get(random.nextInt(IDS.size()));
            final List<CapturedEvent> sent = new ArrayList<>();
            for (int i = 1 + random.nextInt(5); i > 0; i--) {
                sent.add(randomEvent(random, distinctId));
            }
            sent.forEach(model::process);
            pipeline.sendAndSettle(sent);
            events += sent.size();
        }

        assertThat(pipeline.heldEvents()).as("nothing left waiting").isZero();
        assertThat(pipeline.enrichedPersons()).as("each event applied exactly once").hasSize(events);
        for (final String distinctId : model.personOf.keySet()) {
            final SequentialPostHog.Person expected = model.persons.get(model.personOf.get(distinctId));
            final PersonState actual = pipeline.personOf(distinctId);
            assertThat(actual.uuid()).as("seed %d, %s's person", seed, distinctId).isEqualTo(expected.uuid);
            assertThat(actual.distinctIds()).as("seed %d, %s's ids", seed, distinctId)
                    .containsExactlyInAnyOrderElementsOf(expected.ids);
            assertThat(actual.isIdentified()).as("seed %d, %s identified", seed, distinctId).isEqualTo(expected.identified);
            final ObjectNode properties = actual.properties().deepCopy();
            properties.remove("$creator_event_uuid");
            assertThat(properties).as("seed %d, %s's properties", seed, distinctId).isEqualTo(expected.properties);
        }
    }

    private static CapturedEvent randomEvent(final Random random, final String distinctId) {
        final ObjectNode properties = Json.mapper().createObjectNode();
        final String name;
        final int kind = random.nextInt(20);
        if (kind < 4) {
            name = "$identify";
            properties.put("$anon_distinct_id", IDS.get(random.nextInt(IDS.size())));
        } else if (kind < 6) {
            name = "$create_alias";
            properties.put("alias", IDS.get(random.nextInt(IDS.size())));
        } else if (kind < 7) {
            name = "$merge_dangerously";
            properties.put("alias", IDS.get(random.nextInt(IDS.size())));
        } else {
            name = "$pageview";
            if (kind == 19) {
                properties.put("$process_person_profile", false);
            }
        }
        for (final String update : List.of("$set", "$set_once")) {
            if (random.nextBoolean()) {
                final ObjectNode values = properties.putObject(update);
                for (int i = random.nextInt(3); i >= 0; i--) {
                    values.put(KEYS.get(random.nextInt(KEYS.size())), "v" + random.nextInt(10));
                }
            }
        }
        if (random.nextInt(8) == 0) {
            properties.putArray("$unset").add(KEYS.get(random.nextInt(KEYS.size())));
        }
        return capture(distinctId, name, properties);
    }

    private static CapturedEvent event(final String distinctId, final String name, final String json) {
        try {
            return capture(distinctId, name, (ObjectNode) Json.mapper().readTree(json));
        } catch (final Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    private static CapturedEvent capture(final String distinctId, final String name, final ObjectNode properties) {
        final Instant now = Instant.parse("2026-11-27T10:00:00Z");
        return new CapturedEvent(1, UUID.randomUUID().toString(), PROJECT, TOKEN, distinctId, name, properties, now, now,
                null, "127.0.0.1", null, null);
    }

    /**
     * PostHog's person rules applied to one event after another (POSTHOG-NOTES; the property updates themselves are
     * {@link PropertyUpdates}, tested on their own).
     */
    private static final class SequentialPostHog {
        final Map<String, String> personOf = new HashMap<>();
        final Map<String, Person> persons = new HashMap<>();

        static final class Person {
            final String uuid;
            final Set<String> ids = new LinkedHashSet<>();
            ObjectNode properties = Json.mapper().createObjectNode();
            boolean identified;

            Person(final String uuid) {
                this.uuid = uuid;
            }
        }

        void process(final CapturedEvent event) {
            if (IdentityProcessor.personless(event)) {
                return;
            }
            final String distinctId = event.distinctId();
            IdentityProcessor.otherDistinctId(event).filter(other -> !other.equals(distinctId))
                    .filter(other -> !PersonIds.isIllegalForMerge(distinctId) && !PersonIds.isIllegalForMerge(other))
                    .ifPresent(other -> merge(distinctId, other, "$merge_dangerously".equals(event.event())));
            final Person person = persons.computeIfAbsent(personOf.computeIfAbsent(distinctId,
                    id -> PersonIds.personUuid(PROJECT, id)), Person::new);
            person.ids.add(distinctId);
            PropertyUpdates.apply(person.properties, event.properties());
        }

        private void merge(final String mergeIntoId, final String otherId, final boolean dangerous) {
            final Person mergeInto = persons.get(personOf.get(mergeIntoId));
            final Person other = persons.get(personOf.get(otherId));
            if (mergeInto == null && other == null) {
                join(join(create(mergeIntoId), mergeIntoId), otherId).identified = true;
            } else if (other == null) {
                join(mergeInto, otherId).identified = true;
            } else if (mergeInto == null) {
                join(other, mergeIntoId).identified = true;
            } else if (mergeInto == other || other.identified && !dangerous) {
                mergeInto.identified = true;
            } else {
                mergeInto.properties = PropertyUpdates.combine(other.properties, mergeInto.properties);
                other.ids.forEach(id -> join(mergeInto, id));
                persons.remove(other.uuid);
                mergeInto.identified = true;
            }
        }

        private Person create(final String distinctId) {
            final Person person = new Person(PersonIds.personUuid(PROJECT, distinctId));
            persons.put(person.uuid, person);
            return person;
        }

        private Person join(final Person person, final String distinctId) {
            person.ids.add(distinctId);
            personOf.put(distinctId, person.uuid);
            return person;
        }
    }

    /** The three processors over {@link #PARTITIONS} partitions of each topic, delivering in a random order. */
    private static final class Pipeline {
        private final Random random;
        private final List<Task<IdentityCommand>> identity = new ArrayList<>();
        private final List<Task<ProjectCommand>> coordinators = new ArrayList<>();
        private final List<Task<PersonCommand>> persons = new ArrayList<>();
        /** Every partition of every topic read here: a queue of records in the partition's order. */
        private final List<Partition<?>> partitions = new ArrayList<>();
        private final List<String> enriched = new ArrayList<>();
        private final Map<Class<?>, Integer> delivered = new HashMap<>();

        Pipeline(final Random random) {
            this.random = random;
            final StreamsConfig.Dedup dedup = new StreamsConfig.Dedup(Duration.ofHours(1), Duration.ofDays(1));
            for (int p = 0; p < PARTITIONS; p++) {
                final Task<IdentityCommand> task = new Task<>(new IdentityProcessor(dedup), new TaskId(0, p));
                task.store(StoreNames.DISTINCT_IDS, Serdes.String());
                task.store(StoreNames.IDENTITY_HOLDS, PersonSerdes.hold());
                task.store(StoreNames.GROUP_TYPES, PersonSerdes.groupTypes());
                for (final String name : List.of(StoreNames.DEDUP_IDS, StoreNames.DEDUP_HISTORICAL_IDS)) {
                    final var store = Stores.windowStoreBuilder(Stores.inMemoryWindowStore(name, Duration.ofDays(2),
                            Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
                    store.init(task.context.getStateStoreContext(), store);
                    task.context.addStateStore(store);
                }
                identity.add(task.start());
                final Task<ProjectCommand> coordinator = new Task<>(new ProjectCoordinator(), new TaskId(1, p));
                coordinator.store(StoreNames.PERSON_LINKS, PersonSerdes.personLink());
                coordinator.store(StoreNames.PROJECT_GROUP_TYPES, PersonSerdes.groupTypes());
                coordinators.add(coordinator.start());
                final Task<PersonCommand> person = new Task<>(new PersonsProcessor(), new TaskId(2, p));
                person.store(StoreNames.PERSONS, PersonSerdes.personState());
                persons.add(person.start());
            }
            // The ingest topic and identity.commands are co-partitioned: one identity task reads both.
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new Partition<>(identity.get(p)));
                partitions.add(new Partition<>(identity.get(p)));
                partitions.add(new Partition<>(coordinators.get(p)));
                partitions.add(new Partition<>(persons.get(p)));
            }
        }

        void sendAndSettle(final List<CapturedEvent> events) {
            send(events);
            deliverUntil(() -> false);
        }

        /** Appends the events to the ingest topic's partitions, as the gateway produces them. */
        void send(final List<CapturedEvent> events) {
            for (final CapturedEvent event : events) {
                partition(0, event.partitionKey()).add(event.partitionKey(), new IdentityCommand.Ingest(event, false));
            }
        }

        /** Delivers records, one at a time from a random partition, until {@code done} or nothing is left. */
        void deliverUntil(final java.util.function.BooleanSupplier done) {
            for (List<Partition<?>> ready = ready(); !ready.isEmpty() && !done.getAsBoolean(); ready = ready()) {
                deliver(ready.get(random.nextInt(ready.size())));
            }
        }

        /** How many records of this type were processed so far. */
        int delivered(final Class<?> type) {
            return delivered.getOrDefault(type, 0);
        }

        /** Whether the distinct id's owner holds its events for a merge. */
        boolean holdsOf(final String distinctId) {
            return owner(distinctId).<dev.eddy.persons.Hold>store(StoreNames.IDENTITY_HOLDS)
                    .get("h" + Keys.scoped(PROJECT, distinctId)) != null;
        }

        private Task<IdentityCommand> owner(final String distinctId) {
            return identity.get(Math.floorMod(Keys.distinctIdRoute(TOKEN, distinctId).hashCode(), PARTITIONS));
        }

        private List<Partition<?>> ready() {
            return partitions.stream().filter(p -> !p.queue.isEmpty()).toList();
        }

        /** Topic 0 is the ingest topic, 1 identity.commands, 2 project.commands, 3 persons.commands. */
        @SuppressWarnings("unchecked")
        private <V> Partition<V> partition(final int topic, final String key) {
            return (Partition<V>) partitions.get(Math.floorMod(key.hashCode(), PARTITIONS) * 4 + topic);
        }

        private <V> void deliver(final Partition<V> partition) {
            final Record<String, V> record = partition.queue.poll();
            delivered.merge(record.value().getClass(), 1, Integer::sum);
            final Task<V> task = partition.task;
            task.processor.process(record);
            for (final var forward : task.context.forwarded()) {
                final Record<? extends String, ?> out = forward.record();
                final String child = forward.childName().orElseThrow();
                switch (child) {
                    case IdentityProcessor.TO_IDENTITY, PersonsProcessor.TO_IDENTITY ->
                            partition(1, out.key()).add(out.key(), (IdentityCommand) out.value());
                    case IdentityProcessor.TO_PROJECT -> partition(2, out.key()).add(out.key(), (ProjectCommand) out.value());
                    case IdentityProcessor.TO_PERSONS, ProjectCoordinator.TO_PERSONS, PersonsProcessor.TO_PERSONS ->
                            partition(3, out.key()).add(out.key(), (PersonCommand) out.value());
                    case IdentityProcessor.TO_ENRICHED, PersonsProcessor.TO_TIMELINES ->
                            enriched.add(out.value() instanceof dev.eddy.topology.trends.TimelineProcessor.Append append
                                    ? append.person() : ((dev.eddy.events.EnrichedEvent) out.value()).personId());
                    case PersonsProcessor.TO_MERGES -> {
                        // Timelines are not simulated.
                    }
                    default -> throw new AssertionError("unexpected output to " + child);
                }
            }
            task.context.resetForwards();
        }

        /** The person of each enriched event, in the order they came out. */
        List<String> enrichedPersons() {
            return enriched;
        }

        PersonState personOf(final String distinctId) {
            String uuid = owner(distinctId).<String>store(StoreNames.DISTINCT_IDS).get(Keys.scoped(PROJECT, distinctId));
            while (true) {
                final String key = Keys.scoped(PROJECT, uuid);
                final PersonState person = persons.get(Math.floorMod(key.hashCode(), PARTITIONS))
                        .<PersonState>store(StoreNames.PERSONS).get(key);
                if (person == null || person.mergedInto() == null) {
                    return person;
                }
                uuid = person.mergedInto();
            }
        }

        long heldEvents() {
            long held = 0;
            for (final Task<IdentityCommand> task : identity) {
                try (var all = task.<dev.eddy.persons.Hold>store(StoreNames.IDENTITY_HOLDS).all()) {
                    while (all.hasNext()) {
                        all.next();
                        held++;
                    }
                }
            }
            return held;
        }
    }

    private static final class Partition<V> {
        final Task<V> task;
        final ArrayDeque<Record<String, V>> queue = new ArrayDeque<>();

        Partition(final Task<V> task) {
            this.task = task;
        }

        void add(final String key, final V value) {
            queue.add(new Record<>(key, value, 0L));
        }
    }

    /** One processor with its in-memory stores, as one task of a Kafka Streams instance. */
    private static final class Task<V> {
        final Processor<String, V, String, Object> processor;
        final MockProcessorContext<String, Object> context;

        @SuppressWarnings("unchecked")
        Task(final Processor<String, ? extends V, String, Object> processor, final TaskId id) {
            this.processor = (Processor<String, V, String, Object>) processor;
            final java.util.Properties config = new java.util.Properties();
            config.put("application.id", "simulation");
            config.put("bootstrap.servers", "unused:9092");
            this.context = new MockProcessorContext<>(config, id, null);
        }

        <T> void store(final String name, final Serde<T> values) {
            final KeyValueStore<String, T> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name),
                    Serdes.String(), values).withLoggingDisabled().build();
            store.init(context.getStateStoreContext(), store);
            context.addStateStore(store);
        }

        <T> KeyValueStore<String, T> store(final String name) {
            return context.getStateStore(name);
        }

        Task<V> start() {
            processor.init(context);
            return this;
        }
    }
}
