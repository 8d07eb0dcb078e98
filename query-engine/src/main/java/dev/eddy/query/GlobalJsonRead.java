package dev.eddy.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.groups.GroupTypes;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A read of a global store (every instance holds it whole) into JSON, done on one instance: there is nothing to merge.
 *
 * @param <K> the store's keys
 * @param <V> the store's values
 */
public final class GlobalJsonRead<K, V> implements PartitionRead<JsonNode> {
    private static final StringSerializer KEYS = new StringSerializer();

    private final String store;
    private final BiFunction<ReadOnlyKeyValueStore<K, V>, JsonNode, JsonNode> read;

    private GlobalJsonRead(final String store, final BiFunction<ReadOnlyKeyValueStore<K, V>, JsonNode, JsonNode> read) {
        this.store = store;
        this.read = read;
    }

    /**
     * A project's flag definitions ({@link FlagDefinition} JSON, as the topology keeps them), as an array; the request
     * names the project ({@code project_id}).
     */
    public static PartitionRead<JsonNode> flagDefinitions() {
        return new GlobalJsonRead<String, JsonNode>(StoreNames.FLAG_DEFINITIONS, (definitions, request) -> {
            final ArrayNode found = Json.mapper().createArrayNode();
            try (KeyValueIterator<String, JsonNode> it = definitions.prefixScan(request.path("project_id").asLong() + ":", KEYS)) {
                it.forEachRemaining(kv -> found.add(kv.value));
            }
            return found;
        });
    }

    /** A project's group types ({@code project_id}): an object from each type's index to its name. */
    public static PartitionRead<JsonNode> groupTypes() {
        return new GlobalJsonRead<String, GroupTypes>(StoreNames.GROUP_TYPES, (types, request) -> {
            final ObjectNode byIndex = Json.mapper().createObjectNode();
            Optional.ofNullable(types.get(Long.toString(request.path("project_id").asLong())))
                    .ifPresent(t -> t.types().forEach((name, index) -> byIndex.put(Integer.toString(index), name)));
            return byIndex;
        });
    }

    @Override
    public String store() {
        return store;
    }

    @Override
    public boolean global() {
        return true;
    }

    @Override
    public JsonNode read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
        return read.apply(Stores.global(app, store), request);
    }

    @Override
    public byte[] encode(final JsonNode partial) {
        try {
            return Json.mapper().writeValueAsBytes(partial);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public JsonNode decode(final JsonNode request, final byte[] bytes) {
        try {
            return Json.mapper().readTree(bytes);
        } catch (final IOException e) {
            throw new UncheckedIOException("an unreadable answer of a global read", e);
        }
    }

    @Override
    public JsonNode merge(final JsonNode into, final JsonNode other) {
        // Read on one instance only: there is nothing to merge.
        return into;
    }
}
