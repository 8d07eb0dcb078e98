package dev.eddy.gateway.live;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.trends.QueryControl;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyEventKey;
import io.vertx.core.Future;
import java.util.List;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A project's change version: the sum, over every partition, of its change counter ({@link HourlyEventKey#changes}),
 * which the topology increments whenever an event enters or leaves one of the project's timelines. Counters only
 * grow, so the version differs from an earlier reading exactly when some event of the project came, moved or went
 * since: live dashboards compare it to decide whether to recalculate. Each instance reads its active partitions'
 * counters (one point read each) through {@link Scatter}; the partials add up.
 */
public final class ProjectChanges implements Scatter.Part<Long> {
    /** The partial's kind, as instances ask each other for it. */
    public static final String KIND = "changes";
    private static final int PARTIAL_VERSION = 1;

    private final Scatter scatter;

    private ProjectChanges(final Scatter scatter) {
        this.scatter = scatter;
    }

    /** Registers the partial with {@code scatter} (every role: a streams-only instance answers it for the others). */
    public static ProjectChanges register(final Scatter scatter) {
        final ProjectChanges changes = new ProjectChanges(scatter);
        scatter.register(KIND, changes);
        return changes;
    }

    /** The project's version now; fails (503) while partitions move, as every scattered read does. */
    public Future<Long> version(final long projectId, final QueryControl control) {
        return scatter.gather(KIND, Json.mapper().createObjectNode().put("project_id", projectId), control);
    }

    @Override
    public String store() {
        return StoreNames.HOURLY_COUNTS;
    }

    @Override
    public Long read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final QueryControl control) {
        final HourlyEventKey key = HourlyEventKey.changes(request.path("project_id").asLong());
        long sum = 0;
        for (final int p : partitions) {
            control.check();
            final ReadOnlyKeyValueStore<HourlyEventKey, Long> counts = Scatter.partition(app, StoreNames.HOURLY_COUNTS, p);
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
