package dev.eddy.gateway.cohorts;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * A cohort as the management API shows it, PostHog's fields. Eddy evaluates a dynamic cohort when a query or a flag
 * asks, so it is never calculating ({@code is_calculating} false, {@code errors_calculating} 0), {@code last_calculation}
 * is when its definition last changed, and its {@code count} is counted when one cohort is read (null in lists); a
 * static cohort's {@code count} is the number of its members (distinct ids).
 *
 * @param members a static cohort's member count
 * @param persons a dynamic cohort's persons, when counted ({@link #counted})
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record SavedCohort(long id, @JsonIgnore long projectId, String name, String description, JsonNode filters, boolean isStatic,
                          boolean deleted, OffsetDateTime createdAt, User createdBy, @JsonProperty("last_calculation") OffsetDateTime updatedAt,
                          @JsonIgnore long members, @JsonIgnore Long persons) {

    @JsonProperty("count")
    public Long count() {
        return isStatic ? Long.valueOf(members) : persons;
    }

    /** The same cohort with its persons counted. */
    public SavedCohort counted(final long count) {
        return new SavedCohort(id, projectId, name, description, filters, isStatic, deleted, createdAt, createdBy, updatedAt, members, count);
    }

    @JsonProperty("groups")
    public List<Object> groups() {
        return List.of();
    }

    @JsonProperty("query")
    public Object query() {
        return null;
    }

    @JsonProperty("is_calculating")
    public boolean isCalculating() {
        return false;
    }

    @JsonProperty("errors_calculating")
    public int errorsCalculating() {
        return 0;
    }

    @JsonProperty("cohort_type")
    public String cohortType() {
        return isStatic ? "static" : "person_property";
    }

    /** A dynamic cohort's filter tree ({@code filters.properties}), or the empty group. */
    @JsonIgnore
    public JsonNode properties() {
        final JsonNode properties = filters.path("properties");
        return properties.isMissingNode() || properties.isNull() ? Json.mapper().createObjectNode() : properties;
    }

    /** The definition inlined for the engine ({@code dev.eddy.trends.Cohort#INLINED}), members excepted. */
    @JsonIgnore
    public ObjectNode definition() {
        final ObjectNode d = Json.mapper().createObjectNode();
        d.put("id", id);
        d.put("name", name == null ? "" : name);
        d.put("is_static", isStatic);
        d.set("filters", filters.deepCopy());
        return d;
    }
}
