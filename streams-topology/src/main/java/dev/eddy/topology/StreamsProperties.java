package dev.eddy.topology;

import dev.eddy.config.EddyConfig;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler;

/** The Kafka Streams configuration of one instance, derived from Eddy's configuration. */
public final class StreamsProperties {
    /** Record cache shared by an instance's cached stores. */
    private static final long STORE_CACHE_BYTES = 32L * 1024 * 1024;

    private StreamsProperties() {
    }

    /**
     * @param config      Eddy's configuration
     * @param advertised  {@code host:port} other instances reach this one's /internal routes on
     */
    public static Properties of(final EddyConfig config, final String advertised) {
        final Properties p = new Properties();
        p.putAll(config.kafka().clientProperties());
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.kafka().bootstrap());
        p.put(StreamsConfig.STATE_DIR_CONFIG, config.streams().stateDir().toAbsolutePath().toString());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, config.streams().threadsFor(config.role(),
                Runtime.getRuntime().availableProcessors()));
        p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, advertised);
        // Every acked event is counted exactly once, even across crashes and rebalances.
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.streams().commitIntervalMs());
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, config.streams().standbyReplicas());
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) config.kafka().replicationFactor());
        // Changelogs and repartition topics as durable as Eddy's own topics.
        p.put(StreamsConfig.topicPrefix(org.apache.kafka.common.config.TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG),
                Integer.toString(config.kafka().minInSyncReplicas()));
        // Refuse to start with a generated internal topic or store name: a rename would orphan state.
        p.put(StreamsConfig.ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING_CONFIG, true);
        // A record that cannot be read or processed goes to the dead-letter topic; the topology keeps running.
        p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, config.kafka().topic(EddyTopics.DLQ));
        p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueProcessingExceptionHandler.class);
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
        // Nothing is ever skipped: a new application reads every event from the start of the topics.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // Stores that opt in cache their writes until the commit: a hot key (an hourly rollup cell, an active person)
        // reaches RocksDB and its changelog once per commit instead of once per event. Reads go through the cache.
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, STORE_CACHE_BYTES);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        if (config.streams().rocksdbMemoryBytes() > 0) {
            // One memory budget for every store of the process instead of a cache and memtables per store partition.
            p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedRocksDbMemory.class);
            p.put(BoundedRocksDbMemory.MEMORY_BYTES, config.streams().rocksdbMemoryBytes());
        }
        // A task reading several topics (identity: the ingest topics and identity.commands) processes whatever has
        // arrived instead of waiting for data on all of them: no processor depends on timestamp order across topics.
        p.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
        return p;
    }
}
