package dev.eddy.gateway.persons;

import dev.eddy.gateway.streams.LocalStores;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonState;
import dev.eddy.stores.StoreNames;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Persons and groups as the topology's stores hold them, by interactive query: persons from the {@code persons}
 * store (distinct ids through {@code distinct-ids}), groups from the global {@code groups-global} store.
 */
public final class PersonsService {
    private static final StringSerializer KEYS = new StringSerializer();

    private final LocalStores stores;

    public PersonsService(final LocalStores stores) {
        this.stores = stores;
    }

    /** One page of the project's persons, newest first. */
    public Future<PersonQuery.Page> list(final long projectId, final PersonQuery query) {
        return stores.query(StoreNames.PERSONS, QueryableStoreTypes.<String, PersonState>keyValueStore(), false,
                (ReadOnlyKeyValueStore<String, PersonState> persons) -> {
                    final List<PersonState> all = new ArrayList<>();
                    try (KeyValueIterator<String, PersonState> it = persons.prefixScan(projectId + ":", KEYS)) {
                        it.forEachRemaining(kv -> all.add(kv.value));
                    }
                    return query.run(all);
                });
    }

    /** The person a distinct id resolves to, if any: both stores read in one blocking call. */
    public Future<Optional<PersonState>> byDistinctId(final long projectId, final String distinctId) {
        return stores.readAll(java.util.List.of(StoreNames.DISTINCT_IDS, StoreNames.PERSONS), reader -> {
            final String person = reader.store(StoreNames.DISTINCT_IDS, QueryableStoreTypes.<String, String>keyValueStore())
                    .get(projectId + ":" + distinctId);
            if (person == null) {
                return Optional.<PersonState>empty();
            }
            return follow(reader.store(StoreNames.PERSONS, QueryableStoreTypes.<String, PersonState>keyValueStore()), projectId, person);
        });
    }

    /** The person with this uuid; empty when there is none or it was merged away. */
    public Future<Optional<PersonState>> byUuid(final long projectId, final String uuid) {
        return stores.query(StoreNames.PERSONS, QueryableStoreTypes.<String, PersonState>keyValueStore(), false,
                (ReadOnlyKeyValueStore<String, PersonState> persons) -> Optional.ofNullable(persons.get(projectId + ":" + uuid))
                        .filter(p -> p.mergedInto() == null));
    }

    /** Follows merged-away persons to the one that holds them now (a distinct id may not be remapped yet). */
    private static Optional<PersonState> follow(final ReadOnlyKeyValueStore<String, PersonState> persons, final long projectId,
                                                final String uuid) {
        PersonState person = persons.get(projectId + ":" + uuid);
        // Merges form a forest: the chain ends; the bound only guards against a corrupt store.
        for (int hops = 0; person != null && person.mergedInto() != null && hops < 64; hops++) {
            person = persons.get(projectId + ":" + person.mergedInto());
        }
        return Optional.ofNullable(person).filter(p -> p.mergedInto() == null);
    }

    public Future<Optional<GroupState>> group(final long projectId, final int groupTypeIndex, final String groupKey) {
        return stores.query(StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.<String, GroupState>keyValueStore(), true,
                (ReadOnlyKeyValueStore<String, GroupState> groups) ->
                        Optional.ofNullable(groups.get(GroupState.key(projectId, groupTypeIndex, groupKey))));
    }
}
