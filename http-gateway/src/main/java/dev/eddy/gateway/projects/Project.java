package dev.eddy.gateway.projects;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * A project as the management API shows it (PostHog's "team").
 *
 * @param id           project id, used in every management path
 * @param uuid         stable global id
 * @param organization owning organization
 * @param name         display name
 * @param apiToken     the public project API key SDKs send with events
 * @param timezone     IANA zone trends and funnels bucket in
 * @param weekStartDay 0 Sunday, 1 Monday
 * @param testAccountFilters property filters that "filter test accounts" applies
 * @param createdAt    creation time
 * @param updatedAt    last change
 */
public record Project(
        long id,
        UUID uuid,
        UUID organization,
        String name,
        @JsonProperty("api_token") String apiToken,
        String timezone,
        @JsonProperty("week_start_day") int weekStartDay,
        @JsonProperty("test_account_filters") com.fasterxml.jackson.databind.JsonNode testAccountFilters,
        @JsonProperty("created_at") OffsetDateTime createdAt,
        @JsonProperty("updated_at") OffsetDateTime updatedAt) {
}
