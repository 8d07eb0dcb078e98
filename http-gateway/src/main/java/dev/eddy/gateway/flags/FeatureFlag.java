package dev.eddy.gateway.flags;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.users.User;
import dev.eddy.serde.Json;
import java.time.OffsetDateTime;

/** A feature flag as the management API shows it (PostHog's field names). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record FeatureFlag(long id, long projectId, String key, String name, JsonNode filters, boolean active, boolean deleted,
                          boolean ensureExperienceContinuity, int version, OffsetDateTime createdAt, User createdBy,
                          OffsetDateTime updatedAt, User lastModifiedBy) {

    /** A flag with one condition group and no properties: PostHog's "simple flag". */
    @com.fasterxml.jackson.annotation.JsonProperty("is_simple_flag")
    public boolean isSimpleFlag() {
        final JsonNode groups = filters.path("groups");
        return groups.size() == 1 && groups.get(0).path("properties").isEmpty()
                && filters.path("multivariate").path("variants").isEmpty();
    }

    /** The only group's rollout of a simple flag (PostHog's deprecated top-level field). */
    @com.fasterxml.jackson.annotation.JsonProperty("rollout_percentage")
    public Integer rolloutPercentage() {
        return isSimpleFlag() && filters.path("groups").get(0).path("rollout_percentage").isNumber()
                ? filters.path("groups").get(0).get("rollout_percentage").asInt() : null;
    }

    /** The definition SDKs evaluate locally and the streams instances read from {@code flags.definitions}. */
    @com.fasterxml.jackson.annotation.JsonIgnore
    public ObjectNode definition() {
        final ObjectNode d = Json.mapper().createObjectNode();
        d.put("id", id);
        d.put("team_id", projectId);
        d.put("key", key);
        d.put("name", name);
        d.put("active", active);
        d.put("deleted", deleted);
        d.put("ensure_experience_continuity", ensureExperienceContinuity);
        d.put("version", version);
        d.set("filters", filters);
        return d;
    }
}
