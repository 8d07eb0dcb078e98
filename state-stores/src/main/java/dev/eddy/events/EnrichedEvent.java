package dev.eddy.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.Map;
import java.util.Objects;

/**
 * An event after identity resolution, on its way to its person's timeline, keyed {@code project:person_id}: the
 * captured event (its properties carrying {@code $group_0..4}) and the person it belongs to. The persons processor
 * hands it to the timelines in the same task; personless events, resolved by the owner of their distinct id, travel
 * on {@code events.enriched}. Version 1 records also carried the person's properties and creation time, which
 * nothing read: they are ignored when read.
 *
 * @param v          record version
 * @param event      the captured event
 * @param personId   uuid of its person (for personless events, PostHog's uuid of the distinct id)
 * @param personless sent with {@code $process_person_profile: false}: no person was created or updated
 * @param groups     group type index ("0".."4") to group key
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EnrichedEvent(int v, CapturedEvent event, String personId, boolean personless, Map<String, String> groups) {
    public static final int VERSION = 1;

    public EnrichedEvent {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(personId, "person_id");
        groups = groups == null ? Map.of() : Map.copyOf(groups);
    }

    /** The key on {@code events.enriched}: a person's events stay in order on one partition. */
    public String key() {
        return event.projectId() + ":" + personId;
    }
}
