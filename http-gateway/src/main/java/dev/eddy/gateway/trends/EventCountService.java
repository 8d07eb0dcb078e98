package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import dev.eddy.trends.HourlyEventKey;
import io.vertx.core.Future;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Answers hourly event counts from the {@link StoreNames#HOURLY_COUNTS} stores: every instance sums its own
 * partitions' counts, and the partials add up ({@link HourlyCountQuery#merge}).
 */
public final class EventCountService {
    private static final String KIND = "event-counts";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Scatter scatter;

    /** Registers the counts' partial with {@code scatter} (one service per scatter). */
    public EventCountService(final Scatter scatter) {
        this.scatter = scatter;
        scatter.register(KIND, new Part());
    }

    public Future<List<HourlyCount>> hourly(final HourlyCountQuery query) {
        final ObjectNode request = Json.mapper().createObjectNode()
                .put("project_id", query.projectId())
                .put("from", query.from().toEpochMilli())
                .put("to", query.to().toEpochMilli());
        query.event().ifPresent(event -> request.put("event", event));
        return scatter.gather(KIND, request, QueryControl.within(TIMEOUT));
    }

    /** One instance's counts over its partitions, ordered as {@link HourlyCountQuery#merge} orders them. */
    private static final class Part implements Scatter.Part<List<HourlyCount>> {
        private static final int VERSION = 1;

        @Override
        public String store() {
            return StoreNames.HOURLY_COUNTS;
        }

        @Override
        public List<HourlyCount> read(final StreamsApp app, final List<Integer> partitions, final JsonNode request,
                                      final QueryControl control) {
            final HourlyCountQuery query = new HourlyCountQuery(request.path("project_id").asLong(),
                    Instant.ofEpochMilli(request.path("from").asLong()), Instant.ofEpochMilli(request.path("to").asLong()),
                    request.hasNonNull("event") ? Optional.of(request.get("event").asText()) : Optional.empty());
            final List<List<HourlyCount>> counts = new ArrayList<>();
            for (final int p : partitions) {
                control.check();
                counts.add(query.run(Scatter.<HourlyEventKey, Long>partition(app, StoreNames.HOURLY_COUNTS, p)));
            }
            return HourlyCountQuery.merge(counts);
        }

        /** {@code [counts: 4]([event: UTF][hour: epoch ms 8][count: 8])*}. */
        @Override
        public byte[] encode(final List<HourlyCount> partial) {
            return Binary.write(VERSION, out -> {
                out.writeInt(partial.size());
                for (final HourlyCount count : partial) {
                    out.writeUTF(count.event());
                    out.writeLong(count.hour().toEpochMilli());
                    out.writeLong(count.count());
                }
            });
        }

        @Override
        public List<HourlyCount> decode(final JsonNode request, final byte[] bytes) {
            return Binary.read(bytes, VERSION, "an event counts partial", in -> {
                final int size = in.readInt();
                final List<HourlyCount> counts = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    counts.add(new HourlyCount(in.readUTF(), Instant.ofEpochMilli(in.readLong()), in.readLong()));
                }
                return counts;
            });
        }

        @Override
        public List<HourlyCount> merge(final List<HourlyCount> into, final List<HourlyCount> other) {
            return HourlyCountQuery.merge(List.of(into, other));
        }
    }
}
