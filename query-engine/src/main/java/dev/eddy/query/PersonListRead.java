package dev.eddy.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonSerdes;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * One page of a project's persons, newest first: each instance sends the matching persons that could be on the page
 * (the first {@code offset + limit} of its own) and how many matched; the partials merge into the page.
 */
public final class PersonListRead implements PartitionRead<PersonQuery.Page> {
    private static final int PARTIAL_VERSION = 1;
    private static final StringSerializer KEYS = new StringSerializer();
    private static final Serde<PersonState> PERSON = PersonSerdes.personState();

    /** The request that asks for {@code query}'s page of the project's persons. */
    public static ObjectNode request(final long projectId, final PersonQuery query) {
        final ObjectNode request = Json.mapper().createObjectNode();
        request.put("project_id", projectId);
        query.search().ifPresent(s -> request.put("search", s));
        request.put("limit", query.limit());
        request.put("offset", query.offset());
        query.cohort().ifPresent(c -> request.set("cohort", c));
        return request;
    }

    @Override
    public String store() {
        return StoreNames.PERSONS;
    }

    @Override
    public PersonQuery.Page read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
        final long projectId = request.path("project_id").asLong();
        final PersonQuery query = query(request);
        final List<PersonState> all = new ArrayList<>();
        for (final int p : partitions) {
            check.run();
            final ReadOnlyKeyValueStore<String, PersonState> persons = Stores.partition(app, StoreNames.PERSONS, p);
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
                request.path("limit").asInt(), request.path("offset").asInt(), Optional.ofNullable(request.get("cohort")));
    }
}
