package dev.eddy.gateway.flags;

import dev.eddy.persons.PersonIds;
import dev.eddy.persons.PersonState;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * PostHog's experience continuity ({@code ensure_experience_continuity}): a flag with it is hashed, for a person, with
 * the id the person had when they first asked with a {@code $anon_distinct_id}, so a user who identifies keeps the
 * rollout and variant they saw while anonymous. The first id written for a (person, flag) stays; later requests,
 * with or without {@code $anon_distinct_id}, read it.
 *
 * <p>Keys follow merges, as PostHog moves them to the surviving person (keeping the survivor's own where both have
 * one). Every person Eddy creates has the uuid of one of its distinct ids ({@code uuidv5(project:distinct_id)}), and a
 * merge hands all of the merged-away person's distinct ids to the survivor, so the uuids of a person's distinct ids
 * name every person it absorbed: its keys are the rows under any of them, its own uuid's first, then the earliest
 * written. No row is ever rewritten, so a merge costs PostgreSQL nothing and cannot race a /decide.
 */
public final class HashKeyOverrides {
    /**
     * Reads the rows of both persons' uuids ({@code $2}, with {@code $3} saying whose: 0 the request's person, 1 the
     * anonymous id's), and writes {@code $5} under each person's own uuid ({@code $6}, {@code $7}) for the flags
     * neither of its uuids has a row for. The CTE's insert is invisible to the same statement's read, so its returned
     * rows are added.
     */
    private static final String WRITE_AND_READ = """
            WITH candidate AS (
                SELECT uuid, owner FROM unnest($2::uuid[], $3::int[]) AS c(uuid, owner)),
            existing AS (
                SELECT o.person_uuid, o.feature_flag_key, o.hash_key, o.created_at, c.owner
                  FROM feature_flag_hash_key_overrides o JOIN candidate c ON c.uuid = o.person_uuid
                 WHERE o.project_id = $1 AND o.feature_flag_key = ANY($4::text[])),
            written AS (
                INSERT INTO feature_flag_hash_key_overrides (project_id, person_uuid, feature_flag_key, hash_key)
                SELECT $1, p.uuid, f.flag, $5 FROM unnest($6::uuid[], $7::int[]) AS p(uuid, owner)
                 CROSS JOIN unnest($4::text[]) AS f(flag)
                 WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.owner = p.owner AND e.feature_flag_key = f.flag)
                ON CONFLICT DO NOTHING
                RETURNING person_uuid, feature_flag_key, hash_key, created_at)
            SELECT person_uuid, feature_flag_key, hash_key, created_at FROM existing
            UNION ALL
            SELECT person_uuid, feature_flag_key, hash_key, created_at FROM written
            """;
    private static final String READ = """
            SELECT person_uuid, feature_flag_key, hash_key, created_at FROM feature_flag_hash_key_overrides
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
     * @param person         the person of the request's distinct id, if it has one
     * @param anonPerson     the person of its {@code $anon_distinct_id}, if it has one
     * @param anonDistinctId the request's {@code $anon_distinct_id}, if given: written as the hash key
     */
    public Future<Map<String, String>> resolve(final long projectId, final Optional<PersonState> person,
                                               final Optional<PersonState> anonPerson, final Optional<String> anonDistinctId,
                                               final List<String> flags) {
        final List<PersonState> owners = new ArrayList<>(2);
        person.ifPresent(owners::add);
        anonPerson.filter(anon -> person.map(p -> !p.uuid().equals(anon.uuid())).orElse(true)).ifPresent(owners::add);
        if (owners.isEmpty()) {
            return Future.succeededFuture(Map.of());
        }
        // Whose each candidate uuid is: 0 the first owner, 1 the second.
        final Map<UUID, Integer> candidates = new LinkedHashMap<>();
        for (int owner = owners.size() - 1; owner >= 0; owner--) {
            for (final UUID uuid : uuids(projectId, owners.get(owner))) {
                candidates.put(uuid, owner);
            }
        }
        final String[] flagArray = flags.toArray(String[]::new);
        final Future<RowSet<Row>> rows = anonDistinctId.isPresent()
                ? pool.preparedQuery(WRITE_AND_READ).execute(Tuple.of(projectId, candidates.keySet().toArray(UUID[]::new),
                        candidates.values().toArray(Integer[]::new), flagArray, anonDistinctId.get(),
                        owners.stream().map(o -> UUID.fromString(o.uuid())).toArray(UUID[]::new),
                        java.util.stream.IntStream.range(0, owners.size()).boxed().toArray(Integer[]::new)))
                : pool.preparedQuery(READ).execute(Tuple.of(projectId, candidates.keySet().toArray(UUID[]::new), flagArray));
        return rows.timeout(timeout.toMillis(), TimeUnit.MILLISECONDS).map(found -> {
            final Map<String, Key> best = new HashMap<>();
            for (final Row row : found) {
                final UUID uuid = row.getUUID("person_uuid");
                final int owner = candidates.get(uuid);
                final Key key = new Key(owner, !uuid.toString().equals(owners.get(owner).uuid()),
                        row.getOffsetDateTime("created_at"), uuid, row.getString("hash_key"));
                best.merge(row.getString("feature_flag_key"), key, (a, b) -> a.compareTo(b) <= 0 ? a : b);
            }
            final Map<String, String> keys = new HashMap<>();
            best.forEach((flag, key) -> keys.put(flag, key.hashKey()));
            return keys;
        });
    }

    /** Which row decides a flag: the request's person's over the anonymous one's, own uuid first, then the oldest. */
    private record Key(int owner, boolean absorbed, OffsetDateTime createdAt, UUID uuid, String hashKey)
            implements Comparable<Key> {
        private static final Comparator<Key> ORDER = Comparator.comparingInt(Key::owner)
                .thenComparing(Key::absorbed).thenComparing(Key::createdAt).thenComparing(Key::uuid);

        @Override
        public int compareTo(final Key other) {
            return ORDER.compare(this, other);
        }
    }

    /** The person's own uuid and those of the persons it absorbed (its distinct ids' uuids). */
    private static Set<UUID> uuids(final long projectId, final PersonState person) {
        final Set<UUID> uuids = new LinkedHashSet<>();
        uuids.add(UUID.fromString(person.uuid()));
        for (final String distinctId : person.distinctIds()) {
            uuids.add(UUID.fromString(PersonIds.personUuid(projectId, distinctId)));
        }
        return uuids;
    }
}
