package dev.eddy.gateway.users;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import io.vertx.sqlclient.Row;
import java.util.UUID;

/**
 * A user as the management API embeds it ({@code created_by}, {@code last_modified_by}, a collaborator's
 * {@code user}): PostHog's basic user fields.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record User(long id, UUID uuid, String distinctId, String firstName, String lastName, String email,
                   boolean isEmailVerified, JsonNode hedgehogConfig, String roleAtOrganization) {

    /** The columns {@link #from} reads, for a table aliased {@code alias}. */
    public static String columns(final String alias) {
        return String.join(", ", java.util.stream.Stream.of("id", "uuid", "distinct_id", "first_name", "last_name", "email",
                "is_email_verified", "hedgehog_config", "role_at_organization")
                .map(c -> alias + "." + c + " AS " + alias + "_" + c).toList());
    }

    /** The user in a row selected with {@link #columns}; null when the row has none (a left join). */
    public static User from(final Row row, final String alias) {
        final Long id = row.getLong(alias + "_id");
        if (id == null) {
            return null;
        }
        final Object hedgehog = row.getValue(alias + "_hedgehog_config");
        return new User(id, row.getUUID(alias + "_uuid"), row.getString(alias + "_distinct_id"),
                row.getString(alias + "_first_name"), row.getString(alias + "_last_name"), row.getString(alias + "_email"),
                row.getBoolean(alias + "_is_email_verified"),
                hedgehog == null ? null : dev.eddy.serde.Json.mapper().valueToTree(
                        hedgehog instanceof io.vertx.core.json.JsonObject o ? o.getMap() : hedgehog),
                row.getString(alias + "_role_at_organization"));
    }
}
