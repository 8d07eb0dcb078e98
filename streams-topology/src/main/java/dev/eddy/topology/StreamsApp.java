package dev.eddy.topology;

import dev.eddy.config.EddyConfig;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
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

    private StreamsApp(final KafkaStreams streams) {
        this.streams = streams;
    }

    /**
     * Starts the instance; returns before it is RUNNING (see {@link #isRunning}). The topics must exist
     * ({@link TopicProvisioner}).
     *
     * @param advertised {@code host:port} of this instance's internal routes
     */
    public static StreamsApp start(final EddyConfig config, final String advertised) {
        final EddyTopics topics = EddyTopics.of(config.kafka());
        final KafkaStreams streams = new KafkaStreams(EddyTopology.build(topics, config.streams()), StreamsProperties.of(config, advertised));
        final StreamsApp app = new StreamsApp(streams);
        streams.setStateListener((newState, oldState) -> {
            app.state.set(newState);
            LOG.info("streams state {} -> {}", oldState, newState);
        });
        streams.setUncaughtExceptionHandler(exception -> {
            // Per-record failures already go to the dead-letter topic; what reaches here is an
            // infrastructure fault. A fresh thread resumes from the last committed transaction.
            LOG.error("stream thread failed; replacing it", exception);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        return app;
    }

    public boolean isRunning() {
        return state.get() == KafkaStreams.State.RUNNING;
    }

    public KafkaStreams.State state() {
        return state.get();
    }

    /** The underlying client, for metrics binding. */
    public KafkaStreams streams() {
        return streams;
    }

    /** A read-only view over every partition of {@code storeName} this instance hosts; empty until RUNNING. */
    public <T> Optional<T> localStore(final String storeName, final QueryableStoreType<T> type) {
        if (!isRunning()) {
            return Optional.empty();
        }
        return Optional.of(streams.store(StoreQueryParameters.fromNameAndType(storeName, type)));
    }

    /** Every instance that hosts a partition of {@code storeName}, this one included. */
    public Collection<StreamsMetadata> instancesWith(final String storeName) {
        return streams.streamsMetadataForStore(storeName);
    }

    public <K> KeyQueryMetadata ownerOf(final String storeName, final K key, final Serializer<K> keySerializer) {
        return streams.queryMetadataForKey(storeName, key, keySerializer);
    }

    @Override
    public void close() {
        final boolean clean = streams.close(CloseOptions
                .groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(CLOSE_TIMEOUT));
        if (!clean) {
            LOG.warn("streams did not close within {}", CLOSE_TIMEOUT);
        }
    }
}
