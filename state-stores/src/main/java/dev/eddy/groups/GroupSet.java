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
}
