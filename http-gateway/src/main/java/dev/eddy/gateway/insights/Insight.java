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
 * {@code is_cached}, {@code query_status}, ...) are null as read from the database; {@link InsightCalculations}
 * fills them in ({@link #withResults}).
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

    /** The same insight showing other definitions (a dashboard's filters applied, say). */
    public Insight withDefinition(final JsonNode newFilters, final JsonNode newQuery) {
        return new Insight(id, shortId, name, derivedName, newFilters, newQuery, order, deleted, dashboards, dashboardTiles, lastRefresh,
                cacheTargetAge, nextAllowedClientRefresh, result, hasMore, columns, createdAt, createdBy, description, updatedAt, tags,
                favorited, saved, lastModifiedAt, lastModifiedBy, isSample, effectiveRestrictionLevel, effectivePrivilegeLevel,
                userAccessLevel, timezone, isCached, queryStatus, hogql, types);
    }

    /** The same insight with its computed fields. */
    public Insight withResults(final Results r) {
        return new Insight(id, shortId, name, derivedName, filters, query, order, deleted, dashboards, dashboardTiles, r.lastRefresh(),
                r.cacheTargetAge(), r.nextAllowedClientRefresh(), r.result(), r.hasMore(), r.columns(), createdAt, createdBy, description,
                updatedAt, tags, favorited, saved, lastModifiedAt, lastModifiedBy, isSample, effectiveRestrictionLevel,
                effectivePrivilegeLevel, userAccessLevel, r.timezone(), r.isCached(), r.queryStatus(), r.hogql(), r.types());
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
