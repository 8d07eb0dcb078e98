package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.events.CapturedEvent;

/**
 * The identity processor's record of a distinct id whose events wait for the merges it takes part in: one
 * {@link Open} per held distinct id, and its waiting events, numbered in arrival order.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Hold.Open.class, name = "open"),
        @JsonSubTypes.Type(value = Hold.Waiting.class, name = "waiting")})
public sealed interface Hold {

    /**
     * @param merges how many merges of the distinct id are in flight; its events wait until none is
     * @param first  the number of its first waiting event
     * @param next   the number its next waiting event gets
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Open(int merges, long first, long next) implements Hold {
    }

    /**
     * A waiting event.
     *
     * @param linked    whether it is the merge event that opened the hold, whose merge is already asked for: only its
     *                  own person updates remain, applied to the merged person
     * @param timestamp its record's timestamp, kept for the records it leads to
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Waiting(CapturedEvent event, boolean linked, long timestamp) implements Hold {
    }
}
