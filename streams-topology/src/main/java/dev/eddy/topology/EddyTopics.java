package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.events.EventSerdes;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.groups.GroupSet;
import dev.eddy.groups.GroupState;
import dev.eddy.groups.GroupTypes;
import dev.eddy.persons.IdentityCommand;
import dev.eddy.persons.PersonCommand;
import dev.eddy.persons.PersonMerge;
import dev.eddy.persons.PersonSerdes;
import dev.eddy.persons.ProjectCommand;
import dev.eddy.serde.JsonSerde;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The registry of Eddy's topics for one deployment (names carry the configured prefix). Eddy creates them all
 * with the configured partition count: the command topics are the topology's explicit repartition topics, and
 * {@code identity.commands} must be co-partitioned with the ingest topics it is read with.
 *
 * @param ingest          live events from the gateway, keyed {@code token:distinct_id}
 * @param historical      {@code historical_migration} batches, same key, replayed in order and never overflowed
 * @param overflow        live events of a key past its rate, unkeyed so they spread over every partition
 * @param dlq             records the topology could not read or process, with the reason in headers
 * @param identityCommands events re-keyed from overflow, merge links and remaps, keyed {@code token:distinct_id}
 * @param projectCommands merge requests and group type assignments, keyed by project id
 * @param personCommands  events and merges for persons, keyed {@code project:person_uuid}
 * @param groupCommands   {@code $groupidentify} updates, keyed {@code project:type_index:key}
 * @param enriched        events with their person, keyed {@code project:person_uuid}
 * @param personMerges    one record per merged-away person, keyed {@code project:source_person_uuid}
 * @param groupStates     every group's latest state (compacted), read into a global store
 * @param groupTypes      every project's group types (compacted), read into a global store
 * @param flagDefinitions every live feature flag's definition (compacted, {@code project:flag_key}; a tombstone
 *                        when deleted), written by the gateway, read into a global store
 * @param timelineMoves   timeline events moving to another person's timeline after a merge, keyed
 *                        {@code project:target_person_uuid}, each an encoded {@code TimelineEvent}
 * @param instances       the streams instances answering queries (compacted, keyed by advertised {@code host:port},
 *                        a heartbeat every few seconds, a tombstone at shutdown), read by gateway-only processes
 */
public record EddyTopics(
        Topic<String, CapturedEvent> ingest,
        Topic<String, CapturedEvent> historical,
        Topic<String, CapturedEvent> overflow,
        Topic<byte[], byte[]> dlq,
        Topic<String, IdentityCommand> identityCommands,
        Topic<String, ProjectCommand> projectCommands,
        Topic<String, PersonCommand> personCommands,
        Topic<String, GroupSet> groupCommands,
        Topic<String, EnrichedEvent> enriched,
        Topic<String, PersonMerge> personMerges,
        Topic<String, GroupState> groupStates,
        Topic<String, GroupTypes> groupTypes,
        Topic<String, JsonNode> flagDefinitions,
        Topic<String, byte[]> timelineMoves,
        Topic<String, String> instances) {

    public static final String INGEST = "events.ingest";
    public static final String HISTORICAL = "events.historical";
    public static final String OVERFLOW = "events.overflow";
    public static final String DLQ = "events.dlq";
    public static final String IDENTITY_COMMANDS = "identity.commands";
    public static final String PROJECT_COMMANDS = "project.commands";
    public static final String PERSON_COMMANDS = "persons.commands";
    public static final String GROUP_COMMANDS = "groups.commands";
    public static final String ENRICHED = "events.enriched";
    public static final String PERSON_MERGES = "persons.merges";
    public static final String GROUP_STATES = "groups.state";
    public static final String GROUP_TYPES = "groups.types";
    public static final String FLAG_DEFINITIONS = "flags.definitions";
    public static final String TIMELINE_MOVES = "timelines.moves";
    public static final String INSTANCES = "streams.instances";

    public static EddyTopics of(final KafkaConfig kafka) {
        return new EddyTopics(
                events(kafka.topic(INGEST)),
                events(kafka.topic(HISTORICAL)),
                events(kafka.topic(OVERFLOW)),
                new Topic<>(kafka.topic(DLQ), Serdes.ByteArray(), Serdes.ByteArray(), false),
                new Topic<>(kafka.topic(IDENTITY_COMMANDS), Serdes.String(), PersonSerdes.identityCommand(), false),
                new Topic<>(kafka.topic(PROJECT_COMMANDS), Serdes.String(), PersonSerdes.projectCommand(), false),
                new Topic<>(kafka.topic(PERSON_COMMANDS), Serdes.String(), PersonSerdes.personCommand(), false),
                new Topic<>(kafka.topic(GROUP_COMMANDS), Serdes.String(), PersonSerdes.groupSet(), false),
                new Topic<>(kafka.topic(ENRICHED), Serdes.String(), PersonSerdes.enrichedEvent(), false),
                new Topic<>(kafka.topic(PERSON_MERGES), Serdes.String(), PersonSerdes.personMerge(), false),
                new Topic<>(kafka.topic(GROUP_STATES), Serdes.String(), PersonSerdes.groupState(), true),
                new Topic<>(kafka.topic(GROUP_TYPES), Serdes.String(), PersonSerdes.groupTypes(), true),
                new Topic<>(kafka.topic(FLAG_DEFINITIONS), Serdes.String(), flagDefinitionSerde(), true),
                new Topic<>(kafka.topic(TIMELINE_MOVES), Serdes.String(), Serdes.ByteArray(), false),
                new Topic<>(kafka.topic(INSTANCES), Serdes.String(), Serdes.String(), true));
    }

    /** Flag definitions as JSON, refusing JSON of another shape when read (the global loader dead-letters it). */
    private static Serde<JsonNode> flagDefinitionSerde() {
        final JsonSerde<JsonNode> json = new JsonSerde<>(JsonNode.class);
        return Serdes.serdeFrom(json.serializer(), (topic, bytes) -> {
            final JsonNode definition = json.deserializer().deserialize(topic, bytes);
            if (definition != null) {
                try {
                    FlagDefinition.strict(definition);
                } catch (final IllegalArgumentException e) {
                    throw new SerializationException("cannot read a flag definition from " + topic + ": " + e.getMessage(), e);
                }
            }
            return definition;
        });
    }

    private static Topic<String, CapturedEvent> events(final String name) {
        return new Topic<>(name, Serdes.String(), EventSerdes.capturedEvent(), false);
    }

    /** Every topic Eddy creates at start-up (Kafka Streams creates its own changelogs). */
    public List<Topic<?, ?>> all() {
        return List.of(ingest, historical, overflow, dlq, identityCommands, projectCommands, personCommands,
                groupCommands, enriched, personMerges, groupStates, groupTypes, flagDefinitions, timelineMoves, instances);
    }
}
