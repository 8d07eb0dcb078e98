package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.insights.Insight;
import dev.eddy.gateway.users.User;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A dashboard with the caller's access computed: PostHog's list form ({@link #listForm}) and full form
 * ({@link #fullForm}, with tiles).
 *
 * @param restrictionLevel 21 everyone in the project can edit, 37 only collaborators who may edit
 * @param privilegeLevel   what the caller may do: 37 edit, 21 view
 */
public record Dashboard(long id, String name, String description, boolean pinned, OffsetDateTime createdAt, User createdBy,
                        boolean isShared, boolean deleted, String creationMode, JsonNode filters, JsonNode variables,
                        List<String> tags, int restrictionLevel, int privilegeLevel, List<Tile> tiles) {

    public static final int CAN_VIEW = 21;
    public static final int CAN_EDIT = 37;

    /** A tile with its insight in the insight's full form. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record Tile(long id, String color, JsonNode layouts, Insight insight, JsonNode text, boolean deleted,
                       boolean isCached, String lastRefresh) {
        /** The tile showing {@code shown} (its insight with the dashboard's filters and computed fields). */
        public Tile showing(final Insight shown) {
            return new Tile(id, color, layouts, shown, text, deleted, shown.isCached(), shown.lastRefresh());
        }
    }

    public boolean canEdit() {
        return privilegeLevel >= CAN_EDIT;
    }

    public Dashboard withTiles(final List<Tile> newTiles) {
        return new Dashboard(id, name, description, pinned, createdAt, createdBy, isShared, deleted, creationMode, filters,
                variables, tags, restrictionLevel, privilegeLevel, newTiles);
    }

    public Map<String, Object> listForm() {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("name", name);
        body.put("description", description);
        body.put("pinned", pinned);
        body.put("created_at", createdAt);
        body.put("created_by", createdBy);
        body.put("is_shared", isShared);
        body.put("deleted", deleted);
        body.put("creation_mode", creationMode);
        body.put("tags", tags);
        body.put("restriction_level", restrictionLevel);
        body.put("effective_restriction_level", restrictionLevel);
        body.put("effective_privilege_level", privilegeLevel);
        body.put("user_access_level", privilegeLevel >= CAN_EDIT ? "editor" : "viewer");
        return body;
    }

    public Map<String, Object> fullForm() {
        final Map<String, Object> body = listForm();
        body.put("use_template", "");
        body.put("use_dashboard", null);
        body.put("delete_insights", false);
        body.put("filters", filters);
        body.put("variables", variables);
        body.put("tiles", tiles);
        return body;
    }
}
