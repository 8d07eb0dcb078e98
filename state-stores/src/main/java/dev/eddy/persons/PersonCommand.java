package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

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
    /**
     * What a person's owner does with each kind of command. Adding a kind of command fails the build until every handler
     * takes it.
     */
    interface Handler {
        void apply(Apply command);

        void addDistinctId(AddDistinctId command);

        void markIdentified(MarkIdentified command);

        void mergeInto(MergeInto command);

        void absorb(Absorb command);
    }

    /** Calls {@code handler}'s method for this kind of command. */
    void handleWith(Handler handler);

    /** The person the command is for (the record key is {@code project:personId}). */
    String personId();

    /** The person's project. */
    long projectId();

    /** Same command for another person: where it goes when its person was merged away. */
    PersonCommand forwardedTo(String person);

    /**
     * An event of the person: apply its person updates, then hand it to the person's timeline. It carries what the
     * persons and timelines read, in the form they read it: the event's properties as JSON bytes, stored as they are,
     * and apart from them the person updates ({@code $set}, {@code $set_once}, {@code $unset}) parsed. On
     * {@code persons.commands} it is binary ({@link PersonCommandSerde}); version 1, the captured event as JSON, is
     * still read ({@link #fromVersion1}).
     *
     * @param token      the project's token (null in records that never had one)
     * @param timestamp  the event's time
     * @param groups     group type index ("0".."4") to group key, from the event's {@code $groups}
     * @param properties the event's properties (with its {@code $group_N}), JSON
     * @param updates    the event's {@code $set}, {@code $set_once} and {@code $unset}, or null when it has none
     */
    record Apply(long projectId, String token, String personId, String uuid, String distinctId, String event,
                 Instant timestamp, Map<String, String> groups, byte[] properties, ObjectNode updates) implements PersonCommand {
        @Override
        public void handleWith(final Handler handler) {
            handler.apply(this);
        }

        /** The properties of an event that update its person, in the order PostHog applies them. */
        private static final List<String> UPDATES = List.of("$set_once", "$set", "$unset");

        public Apply {
            Objects.requireNonNull(personId, "person_id");
            Objects.requireNonNull(uuid, "uuid");
            Objects.requireNonNull(distinctId, "distinct_id");
            Objects.requireNonNull(event, "event");
            Objects.requireNonNull(timestamp, "timestamp");
            Objects.requireNonNull(properties, "properties");
            groups = groups == null ? Map.of() : Map.copyOf(groups);
        }

        /** The captured event {@code event} of {@code personId}, its groups resolved. */
        public static Apply of(final CapturedEvent event, final String personId, final Map<String, String> groups) {
            ObjectNode updates = null;
            for (final String update : UPDATES) {
                final JsonNode value = event.properties().get(update);
                if (value != null) {
                    updates = updates == null ? Json.mapper().createObjectNode() : updates;
                    updates.set(update, value);
                }
            }
            return new Apply(event.projectId(), event.token(), personId, event.uuid(), event.distinctId(), event.event(),
                    event.timestamp(), groups, event.propertiesJson(), updates);
        }

        /** An apply command as version 1 wrote it: {@code {"type":"apply","event":{...},"person_id":...,"groups":{...}}}. */
        @JsonCreator
        static Apply fromVersion1(@JsonProperty("event") final CapturedEvent event, @JsonProperty("person_id") final String personId,
                                  @JsonProperty("groups") final Map<String, String> groups) {
            return of(Objects.requireNonNull(event, "event"), personId, groups);
        }

        @Override
        public PersonCommand forwardedTo(final String person) {
            return new Apply(projectId, token, person, uuid, distinctId, event, timestamp, groups, properties, updates);
        }

        @Override
        public boolean equals(final Object o) {
            return o instanceof Apply other && projectId == other.projectId && Objects.equals(token, other.token)
                    && personId.equals(other.personId) && uuid.equals(other.uuid) && distinctId.equals(other.distinctId)
                    && event.equals(other.event) && timestamp.equals(other.timestamp) && groups.equals(other.groups)
                    && Arrays.equals(properties, other.properties) && Objects.equals(updates, other.updates);
        }

        @Override
        public int hashCode() {
            return Objects.hash(projectId, personId, uuid, timestamp) * 31 + Arrays.hashCode(properties);
        }

        @Override
        public String toString() {
            return "Apply[" + event + " " + uuid + " of " + distinctId + " to " + projectId + ":" + personId + "]";
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
        public void handleWith(final Handler handler) {
            handler.addDistinctId(this);
        }

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
        public void handleWith(final Handler handler) {
            handler.markIdentified(this);
        }

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
        public void handleWith(final Handler handler) {
            handler.mergeInto(this);
        }

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
        public void handleWith(final Handler handler) {
            handler.absorb(this);
        }

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
