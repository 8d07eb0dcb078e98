package dev.eddy.gateway.actions;

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
 * An action as the management API shows it, PostHog's fields: its steps with their {@code selector_regex},
 * {@code is_action}, and PostHog's fields Eddy has no use for at their constant values ({@code is_calculating} false,
 * {@code bytecode_error} and {@code creation_context} null). {@code last_calculated_at} is when it last changed: Eddy
 * matches actions when queries run, so nothing is calculated in between.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record SavedAction(long id, @JsonProperty("team_id") long projectId, String name, String description, List<String> tags,
                          boolean postToSlack, String slackMessageFormat, @JsonIgnore JsonNode storedSteps, boolean deleted,
                          OffsetDateTime pinnedAt, OffsetDateTime createdAt, User createdBy, OffsetDateTime lastCalculatedAt) {

    @JsonProperty("steps")
    public JsonNode steps() {
        return ActionSteps.view(storedSteps);
    }

    @JsonProperty("is_action")
    public boolean isAction() {
        return true;
    }

    @JsonProperty("is_calculating")
    public boolean isCalculating() {
        return false;
    }

    @JsonProperty("bytecode_error")
    public String bytecodeError() {
        return null;
    }

    @JsonProperty("creation_context")
    public String creationContext() {
        return null;
    }

    /** What a query is sent in place of the action's id ({@code dev.eddy.trends.Action#INLINED}): id, name and steps. */
    @JsonIgnore
    public ObjectNode definition() {
        final ObjectNode d = Json.mapper().createObjectNode();
        d.put("id", id);
        d.put("name", name == null ? "" : name);
        d.set("steps", storedSteps);
        return d;
    }
}
