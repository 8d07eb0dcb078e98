package dev.eddy.gateway.insights;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.gateway.users.User;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An insight in the field set of PostHog's insights API. The computed fields ({@code result}, {@code last_refresh},
 * {@code is_cached}, {@code query_status}, ...) are null as read from the database; {@link InsightCalculations}
 * fills them in ({@link #withResults}).
 *
 * @param dashboards     ids of the dashboards it is on (deprecated; derived from {@code dashboard_tiles})
 * @param dashboardTiles its tiles on dashboards that are not deleted
 * @param lastViewedAt   when anyone in the project last viewed it
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
        JsonNode types,
        OffsetDateTime lastViewedAt) {

    /**
     * PostHog's basic form ({@code InsightBasicSerializer}: {@code ?basic=true}, {@code my_last_viewed}): the insight's
     * definition and metadata without results or permissions other than {@code user_access_level}.
     */
    public Map<String, Object> basicForm() {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("short_id", shortId);
        body.put("name", name);
        body.put("derived_name", derivedName);
        body.put("filters", filters);
        body.put("query", query);
        body.put("dashboards", dashboards);
        body.put("dashboard_tiles", dashboardTiles);
        body.put("description", description);
        // The model's own last_refresh (PostHog no longer writes it) and refreshing: results are in the full form.
        body.put("last_refresh", null);
        body.put("refreshing", false);
        body.put("saved", saved);
        body.put("tags", tags);
        body.put("updated_at", updatedAt);
        body.put("created_by", createdBy);
        body.put("created_at", createdAt);
        body.put("last_modified_at", lastModifiedAt);
        body.put("favorited", favorited);
        body.put("user_access_level", userAccessLevel);
        body.put("last_viewed_at", lastViewedAt);
        return body;
    }

    /** The same insight showing other definitions (a dashboard's filters applied, say). */
    public Insight withDefinition(final JsonNode newFilters, final JsonNode newQuery) {
        return new Insight(id, shortId, name, derivedName, newFilters, newQuery, order, deleted, dashboards, dashboardTiles, lastRefresh,
                cacheTargetAge, nextAllowedClientRefresh, result, hasMore, columns, createdAt, createdBy, description, updatedAt, tags,
                favorited, saved, lastModifiedAt, lastModifiedBy, isSample, effectiveRestrictionLevel, effectivePrivilegeLevel,
                userAccessLevel, timezone, isCached, queryStatus, hogql, types, lastViewedAt);
    }

    /** The same insight with its computed fields. */
    public Insight withResults(final Results r) {
        return new Insight(id, shortId, name, derivedName, filters, query, order, deleted, dashboards, dashboardTiles, r.lastRefresh(),
                r.cacheTargetAge(), r.nextAllowedClientRefresh(), r.result(), r.hasMore(), r.columns(), createdAt, createdBy, description,
                updatedAt, tags, favorited, saved, lastModifiedAt, lastModifiedBy, isSample, effectiveRestrictionLevel,
                effectivePrivilegeLevel, userAccessLevel, r.timezone(), r.isCached(), r.queryStatus(), r.hogql(), r.types(), lastViewedAt);
    }

    /**
     * What a calculation (or the cache) says about an insight: PostHog's {@code InsightResult}.
     *
     * @param lastRefresh              when the result was calculated, ISO 8601; null without a result
     * @param cacheTargetAge           when the result stops being fresh, ISO 8601
     * @param nextAllowedClientRefresh before when a client should not ask for a recalculation, ISO 8601
     * @param queryStatus              a background calculation's status, or null
     */
    public record Results(JsonNode result, String lastRefresh, String cacheTargetAge, String nextAllowedClientRefresh,
                          Boolean hasMore, JsonNode columns, JsonNode types, String hogql, boolean isCached, String timezone,
                          JsonNode queryStatus) {
    }

    /** One tile of the insight: {@code {id, dashboard_id, deleted}}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Tile(long id, long dashboardId, boolean deleted) {
    }
}
