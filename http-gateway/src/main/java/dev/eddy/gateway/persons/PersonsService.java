package dev.eddy.gateway.persons;

import dev.eddy.gateway.streams.KeyReads;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.serde.Binary;
import dev.eddy.gateway.trends.QueryControl;
import dev.eddy.topology.StreamsApp;
import com.fasterxml.jackson.databind.JsonNode;
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
 * store (distinct ids through {@code distinct-ids}), each key read on the instance that owns it ({@link KeyReads});
 * lists scan this instance's partitions; groups come from the global {@code groups-global} store.
 */
public final class PersonsService {
    private static final StringSerializer KEYS = new StringSerializer();

    private static final int MAX_MERGE_HOPS = 64;

    private static final String LIST = "persons";
    /** How long listing persons may take across the instances, rebalances included. */
    private static final java.time.Duration LIST_TIMEOUT = java.time.Duration.ofSeconds(30);

    private final Scatter scatter;
    private final KeyReads reads;

    /**
     * Registers the persons list's partial with {@code scatter} (one service per scatter).
     */
    public PersonsService(final Scatter scatter, final KeyReads reads) {
        this.scatter = scatter;
        this.reads = reads;
        scatter.register(LIST, new ListPart());
    }

    /**
     * One page of the project's persons, newest first, from every instance: each sends the matching persons that
     * could be on the page (the first {@code offset + limit} of its own) and how many matched.
     */
    public Future<PersonQuery.Page> list(final long projectId, final PersonQuery query) {
        final com.fasterxml.jackson.databind.node.ObjectNode request = dev.eddy.serde.Json.mapper().createObjectNode();
        request.put("project_id", projectId);
        query.search().ifPresent(s -> request.put("search", s));
        request.put("limit", query.limit());
        request.put("offset", query.offset());
        return scatter.<PersonQuery.Page>gather(LIST, request, QueryControl.within(LIST_TIMEOUT)).map(query::page);
    }

    /** The persons list as a scatter partial: an instance's first {@code offset + limit} matches and its count. */
    private static final class ListPart implements Scatter.Part<PersonQuery.Page> {
        private static final int PARTIAL_VERSION = 1;
        private static final org.apache.kafka.common.serialization.Serde<PersonState> PERSON = dev.eddy.persons.PersonSerdes.personState();

        @Override
        public String store() {
            return StoreNames.PERSONS;
        }

        @Override
        public PersonQuery.Page read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final QueryControl control) {
            final long projectId = request.path("project_id").asLong();
            final PersonQuery query = query(request);
            final List<PersonState> all = new ArrayList<>();
            for (final int p : partitions) {
                control.check();
                final ReadOnlyKeyValueStore<String, PersonState> persons = Scatter.partition(app, StoreNames.PERSONS, p);
                try (KeyValueIterator<String, PersonState> it = persons.prefixScan(projectId + ":", KEYS)) {
                    it.forEachRemaining(kv -> all.add(kv.value));
                }
            }
            return query.top(all);
        }

        /** {@code [count: 8][persons: 4]([length: 4][the person as its store writes it])*}. */
        @Override
        public byte[] encode(final PersonQuery.Page partial) {
            return Binary.write(PARTIAL_VERSION, out -> {
                out.writeLong(partial.count());
                out.writeInt(partial.results().size());
                for (final PersonState person : partial.results()) {
                    final byte[] bytes = PERSON.serializer().serialize(StoreNames.PERSONS, person);
                    out.writeInt(bytes.length);
                    out.write(bytes);
                }
            });
        }

        @Override
        public PersonQuery.Page decode(final JsonNode request, final byte[] bytes) {
            return Binary.read(bytes, PARTIAL_VERSION, "a persons partial", in -> {
                final long count = in.readLong();
                final int size = in.readInt();
                final List<PersonState> persons = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    final byte[] person = new byte[in.readInt()];
                    in.readFully(person);
                    persons.add(PERSON.deserializer().deserialize(StoreNames.PERSONS, person));
                }
                return new PersonQuery.Page(count, persons);
            });
        }

        @Override
        public PersonQuery.Page merge(final PersonQuery.Page into, final PersonQuery.Page other) {
            return PersonQuery.merge(into, other);
        }

        private static PersonQuery query(final JsonNode request) {
            return new PersonQuery(request.hasNonNull("search") ? Optional.of(request.get("search").asText()) : Optional.empty(),
                    request.path("limit").asInt(), request.path("offset").asInt());
        }
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
