package dev.eddy.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Binary;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyEventKey;
import java.util.List;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A project's change version ({@code project_id}): the sum, over every partition, of its change counter
 * ({@link HourlyEventKey#changes}), which the topology increments whenever an event enters or leaves one of the
 * project's timelines. Counters only grow, so the version differs from an earlier reading exactly when some event of
 * the project came, moved or went since. One point read a partition.
 */
public final class ChangeCountRead implements PartitionRead<Long> {
    private static final int PARTIAL_VERSION = 1;

    @Override
    public String store() {
        return StoreNames.HOURLY_COUNTS;
    }

    @Override
    public Long read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
        final HourlyEventKey key = HourlyEventKey.changes(request.path("project_id").asLong());
        long sum = 0;
        for (final int p : partitions) {
            check.run();
            final ReadOnlyKeyValueStore<HourlyEventKey, Long> counts = Stores.partition(app, StoreNames.HOURLY_COUNTS, p);
            final Long changes = counts.get(key);
            sum += changes == null ? 0 : changes;
        }
        return sum;
    }

    @Override
    public byte[] encode(final Long partial) {
        return Binary.write(PARTIAL_VERSION, out -> out.writeLong(partial));
    }

    @Override
    public Long decode(final JsonNode request, final byte[] bytes) {
        return Binary.read(bytes, PARTIAL_VERSION, "a change count", in -> in.readLong());
    }

    @Override
    public Long merge(final Long into, final Long other) {
        return into + other;
    }
}
