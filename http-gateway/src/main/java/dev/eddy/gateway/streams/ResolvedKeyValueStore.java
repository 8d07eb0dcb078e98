package dev.eddy.gateway.streams;

import java.util.List;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.internals.StateStoreProvider;

/**
 * Kafka Streams' key-value store type for interactive queries of one partition, resolved to that task's store when
 * the store is asked for instead of at every read. The store {@link QueryableStoreTypes#keyValueStore()} hands out
 * looks its task's store up again on every {@code get} and {@code range} (walking every task of the instance and
 * building sets of them); a trend reading a partition's newest rows one key at a time spent a third of its time
 * there. A read that outlives its task (a rebalance) fails on the closed store as it would through the composite.
 *
 * <p>Only for stores that are plain key-value stores (Eddy's are: no timestamped store, no DSL materialization):
 * Kafka Streams puts its facade over a timestamped store only for its own store types.
 */
final class ResolvedKeyValueStore<K, V> implements QueryableStoreType<ReadOnlyKeyValueStore<K, V>> {
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
