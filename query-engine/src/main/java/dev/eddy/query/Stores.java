package dev.eddy.query;

import dev.eddy.topology.StreamsApp;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.internals.StateStoreProvider;

/** The engine's handles on an instance's key-value stores: one partition, or a global store. */
public final class Stores {
    private Stores() {
    }

    /**
     * One partition of a store, if this instance runs it as active.
     *
     * @throws PartitionUnavailable otherwise
     */
    public static <K, V> ReadOnlyKeyValueStore<K, V> partition(final StreamsApp app, final String store, final int partition) {
        return app.<ReadOnlyKeyValueStore<K, V>>partitionStore(store, new Resolved<>(), partition)
                .orElseThrow(() -> new PartitionUnavailable("partition " + partition + " of " + store + " is not queryable here"));
    }

    /**
     * A global store, which every instance holds whole.
     *
     * @throws PartitionUnavailable while this instance's streams are not queryable
     */
    public static <K, V> ReadOnlyKeyValueStore<K, V> global(final StreamsApp app, final String store) {
        return app.<ReadOnlyKeyValueStore<K, V>>localStore(store, new Resolved<>())
                .orElseThrow(() -> new PartitionUnavailable(store + " is not queryable here"));
    }

    /**
     * The value of {@code key} in this instance's active copy of a store's partition, or in a global store
     * ({@code partition} empty).
     *
     * @throws PartitionUnavailable when that copy is not queryable here (moved, restoring)
     */
    public static <V> Optional<V> get(final StreamsApp app, final String store, final OptionalInt partition, final String key) {
        return lookup(app, () -> partition.isPresent() ? Stores.<String, V>partition(app, store, partition.getAsInt())
                : Stores.<String, V>global(app, store), key);
    }

    /**
     * The value of {@code key} in this instance's copy of a store's partition, active or standby (a standby may lag
     * the active copy by a commit interval, more while it catches up).
     *
     * @throws PartitionUnavailable when no copy of it is queryable here
     */
    public static <V> Optional<V> getStale(final StreamsApp app, final String store, final int partition, final String key) {
        return lookup(app, () -> app.<ReadOnlyKeyValueStore<String, V>>staleStore(store, QueryableStoreTypes.keyValueStore(), partition)
                .orElseThrow(() -> new PartitionUnavailable("no copy of partition " + partition + " of " + store + " is queryable here")), key);
    }

    private static <V> Optional<V> lookup(final StreamsApp app, final Supplier<ReadOnlyKeyValueStore<String, V>> store, final String key) {
        try {
            return Optional.ofNullable(store.get().get(key));
        } catch (final InvalidStateStoreException e) {
            throw moved(app, e);
        }
    }

    /**
     * Kafka Streams' failure of a store that moved or is restoring, as the engine reports it; the instance's resolved
     * store handles are dropped (one of them may belong to a closed task).
     */
    static PartitionUnavailable moved(final StreamsApp app, final InvalidStateStoreException e) {
        app.forgetStores();
        return new PartitionUnavailable("a store partition moved or is restoring: " + e.getMessage(), e);
    }

    /**
     * Estimated keys in this instance's active partitions of a store (RocksDB's estimate); NaN while not queryable.
     */
    public static double approximateEntries(final StreamsApp app, final String store) {
        try {
            return app.localStore(store, QueryableStoreTypes.<Object, Object>keyValueStore()).map(s -> (double) s.approximateNumEntries())
                    .orElse(Double.NaN);
        } catch (final InvalidStateStoreException e) {
            return Double.NaN;
        }
    }

    /**
     * Kafka Streams' key-value store type for interactive queries of one partition, resolved to that task's store
     * when the store is asked for instead of at every read. The store {@link QueryableStoreTypes#keyValueStore()}
     * hands out looks its task's store up again on every {@code get} and {@code range} (walking every task of the
     * instance and building sets of them); a trend reading a partition's newest rows one key at a time spent a third
     * of its time there. A read that outlives its task (a rebalance) fails on the closed store as it would through
     * the composite.
     *
     * <p>Only for stores that are plain key-value stores (Eddy's are: no timestamped store, no DSL materialization):
     * Kafka Streams puts its facade over a timestamped store only for its own store types.
     */
    private static final class Resolved<K, V> implements QueryableStoreType<ReadOnlyKeyValueStore<K, V>> {
        private final QueryableStoreType<ReadOnlyKeyValueStore<K, V>> keyValue = QueryableStoreTypes.keyValueStore();

        @Override
        public boolean accepts(final StateStore stateStore) {
            return keyValue.accepts(stateStore);
        }

        @Override
        public ReadOnlyKeyValueStore<K, V> create(final StateStoreProvider provider, final String storeName) {
            final List<ReadOnlyKeyValueStore<K, V>> stores = provider.stores(storeName, this);
            return stores.size() == 1 ? stores.get(0) : keyValue.create(provider, storeName);
        }
    }
}
