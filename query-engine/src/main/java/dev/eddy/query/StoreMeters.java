package dev.eddy.query;

import dev.eddy.stores.StoreNames;
import dev.eddy.topology.BoundedRocksDbMemory;
import dev.eddy.topology.StreamsApp;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import java.util.List;

/**
 * This instance's share of the work, for operators comparing instances: Kafka Streams' own client metrics,
 * {@code eddy_streams_running} (1 while RUNNING), {@code eddy_streams_lag_records} (input records not yet read), {@code eddy_streams_rebalances_total},
 * {@code eddy_streams_restored_records_total}, {@code eddy_store_entries{store}} (RocksDB's estimate of the keys in
 * the store's partitions active here) and, with {@code streams.rocksdb-memory}, {@code eddy_rocksdb_memory_used_bytes}
 * and {@code eddy_rocksdb_memory_budget_bytes} (the one budget every store shares).
 */
public final class StoreMeters {
    /** The partitioned key-value stores worth watching; window stores and the small metadata stores are left out. */
    private static final List<String> STORES = List.of(StoreNames.DISTINCT_IDS, StoreNames.PERSONS, StoreNames.GROUPS,
            StoreNames.EVENT_TIMELINES, StoreNames.HOURLY_COUNTS, StoreNames.UNIQUE_MARKERS);

    private StoreMeters() {
    }

    /** Binds the meters of {@code app} to {@code registry}; close what is returned before the instance. */
    public static AutoCloseable bind(final StreamsApp app, final MeterRegistry registry) {
        final KafkaStreamsMetrics client = new KafkaStreamsMetrics(app.streams());
        client.bindTo(registry);
        Gauge.builder("eddy.streams.running", app, a -> "RUNNING".equals(a.stateName()) ? 1 : 0)
                .description("1 while this instance's topology is RUNNING (its stores restored, its reads answered), else 0").register(registry);
        Gauge.builder("eddy.streams.lag", app, StreamsApp::consumerLag).baseUnit("records")
                .description("Input records this instance has yet to read on its assigned partitions").register(registry);
        FunctionCounter.builder("eddy.streams.rebalances", app, StreamsApp::rebalances)
                .description("Rebalances this instance went through").register(registry);
        FunctionCounter.builder("eddy.streams.restored.records", app, StreamsApp::restoredRecords)
                .description("Changelog records replayed into this instance's stores (a restart with its state "
                        + "intact replays only what it had not stored)").register(registry);
        for (final String store : STORES) {
            Gauge.builder("eddy.store.entries", app, a -> Stores.approximateEntries(a, store)).tag("store", store)
                    .description("Estimated keys in this instance's active partitions of the store").register(registry);
        }
        app.rocksdbMemoryBudget().ifPresent(budget -> {
            Gauge.builder("eddy.rocksdb.memory.used", () -> BoundedRocksDbMemory.usedBytes(budget)).baseUnit("bytes")
                    .description("Bytes of the stores' shared RocksDB budget in use: block cache and memtables").register(registry);
            Gauge.builder("eddy.rocksdb.memory.budget", () -> budget).baseUnit("bytes")
                    .description("The stores' shared RocksDB budget (streams.rocksdb-memory)").register(registry);
        });
        return client;
    }
}
