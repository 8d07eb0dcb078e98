package dev.eddy.gateway.persons;

import dev.eddy.gateway.streams.KeyReads;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonState;
import dev.eddy.query.PersonListRead;
import io.vertx.core.Future;
import java.util.Optional;

/**
 * Persons and groups as the topology's stores hold them, by interactive query: persons from the {@code persons}
 * store (distinct ids through {@code distinct-ids}), each key read on the instance that owns it ({@link KeyReads});
 * lists scan this instance's partitions; groups come from the global {@code groups-global} store.
 */
public final class PersonsService {
    private static final int MAX_MERGE_HOPS = 64;

    private static final String LIST = "persons";

    private final Scatter scatter;
    private final KeyReads reads;
    private final java.time.Duration listTimeout;

    /**
     * Registers the persons list's partial with {@code scatter} (one service per scatter).
     *
     * @param listTimeout how long listing persons may take across the instances, rebalances included
     */
    public PersonsService(final Scatter scatter, final KeyReads reads, final java.time.Duration listTimeout) {
        this.scatter = scatter;
        this.reads = reads;
        this.listTimeout = listTimeout;
        scatter.register(LIST, new PersonListRead());
    }

    /**
     * One page of the project's persons, newest first, from every instance: each sends the matching persons that
     * could be on the page (the first {@code offset + limit} of its own) and how many matched.
     */
    public Future<PersonQuery.Page> list(final long projectId, final PersonQuery query) {
        return scatter.<PersonQuery.Page>gather(LIST, PersonListRead.request(projectId, query), QueryControl.within(listTimeout))
                .map(query::page);
    }

    /**
     * The person a distinct id resolves to, if any. The distinct id is read where it lives (its partition follows
     * {@code token:distinct_id}, the ingest key), then the person where it lives.
     *
     * @param token the project's API token, part of the distinct id's routing key
     */
    public Future<Optional<PersonState>> byDistinctId(final long projectId, final String token, final String distinctId) {
        return reads.get(KeyReads.DISTINCT_IDS, token + ":" + distinctId, projectId + ":" + distinctId)
                .compose(uuid -> uuid.isEmpty() ? Future.succeededFuture(Optional.<PersonState>empty()) : follow(projectId, uuid.get(), 0));
    }

    /** The person with this uuid; empty when there is none or it was merged away. */
    public Future<Optional<PersonState>> byUuid(final long projectId, final String uuid) {
        final String key = projectId + ":" + uuid;
        return reads.get(KeyReads.PERSONS, key, key).map(p -> p.filter(person -> person.mergedInto() == null));
    }

    /**
     * Follows merged-away persons to the one that holds them now (a distinct id may not be remapped yet). Merges
     * form a forest, so the chain ends; the bound only guards against a corrupt store.
     */
    private Future<Optional<PersonState>> follow(final long projectId, final String uuid, final int hops) {
        final String key = projectId + ":" + uuid;
        return reads.get(KeyReads.PERSONS, key, key).compose(person -> {
            if (person.isPresent() && person.get().mergedInto() != null && hops < MAX_MERGE_HOPS) {
                return follow(projectId, person.get().mergedInto(), hops + 1);
            }
            return Future.succeededFuture(person.filter(p -> p.mergedInto() == null));
        });
    }

    public Future<Optional<GroupState>> group(final long projectId, final int groupTypeIndex, final String groupKey) {
        return reads.getGlobal(KeyReads.GROUPS, GroupState.key(projectId, groupTypeIndex, groupKey));
    }
}
