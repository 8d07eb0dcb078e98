package dev.eddy.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.topology.StreamsApp;
import java.util.List;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * One kind of read over every partition of a store, done as partials: each streams instance reads the partitions it
 * runs as active into a partial, partials travel between instances as bytes, and merge into the whole. The gateway
 * decides who reads which partitions and carries the partials; what a partial is and how it is read is this module's.
 *
 * @param <P> the partial
 */
public interface PartitionRead<P> {
    /** The partitioned store whose partitions are split among the instances, or the global store read. */
    String store();

    /** Whether {@link #store()} is a global store, read whole on one instance ({@code partitions} is then empty). */
    default boolean global() {
        return false;
    }

    /**
     * Reads {@code app}'s {@code partitions} (blocking; on a worker thread).
     *
     * @param check called between units of work; throws to stop the read (deadline passed, cancelled)
     * @throws PartitionUnavailable when a partition is not (or no longer) active here
     * @throws InvalidQuery         when the request asks what cannot be answered
     */
    P read(StreamsApp app, List<Integer> partitions, JsonNode request, Runnable check);

    byte[] encode(P partial);

    /** @throws InvalidQuery when the request asks what cannot be answered */
    P decode(JsonNode request, byte[] bytes);

    /** @throws InvalidQuery when the merged partial would be too large to hold */
    P merge(P into, P other);

    /**
     * {@link #read}, with Kafka Streams' own failure for a store that moved or is restoring (it may come from any
     * store call) reported as {@link PartitionUnavailable}, and the instance's resolved store handles dropped.
     */
    static <P> P readOn(final PartitionRead<P> read, final StreamsApp app, final List<Integer> partitions, final JsonNode request,
                        final Runnable check) {
        try {
            return read.read(app, partitions, request, check);
        } catch (final InvalidStateStoreException e) {
            throw Stores.moved(app, e);
        }
    }
}
