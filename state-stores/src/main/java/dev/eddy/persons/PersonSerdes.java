package dev.eddy.persons;

import dev.eddy.events.EnrichedEvent;
import dev.eddy.groups.GroupSet;
import dev.eddy.groups.GroupState;
import dev.eddy.groups.GroupTypes;
import dev.eddy.serde.JsonSerde;
import org.apache.kafka.common.serialization.Serde;

/** Serdes of the identity, person and group records on Kafka and in stores: JSON, one type each, but for events. */
public final class PersonSerdes {
    private PersonSerdes() {
    }

    public static Serde<IdentityCommand> identityCommand() {
        return new JsonSerde<>(IdentityCommand.class);
    }

    public static Serde<ProjectCommand> projectCommand() {
        return new JsonSerde<>(ProjectCommand.class);
    }

    /** Binary for an event's apply command, JSON for the rest ({@link PersonCommandSerde}). */
    public static Serde<PersonCommand> personCommand() {
        return new PersonCommandSerde();
    }

    public static Serde<PersonState> personState() {
        return new JsonSerde<>(PersonState.class);
    }

    public static Serde<Hold> hold() {
        return new JsonSerde<>(Hold.class);
    }

    public static Serde<PersonLink> personLink() {
        return new JsonSerde<>(PersonLink.class);
    }

    public static Serde<PersonMerge> personMerge() {
        return new JsonSerde<>(PersonMerge.class);
    }

    public static Serde<EnrichedEvent> enrichedEvent() {
        return new JsonSerde<>(EnrichedEvent.class);
    }

    public static Serde<GroupSet> groupSet() {
        return new JsonSerde<>(GroupSet.class);
    }

    public static Serde<GroupState> groupState() {
        return new JsonSerde<>(GroupState.class);
    }

    public static Serde<GroupTypes> groupTypes() {
        return new JsonSerde<>(GroupTypes.class);
    }
}
