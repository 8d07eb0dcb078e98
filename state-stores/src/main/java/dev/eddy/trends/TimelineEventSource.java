package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.io.IOException;

/**
 * One timeline event's properties as query filters read them: its own JSON (parsed once, and only if read), its
 * person's and its groups' (through a {@link PropertyLookup}).
 */
public final class TimelineEventSource implements PropertyFilter.Source {
    private final String person;
    private final TimelineEvent event;
    private final PropertyLookup lookup;
    private ObjectNode parsed;
    private ObjectNode personProperties;

    public TimelineEventSource(final String person, final TimelineEvent event, final PropertyLookup lookup) {
        this.person = person;
        this.event = event;
        this.lookup = lookup;
    }

    @Override
    public JsonNode event(final String key) {
        if (parsed == null) {
            try {
                final JsonNode tree = Json.mapper().readTree(event.properties());
                parsed = tree instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
            } catch (final IOException e) {
                parsed = Json.mapper().createObjectNode();
            }
        }
        return parsed.get(key);
    }

    @Override
    public String eventName() {
        return event.event();
    }

    @Override
    public java.util.List<String> personDistinctIds() {
        return lookup.personDistinctIds(person);
    }

    @Override
    public JsonNode person(final String key) {
        if (personProperties == null) {
            personProperties = lookup.person(person);
        }
        return personProperties.get(key);
    }

    @Override
    public JsonNode group(final int typeIndex, final String key) {
        final String group = event.groups().get(typeIndex);
        return group == null ? null : lookup.group(typeIndex, group).get(key);
    }
}
