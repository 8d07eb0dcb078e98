package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One person as the {@code persons} store holds it, keyed {@code project:uuid}.
 *
 * @param uuid         the person's id (PostHog's uuid), derived from its first distinct id
 * @param projectId    its project
 * @param token        the project API key its events came with: the partitioning key of its distinct ids
 * @param createdAt    event time of its first event (the earliest of merged persons)
 * @param isIdentified whether an identify, alias or merge involved it
 * @param properties   person properties
 * @param distinctIds  every distinct id resolving to it, in the order they joined
 * @param version      bumped on every change
 * @param mergedInto   when set, this person was merged into that one and only forwards what reaches it
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PersonState(
        String uuid,
        long projectId,
        String token,
        Instant createdAt,
        @JsonProperty("is_identified") boolean isIdentified,
        ObjectNode properties,
        List<String> distinctIds,
        long version,
        String mergedInto) {

    public PersonState {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(properties, "properties");
        distinctIds = List.copyOf(distinctIds);
    }

    public PersonState withDistinctId(final String distinctId) {
        if (distinctIds.contains(distinctId)) {
            return this;
        }
        final List<String> ids = new ArrayList<>(distinctIds);
        ids.add(distinctId);
        return new PersonState(uuid, projectId, token, createdAt, isIdentified, properties, ids, version + 1, mergedInto);
    }

    public PersonState identified() {
        return isIdentified ? this
                : new PersonState(uuid, projectId, token, createdAt, true, properties, distinctIds, version + 1, mergedInto);
    }

    public PersonState withProperties(final ObjectNode changed) {
        return new PersonState(uuid, projectId, token, createdAt, isIdentified, changed, distinctIds, version + 1, mergedInto);
    }

    /** What stays of a person merged into {@code target}: enough to forward what still reaches it. */
    public PersonState mergedInto(final String target) {
        return new PersonState(uuid, projectId, token, createdAt, isIdentified, properties.objectNode(), distinctIds,
                version + 1, target);
    }
}
