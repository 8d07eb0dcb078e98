package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * A project coordinator's view of one person that took part in a merge: the person it was merged into (null for
 * a surviving root) and whether it is identified. Parents only ever point at roots chosen later, so the links
 * form a forest and following them always ends.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PersonLink(String parent, @JsonProperty("is_identified") boolean isIdentified) {
}
