package dev.eddy.trends;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** Where trend and funnel queries find persons' and groups' properties while they run. */
public interface PropertyLookup {
    /** The person's current properties, or an empty object. */
    ObjectNode person(String personUuid);

    /** The group's properties, or an empty object. */
    ObjectNode group(int typeIndex, String groupKey);
}
