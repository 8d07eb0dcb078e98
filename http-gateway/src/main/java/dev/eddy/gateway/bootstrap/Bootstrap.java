package dev.eddy.gateway.bootstrap;

import dev.eddy.config.BootstrapConfig;
import dev.eddy.gateway.auth.ApiKeys;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * First-start set-up: an organization, project 1 with its project API key, and a user with an all-scopes
 * personal API key. Idempotent, and safe when several gateways start at once (advisory lock). On later
 * starts it applies configured keys: a configured project token replaces project 1's, a configured personal
 * key is added to the first user when its hash is not stored yet.
 */
public final class Bootstrap {
    private static final Logger LOG = LoggerFactory.getLogger(Bootstrap.class);
    /** Arbitrary constant naming the bootstrap's advisory lock. */
    private static final long LOCK_ID = 0x0edd_b007L;

    private Bootstrap() {
    }

    /**
     * What the start-up can tell its operator.
     *
     * @param projectId      project 1
     * @param projectToken   its project API key
     * @param personalApiKey the all-scopes personal key, when this start knows it in plain text
     *                       (just generated, or configured); stored keys are only hashes
     * @param keyCreated     whether this start stored that key (the first start, or a newly configured key)
     */
    public record Result(long projectId, String projectToken, Optional<String> personalApiKey, boolean keyCreated) {
    }

    public static Future<Result> run(final Pool pool, final BootstrapConfig config) {
        return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock($1)").execute(Tuple.of(LOCK_ID))
                .compose(locked -> conn.query("SELECT id FROM users ORDER BY id LIMIT 1").execute())
                .compose(users -> users.size() == 0
                        ? createEverything(conn, config)
                        : applyConfigured(conn, config, users.iterator().next().getLong("id"))));
    }

    private static Future<Result> createEverything(final SqlConnection conn, final BootstrapConfig config) {
        final UUID org = UUID.randomUUID();
        final String token = config.projectToken().orElseGet(ApiKeys::newProjectToken);
        final String personalKey = config.personalApiKey().orElseGet(ApiKeys::newPersonalKey);
        final UUID userUuid = UUID.randomUUID();
        return conn.preparedQuery("INSERT INTO organizations (id, name) VALUES ($1, $2)")
                .execute(Tuple.of(org, "Default organization"))
                .compose(v -> conn.preparedQuery("INSERT INTO projects (uuid, organization_id, name, api_token) "
                                + "VALUES ($1, $2, $3, $4) RETURNING id")
                        .execute(Tuple.of(UUID.randomUUID(), org, config.projectName(), token)))
                .compose(projects -> {
                    final long projectId = projects.iterator().next().getLong("id");
                    return conn.preparedQuery("INSERT INTO users (uuid, distinct_id, email, first_name, is_email_verified) "
                                    + "VALUES ($1, $2, $3, $4, true) RETURNING id")
                            .execute(Tuple.of(userUuid, userUuid.toString(), config.userEmail(), "Admin"))
                            .compose(users -> {
                                final long userId = users.iterator().next().getLong("id");
                                return conn.preparedQuery("INSERT INTO organization_memberships (organization_id, user_id, level) "
                                                + "VALUES ($1, $2, 15)")
                                        .execute(Tuple.of(org, userId))
                                        .compose(v -> insertPersonalKey(conn, userId, personalKey, "bootstrap"));
                            })
                            .map(v -> {
                                LOG.info("created organization, project {} and the first user", projectId);
                                return new Result(projectId, token, Optional.of(personalKey), true);
                            });
                });
    }

    private static Future<Result> applyConfigured(final SqlConnection conn, final BootstrapConfig config, final long firstUser) {
        final Future<Void> token = config.projectToken()
                .map(t -> conn.preparedQuery("UPDATE projects SET api_token = $1, updated_at = now() "
                                + "WHERE id = (SELECT min(id) FROM projects) AND api_token <> $1")
                        .execute(Tuple.of(t)).<Void>mapEmpty())
                .orElse(Future.succeededFuture());
        final Future<Boolean> created = token.compose(v -> config.personalApiKey()
                .map(k -> conn.preparedQuery("SELECT 1 FROM personal_api_keys WHERE secure_value = $1")
                        .execute(Tuple.of(ApiKeys.hash(k)))
                        .compose(found -> found.size() > 0
                                ? Future.succeededFuture(false)
                                : insertPersonalKey(conn, firstUser, k, "bootstrap (configured)").map(true)))
                .orElse(Future.succeededFuture(false)));
        return created.compose(keyCreated -> conn.query("SELECT id, api_token FROM projects ORDER BY id LIMIT 1").execute()
                .map(rows -> {
                    final Row project = rows.iterator().next();
                    return new Result(project.getLong("id"), project.getString("api_token"), config.personalApiKey(), keyCreated);
                }));
    }

    private static Future<Void> insertPersonalKey(final SqlConnection conn, final long userId, final String key,
                                                  final String label) {
        return conn.preparedQuery("INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes) "
                        + "VALUES ($1, $2, $3, $4, $5, $6)")
                .execute(Tuple.of(UUID.randomUUID().toString(), userId, label, ApiKeys.hash(key), ApiKeys.mask(key),
                        new String[] {"*"}))
                .mapEmpty();
    }
}
