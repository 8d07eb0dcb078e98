package dev.eddy.groups;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * A {@code $groupidentify} for one group, sent to the group's owner (keyed {@code project:type_index:key}).
 *
 * @param set       the event's {@code $group_set} (empty when it had none)
 * @param timestamp the event's time
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record GroupSet(long projectId, int groupTypeIndex, String groupType, String groupKey, ObjectNode set,
                       Instant timestamp) {
    /**
     * A record of another shape on the topic fails here, when it is read, so it goes to the dead-letter topic instead
     * of reaching the groups processor with missing fields.
     */
    public GroupSet {
        if (projectId <= 0) {
            throw new IllegalArgumentException("a group set needs its project");
        }
        if (groupTypeIndex < 0 || groupTypeIndex >= GroupTypes.MAX_TYPES) {
            throw new IllegalArgumentException("group type index " + groupTypeIndex + " is not 0-" + (GroupTypes.MAX_TYPES - 1));
        }
        java.util.Objects.requireNonNull(groupType, "group_type");
        java.util.Objects.requireNonNull(groupKey, "group_key");
        java.util.Objects.requireNonNull(set, "set");
        java.util.Objects.requireNonNull(timestamp, "timestamp");
    }
}
