package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.events.CapturedEvent;
import java.time.Instant;
import java.util.List;
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
     * @param held     the merge's distinct ids, whose events wait for it (null in records written before holds)
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record AddDistinctId(long projectId, String token, String personId, String distinctId, String mappedTo,
                         Instant timestamp, Held held) implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new AddDistinctId(projectId, token, person, distinctId, mappedTo, timestamp, held);
        }
    }

    /**
     * The person took part in a merge request that changed no person (refused, or both ids already its own): it is
     * identified.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record MarkIdentified(long projectId, String personId, Instant timestamp, Held held) implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new MarkIdentified(projectId, person, timestamp, held);
        }
    }

    /**
     * The coordinator merged {@code personId} into {@code target}: hand everything over and forward from now on.
     * The target's properties win where both have a key, as PostHog's {@code {...other, ...mergeInto}}.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record MergeInto(long projectId, String personId, String target, Instant timestamp, Held held)
            implements PersonCommand {
        @Override
        public PersonCommand forwardedTo(final String person) {
            return new MergeInto(projectId, person, target, timestamp, held);
        }
    }

    /**
     * The whole state of a person merged into {@code personId}, to be combined with it (the receiver's properties
     * win); the merge's distinct ids join the receiver.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Absorb(String personId, PersonState source, Instant timestamp, Held held) implements PersonCommand {
        @Override
        public long projectId() {
            return source.projectId();
        }

        @Override
        public PersonCommand forwardedTo(final String person) {
            return new Absorb(person, source, timestamp, held);
        }
    }

    /**
     * Both distinct ids of a merge: their owners hold each id's later events until the merge is carried out, then
     * apply them, in order, to the merged person (so an event cannot overtake the merge its distinct id started).
     *
     * @param token the project's token, which with a distinct id routes to the id's owner
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Held(String token, List<String> distinctIds) {
        public Held {
            distinctIds = List.copyOf(distinctIds);
        }
    }
}
