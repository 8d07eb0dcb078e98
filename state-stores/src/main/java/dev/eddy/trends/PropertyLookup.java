package dev.eddy.trends;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;

/** Where trend and funnel queries find persons' and groups' properties while they run. */
public interface PropertyLookup {
    /** The person's current properties, or an empty object. */
    ObjectNode person(String personUuid);

    /** The group's properties, or an empty object. */
    ObjectNode group(int typeIndex, String groupKey);

    /** When the person was created (its first event's time), if the person is known here. */
    default Optional<Instant> personCreatedAt(final String personUuid) {
        return Optional.empty();
    }

    /** The person's distinct ids (a static cohort's members are distinct ids), or none. */
    default java.util.List<String> personDistinctIds(final String personUuid) {
        return java.util.List.of();
    }

    /** A lookup answering from two functions (each must answer an object, empty for an unknown person or group). */
    static PropertyLookup of(final Function<String, ObjectNode> persons, final BiFunction<Integer, String, ObjectNode> groups) {
        return new PropertyLookup() {
            @Override
            public ObjectNode person(final String personUuid) {
                return persons.apply(personUuid);
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                return groups.apply(typeIndex, groupKey);
            }
        };
    }
}
