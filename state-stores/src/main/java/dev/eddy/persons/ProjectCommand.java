package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.events.CapturedEvent;
import java.time.Instant;

/**
 * What a project's coordinator decides, keyed by project id: the one place that serialises a project's person
 * merges (so concurrent merges can never form a cycle) and assigns its group type indexes.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = ProjectCommand.Merge.class, name = "merge"),
        @JsonSubTypes.Type(value = ProjectCommand.AssignGroupTypes.class, name = "assign-group-types")})
public sealed interface ProjectCommand {

    /**
     * Both sides of a requested merge as their owners saw them.
     *
     * @param otherPerson the person {@code otherDistinctId} resolved to, or null when it was new (its owner has
     *                    already mapped it to {@code mergeIntoPerson})
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Merge(long projectId, String token, String mergeIntoDistinctId, String mergeIntoPerson, boolean mergeIntoWasNew,
                 String otherDistinctId, String otherPerson, boolean dangerous, Instant timestamp) implements ProjectCommand {
    }

    /**
     * An event naming group types the sender had no index for; the coordinator assigns them, then sends the
     * event on to its person.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record AssignGroupTypes(CapturedEvent event, String personId) implements ProjectCommand {
    }
}
