package dev.eddy.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * An event after identity resolution, as written to {@code events.enriched} keyed {@code project:person_id}:
 * the captured event (its properties carrying {@code $group_0..4}), the person it belongs to and that person's
 * properties as of this event.
 *
 * @param v                record version
 * @param event            the captured event
 * @param personId         uuid of its person (for personless events, PostHog's uuid of the distinct id)
 * @param personProperties the person's properties right after this event's updates (empty when personless)
 * @param personCreatedAt  when the person was created (null when personless)
 * @param personless       sent with {@code $process_person_profile: false}: no person was created or updated
 * @param groups           group type index ("0".."4") to group key
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EnrichedEvent(int v, CapturedEvent event, String personId, ObjectNode personProperties,
                            Instant personCreatedAt, boolean personless, Map<String, String> groups) {
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
