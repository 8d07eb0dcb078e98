package dev.eddy.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.CapturedEvent;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What an event says about groups, given its project's group types: the group keys it is attached to (from
 * {@code $groups}, which never creates a group) and, for {@code $groupidentify}, the group it creates or updates.
 * Types without an index (the project's sixth and later) are ignored, as PostHog does.
 */
public final class GroupAttachment {
    public static final String GROUP_IDENTIFY = "$groupidentify";

    private GroupAttachment() {
    }

    /**
     * @param groups   group type index ("0".."4") to group key
     * @param groupSet the update of a {@code $groupidentify}, if the event is one and its type has an index
     */
    public record Resolved(Map<String, String> groups, Optional<GroupSet> groupSet) {
    }

    /** Every group type the event names, in order. */
    public static Set<String> typesNamed(final CapturedEvent event) {
        final Set<String> types = new LinkedHashSet<>();
        final JsonNode groups = event.properties().path("$groups");
        if (groups.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = groups.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> group = it.next();
                keyOf(group.getValue()).ifPresent(key -> types.add(group.getKey()));
            }
        }
        identified(event).ifPresent(typeAndKey -> types.add(typeAndKey[0]));
        return types;
    }

    public static Resolved resolve(final CapturedEvent event, final GroupTypes types) {
        final Map<String, String> attached = new TreeMap<>();
        final JsonNode groups = event.properties().path("$groups");
        if (groups.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = groups.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> group = it.next();
                final Optional<String> key = keyOf(group.getValue());
                final Optional<Integer> index = types.indexOf(group.getKey());
                if (key.isPresent() && index.isPresent()) {
                    attached.put(String.valueOf(index.get()), key.get());
                }
            }
        }
        final Optional<GroupSet> set = identified(event).flatMap(typeAndKey -> types.indexOf(typeAndKey[0]).map(index -> {
            final JsonNode given = event.properties().path("$group_set");
            return new GroupSet(event.projectId(), index, typeAndKey[0], typeAndKey[1],
                    given.isObject() ? (ObjectNode) given.deepCopy() : event.properties().objectNode(), event.timestamp());
        }));
        return new Resolved(attached, set);
    }

    /** Adds {@code $group_<index>} properties to the event, as PostHog's ingestion does. */
    public static void addGroupProperties(final CapturedEvent event, final Map<String, String> groups) {
        groups.forEach((index, key) -> event.properties().put("$group_" + index, key));
    }

    /** {@code [type, key]} of a {@code $groupidentify} that names both. */
    private static Optional<String[]> identified(final CapturedEvent event) {
        if (!GROUP_IDENTIFY.equals(event.event())) {
            return Optional.empty();
        }
        final JsonNode type = event.properties().path("$group_type");
        final Optional<String> key = keyOf(event.properties().path("$group_key"));
        if (!type.isTextual() || type.asText().isEmpty() || key.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new String[] {type.asText(), key.get()});
    }

    /** A group key is a non-empty string, or a number taken as its text. */
    private static Optional<String> keyOf(final JsonNode value) {
        if (value.isTextual() && !value.asText().isEmpty()) {
            return Optional.of(value.asText());
        }
        return value.isNumber() ? Optional.of(value.asText()) : Optional.empty();
    }
}
