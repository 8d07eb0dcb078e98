package dev.eddy.groups;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * A group (company, team, ...) as {@code $groupidentify} left it, keyed {@code project:type_index:key}.
 *
 * @param groupTypeIndex 0..4, the project's index of {@code groupType}
 * @param properties     what every {@code $group_set} set, the latest value of each key
 * @param createdAt      the earliest event time that identified it
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record GroupState(long projectId, int groupTypeIndex, String groupType, String groupKey, ObjectNode properties,
                         Instant createdAt, long version) {

    public static String key(final long projectId, final int groupTypeIndex, final String groupKey) {
        return projectId + ":" + groupTypeIndex + ":" + groupKey;
    }
}
