package dev.eddy.persons;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.time.Instant;
import java.util.List;

/**
 * A record of {@code persons.merges}, keyed {@code project:source}: person {@code source} no longer exists on its
 * own; everything about it now belongs to {@code target}. Downstream stores fold the source into the target.
 * Chains compose: a later merge of the target is a record of its own.
 *
 * @param v           record version
 * @param projectId   the project
 * @param source      the person merged away
 * @param target      the surviving person
 * @param distinctIds the source's distinct ids, which now resolve to the target
 * @param timestamp   event time of the event that caused the merge
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record PersonMerge(int v, long projectId, String source, String target, List<String> distinctIds, Instant timestamp) {
    public static final int VERSION = 1;
}
