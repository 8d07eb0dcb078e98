package dev.eddy.gateway.auth;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the owner and scopes of a personal API key by its stored hash; a key found is kept while PostgreSQL announces
 * every change of keys and users ({@link AccessChanges}).
 */
public final class PersonalApiKeyRepository {
    private static final String FIND_ACTIVE = "SELECT id, user_id, scopes, scoped_projects FROM personal_api_keys "
            + "WHERE secure_value = $1 AND revoked_at IS NULL";

    private final Pool pool;
    private final AccessChanges.Kept<String, Optional<Principal>> kept;

    public PersonalApiKeyRepository(final Pool pool, final AccessChanges changes) {
        this.pool = pool;
        this.kept = changes.cache(Optional::isPresent);
    }

    /** The key's owner and scopes, kept from an earlier request while nothing changed them. */
    public Future<Optional<Principal>> findActive(final String secureValue) {
        return kept.get(secureValue, () -> lookUp(secureValue));
    }

    /** The key's owner and scopes as the database says now. */
    public Future<Optional<Principal>> lookUp(final String secureValue) {
        return pool.preparedQuery(FIND_ACTIVE).execute(Tuple.of(secureValue)).map(rows -> {
            if (rows.size() == 0) {
                return Optional.empty();
            }
            final Row row = rows.iterator().next();
            final Long[] scoped = row.getArrayOfLongs("scoped_projects");
            return Optional.of(new Principal(
                    row.getLong("user_id"),
                    row.getString("id"),
                    Set.of(row.getArrayOfStrings("scopes")),
                    Optional.ofNullable(scoped).map(a -> List.copyOf(Arrays.asList(a)))));
        });
    }
}
