package dev.eddy.gateway.flags;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * PostHog's experience continuity ({@code ensure_experience_continuity}): a flag with it is hashed, for a person, with
 * the id the person had when they first asked with a {@code $anon_distinct_id}, so a user who identifies keeps the
 * rollout and variant they saw while anonymous. The first id written for a (person, flag) stays; later requests,
 * with or without {@code $anon_distinct_id}, read it.
 */
public final class HashKeyOverrides {
    /**
     * Writes the anonymous id for every (person, flag) that has none, and reads what the persons have, in one
     * statement. The CTE's insert is invisible to the same statement's read, so its returned rows are added.
     */
    private static final String WRITE_AND_READ = """
            WITH written AS (
                INSERT INTO feature_flag_hash_key_overrides (project_id, person_uuid, feature_flag_key, hash_key)
                SELECT $1, person, flag, $4 FROM unnest($2::uuid[]) AS person CROSS JOIN unnest($3::text[]) AS flag
                ON CONFLICT DO NOTHING
                RETURNING person_uuid, feature_flag_key, hash_key)
            SELECT person_uuid, feature_flag_key, hash_key FROM written
            UNION ALL
            SELECT person_uuid, feature_flag_key, hash_key FROM feature_flag_hash_key_overrides
             WHERE project_id = $1 AND person_uuid = ANY($2::uuid[]) AND feature_flag_key = ANY($3::text[])
            """;
    private static final String READ = """
            SELECT person_uuid, feature_flag_key, hash_key FROM feature_flag_hash_key_overrides
             WHERE project_id = $1 AND person_uuid = ANY($2::uuid[]) AND feature_flag_key = ANY($3::text[])
            """;

    private final Pool pool;
    private final Duration timeout;

    /** @param timeout how long /decide waits for PostgreSQL before answering without the continuity flags */
    public HashKeyOverrides(final Pool pool, final Duration timeout) {
        this.pool = pool;
        this.timeout = timeout;
    }

    /**
     * The hash key of each of {@code flags} that has one for these persons, after writing {@code anonDistinctId} where
     * none was. Where the person of the distinct id and the person of the anonymous id (not yet merged) both have one,
     * the distinct id's person's wins, as in PostHog.
     *
     * @param person         the person of the request's distinct id
     * @param anonPerson     the person of its {@code $anon_distinct_id}, if it has one
     * @param anonDistinctId the request's {@code $anon_distinct_id}, if given: written as the hash key
     */
    public Future<Map<String, String>> resolve(final long projectId, final UUID person, final Optional<UUID> anonPerson,
                                               final Optional<String> anonDistinctId, final List<String> flags) {
        final List<UUID> persons = new ArrayList<>();
        anonPerson.filter(p -> !p.equals(person)).ifPresent(persons::add);
        persons.add(person);
        final UUID[] personArray = persons.toArray(UUID[]::new);
        final String[] flagArray = flags.toArray(String[]::new);
        final Future<RowSet<Row>> rows = anonDistinctId.isPresent()
                ? pool.preparedQuery(WRITE_AND_READ).execute(Tuple.of(projectId, personArray, flagArray, anonDistinctId.get()))
                : pool.preparedQuery(READ).execute(Tuple.of(projectId, personArray, flagArray));
        return rows.timeout(timeout.toMillis(), TimeUnit.MILLISECONDS).map(found -> {
            final Map<String, String> fromAnon = new HashMap<>();
            final Map<String, String> fromPerson = new HashMap<>();
            for (final Row row : found) {
                (person.equals(row.getUUID("person_uuid")) ? fromPerson : fromAnon)
                        .putIfAbsent(row.getString("feature_flag_key"), row.getString("hash_key"));
            }
            fromAnon.putAll(fromPerson);
            return fromAnon;
        });
    }
}
