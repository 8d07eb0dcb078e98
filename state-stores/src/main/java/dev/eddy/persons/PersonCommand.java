package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.events.CapturedEvent;
import java.time.Instant;
import java.util.Map;

/**
 * What the persons processor acts on, keyed {@code project:person_uuid}. A command for a person that was merged
 * away is forwarded to the person it was merged into.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = PersonCommand.Apply.class, name = "apply"),
        @JsonSubTypes.Type(value = PersonCommand.AddDistinctId.class, name = "add-distinct-id"),
        @JsonSubTypes.Type(value = PersonCommand.MarkIdentified.class, name = "mark-identified"),
        @JsonSubTypes.Type(value = PersonCommand.MergeInto.class, name = "merge-into"),
        @JsonSubTypes.Type(value = PersonCommand.Absorb.class, name = "absorb")})
public sealed interface PersonCommand {
    /** The person the command is for (the record key is {@code project:personId}). */
    String personId();

    /** The person's project. */
    long projectId();

    /** Same command for another person: where it goes when its person was merged away. */
    PersonCommand forwardedTo(String person);

    /**
     * An event of the person: apply its property updates, then emit it enriched.
     *
     * @param groups group type index ("0".."4") to group key, from the event's {@code $groups}
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Apply(CapturedEvent event, String personId, Map<String, String> groups) implements PersonCommand {
        @Override
        public long projectId() {
            return event.projectId();
        }

        @Override
        public PersonCommand forwardedTo(final String person) {
            return new Apply(event, person, groups);
        }
    }

    /**
     * {@code distinctId} joined the person (a merge with a new distinct id); the person is identified.
     *
     * @param mappedTo the person the distinct id's owner mapped it to (a remap follows when that was not final)
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record AddDistinctId(long projectId, String token, String personId, String distinctId, String mappedTo,
                         Instant timestamp) implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new AddDistinctId(projectId, token, person, distinctId, mappedTo, timestamp);
        }
    }

    /** The person took part in a merge request (even a refused one): it is identified. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record MarkIdentified(long projectId, String personId, Instant timestamp) implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new MarkIdentified(projectId, person, timestamp);
        }
    }

    /**
     * The coordinator merged {@code personId} into {@code target}: hand everything over and forward from now on.
     *
     * @param sourceWins whether the source's properties win over the target's where both have a key
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record MergeInto(long projectId, String personId, String target, boolean sourceWins, Instant timestamp)
            implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new MergeInto(projectId, person, target, sourceWins, timestamp);
        }
    }

    /** The whole state of a person merged into {@code personId}, to be combined with it. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Absorb(String personId, PersonState source, boolean sourceWins, Instant timestamp) implements PersonCommand {
        @Override
        public long projectId() {
            return source.projectId();
        }

        @Override
        public PersonCommand forwardedTo(final String person) {
            return new Absorb(person, source, sourceWins, timestamp);
        }
    }
}
