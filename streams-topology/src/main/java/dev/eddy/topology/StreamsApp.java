package dev.eddy.topology;

import dev.eddy.config.EddyConfig;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one Kafka Streams instance of Eddy's topology: creates the topics, starts the streams client with
 * a state listener and an uncaught-exception handler, exposes readiness and store access for interactive
 * queries, and closes leaving the group so a restart is queryable at once.
 */
public final class StreamsApp implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StreamsApp.class);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final KafkaStreams streams;
    private final AtomicReference<KafkaStreams.State> state = new AtomicReference<>(KafkaStreams.State.CREATED);
    private final StreamsRouting routing;
    /** Store handles by store, partition and type, each with the {@link #storeGeneration} it was resolved in. */
    private final Map<StoreKey, Resolved> resolvedStores = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * Moves on at every state change and at every start and end of a store's restoration (a task whose state was
     * wiped, say after a corrupted transaction, restores while the instance stays RUNNING): a handle is used only in
     * the generation it was resolved in.
     */
    private final AtomicLong storeGeneration = new AtomicLong();
    /** Store partitions restoring now: while any is, handles are resolved at every read, as Kafka Streams checks them. */
    private final java.util.concurrent.atomic.AtomicInteger restoring = new java.util.concurrent.atomic.AtomicInteger();
    private final DeadLetters deadLetters;
    private final AtomicLong rebalances = new AtomicLong();
    /**
     * Changelog records replayed into this instance's stores (global ones included), in all: a store without a
     * committed offset replays its whole changelog.
     */
    private final AtomicLong restoredRecords = new AtomicLong();
    /** {@link #restoredRecords} when the last RUNNING was reported, and store partitions restored since. */
    private long restoredAtLastReport;
    private final AtomicLong restoredPartitionsSinceRunning = new AtomicLong();
    /** Why this instance stopped processing for good (a state directory failure), once it has. */
    private final AtomicReference<String> failure = new AtomicReference<>();

    /** {@code streams.standby-replicas}: warm copies wanted of each task's stores. */
    private final int standbyReplicas;
    /** {@code streams.rocksdb-memory} in bytes; 0 for RocksDB's defaults per store. */
    private final long rocksdbMemoryBytes;
    /** The group's instance count last reported by {@link #reportStandbyCopies}, -1 before the first. */
    private int reportedInstances = -1;

    private StreamsApp(final KafkaStreams streams, final Map<String, String> keyTopics, final int partitions,
                       final int standbyReplicas, final long rocksdbMemoryBytes, final DeadLetters deadLetters) {
        this.streams = streams;
        this.deadLetters = deadLetters;
        this.routing = new StreamsRouting(streams, keyTopics, partitions, this::isQueryable);
        this.standbyReplicas = standbyReplicas;
        this.rocksdbMemoryBytes = rocksdbMemoryBytes;
    }

    /** The one RocksDB memory budget of the process's stores ({@code streams.rocksdb-memory}), if it has one. */
    public java.util.OptionalLong rocksdbMemoryBudget() {
        return rocksdbMemoryBytes > 0 ? java.util.OptionalLong.of(rocksdbMemoryBytes) : java.util.OptionalLong.empty();
    }

    /** A store handle and the {@link #storeGeneration} it was resolved in. */
    private record Resolved(long generation, Object store) {
    }

    /** Which handle: a store's partition ({@link #ALL_PARTITIONS} for every partition, or a global store), by type. */
    private record StoreKey(String store, int partition, Class<?> type) {
        static final int ALL_PARTITIONS = -1;
    }

    /**
     * Starts the instance; returns before it is RUNNING (see {@link #isRunning}). The topics must exist
     * ({@link TopicProvisioner}).
     *
     * @param advertised {@code host:port} of this instance's internal routes
     */
    public static StreamsApp start(final EddyConfig config, final String advertised) {
        final java.nio.file.Path appStateDir = config.streams().stateDir().toAbsolutePath().resolve(config.applicationId());
        // Checked first: Kafka Streams would fail on it later, in a thread, with a less clear message.
        StateDirFailure.requireWritable(appStateDir);
        final EddyTopics topics = EddyTopics.of(config.kafka());
        final DeadLetters deadLetters = DeadLetters.producing(config.kafka(), topics.dlq().name());
        final org.apache.kafka.streams.Topology topology = EddyTopology.build(topics, config.streams(), deadLetters);
        final KafkaStreams streams = new KafkaStreams(topology, StreamsProperties.of(config, advertised));
        final String fingerprint = TopologyFingerprint.of(topology.describe());
        if (TopologyFingerprint.stale(appStateDir, fingerprint)) {
            LOG.warn("the local state in {} was written by another topology (an upgrade): wiping it; the stores are restored "
                    + "from their changelog topics", appStateDir);
            streams.cleanUp();
        }
        TopologyFingerprint.record(appStateDir, fingerprint);
        final StreamsApp app = new StreamsApp(streams, EddyTopology.keyTopics(topics), config.kafka().partitions(),
                config.streams().standbyReplicas(), config.streams().rocksdbMemoryBytes(), deadLetters);
        streams.setStateListener((newState, oldState) -> {
            app.state.set(newState);
            if (newState == KafkaStreams.State.REBALANCING && oldState != KafkaStreams.State.REBALANCING) {
                app.rebalances.incrementAndGet();
            }
            // Any rebalance passes through a state change: the next keyed query rebuilds the routing.
            app.routing.invalidate();
            app.storeGeneration.incrementAndGet();
            app.resolvedStores.clear();
            LOG.info("streams state {} -> {}", oldState, newState);
            if (newState == KafkaStreams.State.RUNNING) {
                app.reportRestores();
                app.reportStandbyCopies();
            }
        });
        streams.setGlobalStateRestoreListener(app.new RestoreCounter());
        streams.setUncaughtExceptionHandler(exception -> {
            final Optional<String> storage = StateDirFailure.reason(exception);
            if (storage.isPresent()) {
                app.failure.set("state directory " + appStateDir + ": " + storage.get());
                LOG.error("FATAL: the state directory {} failed ({}). This instance stops processing and reports not ready; "
                        + "no acknowledged event is lost (its unfinished transaction is aborted and the events wait in Kafka). "
                        + "Free space or fix the directory, then restart Eddy.", appStateDir, storage.get(), exception);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            }
            // Per-record failures already go to the dead-letter topic; what reaches here is an
            // infrastructure fault. A fresh thread resumes from the last committed transaction.
            LOG.error("stream thread failed; replacing it", exception);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        return app;
    }

    /** Counts what restoration replays, so a start that rebuilds its stores from scratch shows in logs and metrics. */
    private final class RestoreCounter implements StateRestoreListener {
        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long startingOffset,
                                   final long endingOffset) {
            restoring.incrementAndGet();
            storeGeneration.incrementAndGet();
            resolvedStores.clear();
            LOG.debug("restoring {} from {} offsets {}..{}", store, partition, startingOffset, endingOffset);
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEndOffset,
                                    final long restored) {
            restoredRecords.addAndGet(restored);
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long totalRestored) {
            restored();
            restoredPartitionsSinceRunning.incrementAndGet();
            LOG.debug("restored {} records of {} from {}", totalRestored, store, partition);
        }

        @Override
        public void onRestoreSuspended(final TopicPartition partition, final String store, final long totalRestored) {
            restored();
        }

        private void restored() {
            restoring.updateAndGet(n -> Math.max(0, n - 1));
            storeGeneration.incrementAndGet();
        }
    }

    private synchronized void reportRestores() {
        final long total = restoredRecords.get();
        final long records = total - restoredAtLastReport;
        restoredAtLastReport = total;
        final long stores = restoredPartitionsSinceRunning.getAndSet(0);
        if (records > 0) {
            LOG.info("restored {} changelog records into {} store partitions before running", records, stores);
        }
    }

    /** Changelog records replayed into this instance's stores since it started. */
    public long restoredRecords() {
        return restoredRecords.get();
    }

    /**
     * One line per assignment about standby copies, in place of Kafka Streams' warning per task: how many instances
     * the group has and how many standby partitions this one keeps. A lone instance is the usual local setup and is
     * said once, at INFO; a group too small for {@code streams.standby-replicas} is a WARN at every assignment.
     */
    private synchronized void reportStandbyCopies() {
        if (standbyReplicas == 0) {
            return;
        }
        final Collection<StreamsMetadata> clients;
        try {
            clients = streams.metadataForAllStreamsClients();
        } catch (final RuntimeException e) {
            return; // the state moved on; the next RUNNING reports
        }
        final int instances = clients.size();
        final int standbyTasks = streams.metadataForLocalThreads().stream().mapToInt(t -> t.standbyTasks().size()).sum();
        if (instances == 1) {
            if (reportedInstances != 1) {
                LOG.info("standby copies: this is the only streams instance, so its stores have none "
                        + "(streams.standby-replicas={}); they are placed as soon as another instance joins", standbyReplicas);
            }
        } else if (instances <= standbyReplicas) {
            LOG.warn("standby copies: streams.standby-replicas={} needs {} instances, the group has {}: each task has {} "
                    + "standby copies; this instance keeps {} standby tasks",
                    standbyReplicas, standbyReplicas + 1, instances, instances - 1, standbyTasks);
        } else {
            LOG.info("standby copies: {} instances, {} per task; this instance keeps {} standby tasks",
                    instances, standbyReplicas, standbyTasks);
        }
        reportedInstances = instances;
    }

    /** Why this instance stopped processing for good, if it has: its state directory failed. */
    public Optional<String> failure() {
        return Optional.ofNullable(failure.get());
    }

    public boolean isRunning() {
        return state.get() == KafkaStreams.State.RUNNING;
    }

    /**
     * Whether stores can be read: RUNNING, or REBALANCING (while partitions move, the ones that stay keep serving:
     * Kafka Streams hands out only stores of tasks that are running here, and refuses the others).
     */
    public boolean isQueryable() {
        final KafkaStreams.State current = state.get();
        return current == KafkaStreams.State.RUNNING || current == KafkaStreams.State.REBALANCING;
    }

    public KafkaStreams.State state() {
        return state.get();
    }

    /** The instance's state by Kafka Streams' name for it ({@code RUNNING}, {@code REBALANCING}, ...), as health reports it. */
    public String stateName() {
        return state.get().name();
    }

    /** How many times this instance entered a rebalance (its first assignment included). */
    public long rebalances() {
        return rebalances.get();
    }

    /**
     * Records this instance's consumer has yet to read on its assigned input partitions: the sum of the consumer's
     * {@code records-lag} per partition (0 before the first fetch).
     */
    public double consumerLag() {
        double lag = 0;
        for (final Map.Entry<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> m : streams.metrics().entrySet()) {
            final org.apache.kafka.common.MetricName name = m.getKey();
            if ("records-lag".equals(name.name()) && "consumer-fetch-manager-metrics".equals(name.group())
                    && name.tags().containsKey("partition") && !name.tags().getOrDefault("client-id", "").contains("restore")
                    && !name.tags().getOrDefault("client-id", "").contains("global")) {
                final Object value = m.getValue().metricValue();
                if (value instanceof Number n && !Double.isNaN(n.doubleValue())) {
                    lag += n.doubleValue();
                }
            }
        }
        return lag;
    }

    /** The underlying client, for metrics binding. */
    public KafkaStreams streams() {
        return streams;
    }

    /**
     * A read-only view over every partition of {@code storeName} this instance hosts (or a global store); empty unless
     * {@link #isQueryable}. Resolved once per assignment ({@link #partitionStore}).
     */
    public <T> Optional<T> localStore(final String storeName, final QueryableStoreType<T> type) {
        if (!isQueryable()) {
            return Optional.empty();
        }
        return Optional.of(resolved(new StoreKey(storeName, StoreKey.ALL_PARTITIONS, type.getClass()),
                () -> streams.store(StoreQueryParameters.fromNameAndType(storeName, type))));
    }

    /**
     * The one partition of {@code storeName} that holds a key, if this instance hosts it as active: a point read
     * then touches one RocksDB instance instead of probing every local partition. Empty unless {@link #isQueryable}.
     *
     * <p>Resolved once per assignment: Kafka Streams' lookup takes its state updater's lock and walks every task of the
     * instance, which was half of a small query's time on the worker threads (a one-day count, measured with a
     * wall-clock profile) and runs for each partition of each store a query reads. A handle is used only in the
     * generation it was resolved in (any rebalance or state change starts a new one), and forgotten when a read
     * through it fails ({@link #forgetStores}).
     */
    public <T> Optional<T> partitionStore(final String storeName, final QueryableStoreType<T> type, final int partition) {
        if (!isQueryable()) {
            return Optional.empty();
        }
        return Optional.of(resolved(new StoreKey(storeName, partition, type.getClass()),
                () -> streams.store(StoreQueryParameters.fromNameAndType(storeName, type).withPartition(partition))));
    }

    /** A store handle resolved in this generation, or resolved now (kept unless a new generation began meanwhile). */
    @SuppressWarnings("unchecked")
    private <T> T resolved(final StoreKey key, final java.util.function.Supplier<T> resolve) {
        final long now = storeGeneration.get();
        if (restoring.get() > 0) {
            return resolve.get();
        }
        final Resolved found = resolvedStores.get(key);
        if (found != null && found.generation() == now) {
            return (T) found.store();
        }
        final T store = resolve.get();
        if (storeGeneration.get() == now && restoring.get() == 0) {
            resolvedStores.put(key, new Resolved(now, store));
        }
        return store;
    }

    /**
     * The generation stores are in now: it moves on whenever a partition's stores may have been replaced or rewound
     * (a state change, a restoration starting or ending), so what was read from them in an earlier one may be stale.
     */
    public long storeGeneration() {
        return storeGeneration.get();
    }

    /** Drops every resolved store handle (a read through one failed: its task may have closed). */
    public void forgetStores() {
        resolvedStores.clear();
    }

    /**
     * The partition of {@code storeName} holding a key as this instance keeps it, active or standby (a standby copy
     * may lag the active one by up to a commit interval, more while it catches up). Empty unless {@link #isQueryable}.
     */
    public <T> Optional<T> staleStore(final String storeName, final QueryableStoreType<T> type, final int partition) {
        if (!isQueryable()) {
            return Optional.empty();
        }
        return Optional.of(streams.store(StoreQueryParameters.fromNameAndType(storeName, type).withPartition(partition).enableStaleStores()));
    }

    /**
     * Where keys and partitions of the stores live, as of the current assignment: what keyed reads and whole-store
     * queries route by.
     */
    public StreamsRouting routing() {
        return routing;
    }

    @Override
    public void close() {
        final boolean clean = streams.close(CloseOptions
                .groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(CLOSE_TIMEOUT));
        if (!clean) {
            LOG.warn("streams did not close within {}", CLOSE_TIMEOUT);
        }
        deadLetters.close();
    }
}
