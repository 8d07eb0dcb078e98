package dev.eddy.gateway.insights;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.users.User;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * An insight in the field set of PostHog's insights API. The computed fields ({@code result}, {@code last_refresh},
 * ...) are null until trend and funnel computation exists.
 *
 * @param dashboards     ids of the dashboards it is on (deprecated; derived from {@code dashboard_tiles})
 * @param dashboardTiles its tiles on dashboards that are not deleted
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.ALWAYS)
public record Insight(
        long id,
        String shortId,
        String name,
        String derivedName,
        JsonNode filters,
        JsonNode query,
        Integer order,
        boolean deleted,
        List<Long> dashboards,
        List<Tile> dashboardTiles,
        String lastRefresh,
        String cacheTargetAge,
        String nextAllowedClientRefresh,
        JsonNode result,
        @JsonProperty("hasMore") Boolean hasMore,
        JsonNode columns,
        OffsetDateTime createdAt,
        User createdBy,
        String description,
        OffsetDateTime updatedAt,
        List<String> tags,
        boolean favorited,
        boolean saved,
        OffsetDateTime lastModifiedAt,
        User lastModifiedBy,
        boolean isSample,
        int effectiveRestrictionLevel,
        int effectivePrivilegeLevel,
        String userAccessLevel,
        String timezone,
        boolean isCached,
        JsonNode queryStatus,
        String hogql,
        JsonNode types) {

    /** One tile of the insight: {@code {id, dashboard_id, deleted}}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Tile(long id, long dashboardId, boolean deleted) {
    }
}
