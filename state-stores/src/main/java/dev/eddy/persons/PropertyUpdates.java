package dev.eddy.persons;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * PostHog's person property updates carried by an event: {@code $set_once} (only keys the person does not have,
 * a key holding null counts as present), then {@code $set} (overwrites), then {@code $unset} (an array of keys,
 * or an object whose keys are removed). Applied in processing order, with no timestamp precedence.
 */
public final class PropertyUpdates {
    /** Events that never change a person (PostHog's NO_PERSON_UPDATE_EVENTS). */
    private static final Set<String> NO_PERSON_UPDATE_EVENTS = Set.of("$exception", "$$heatmap");

    private PropertyUpdates() {
    }

    /** Whether events of this name may update their person at all. */
    public static boolean updatesPersons(final String event) {
        return !NO_PERSON_UPDATE_EVENTS.contains(event);
    }

    /**
     * Applies the updates in {@code eventProperties} to {@code person}, in place.
     *
     * @return whether {@code person} changed
     */
    public static boolean apply(final ObjectNode person, final JsonNode eventProperties) {
        boolean changed = false;
        final JsonNode setOnce = eventProperties.path("$set_once");
        if (setOnce.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = setOnce.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> field = it.next();
                if (!person.has(field.getKey())) {
                    person.set(field.getKey(), field.getValue().deepCopy());
                    changed = true;
                }
            }
        }
        final JsonNode set = eventProperties.path("$set");
        if (set.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = set.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> field = it.next();
                if (!field.getValue().equals(person.get(field.getKey()))) {
                    person.set(field.getKey(), field.getValue().deepCopy());
                    changed = true;
                }
            }
        }
        final JsonNode unset = eventProperties.path("$unset");
        if (unset.isArray()) {
            for (final JsonNode key : unset) {
                if (key.isTextual() && person.remove(key.asText()) != null) {
                    changed = true;
                }
            }
        } else if (unset.isObject()) {
            for (final Iterator<String> it = unset.fieldNames(); it.hasNext();) {
                if (person.remove(it.next()) != null) {
                    changed = true;
                }
            }
        }
        return changed;
    }

    /**
     * Properties of two persons being merged, as PostHog combines them: every key of both, and where both have a
     * key the value of {@code winner}.
     */
    public static ObjectNode combine(final ObjectNode loser, final ObjectNode winner) {
        final ObjectNode merged = loser.deepCopy();
        merged.setAll(winner.deepCopy());
        return merged;
    }
}
