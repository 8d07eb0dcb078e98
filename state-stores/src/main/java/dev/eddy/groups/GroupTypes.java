package dev.eddy.groups;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A project's group types and their indexes, assigned in order of first sight; PostHog allows five (0..4).
 *
 * @param types group type name to index
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record GroupTypes(long projectId, Map<String, Integer> types) {
    public static final int MAX_TYPES = 5;

    public GroupTypes {
        types = Map.copyOf(types);
    }

    public static GroupTypes none(final long projectId) {
        return new GroupTypes(projectId, Map.of());
    }

    public Optional<Integer> indexOf(final String type) {
        return Optional.ofNullable(types.get(type));
    }

    /** With {@code type} added at the next free index; empty when the project already has five types. */
    public Optional<GroupTypes> with(final String type) {
        if (types.containsKey(type)) {
            return Optional.of(this);
        }
        if (types.size() >= MAX_TYPES) {
            return Optional.empty();
        }
        final Map<String, Integer> more = new LinkedHashMap<>(types);
        more.put(type, types.size());
        return Optional.of(new GroupTypes(projectId, more));
    }
}
