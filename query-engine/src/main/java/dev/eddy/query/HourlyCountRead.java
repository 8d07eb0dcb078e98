package dev.eddy.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import dev.eddy.trends.HourlyEventKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A project's hourly event counts ({@link HourlyCountQuery}) over each partition's rollups, ordered as it merges them. */
public final class HourlyCountRead implements PartitionRead<List<HourlyCount>> {
    private static final int VERSION = 1;

    /** The request that asks for {@code query}'s counts. */
    public static ObjectNode request(final HourlyCountQuery query) {
        final ObjectNode request = Json.mapper().createObjectNode()
                .put("project_id", query.projectId())
                .put("from", query.from().toEpochMilli())
                .put("to", query.to().toEpochMilli());
        query.event().ifPresent(event -> request.put("event", event));
        return request;
    }

    @Override
    public String store() {
        return StoreNames.HOURLY_COUNTS;
    }

    @Override
    public List<HourlyCount> read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
        final HourlyCountQuery query = new HourlyCountQuery(request.path("project_id").asLong(),
                Instant.ofEpochMilli(request.path("from").asLong()), Instant.ofEpochMilli(request.path("to").asLong()),
                request.hasNonNull("event") ? Optional.of(request.get("event").asText()) : Optional.empty());
        final List<List<HourlyCount>> counts = new ArrayList<>();
        for (final int p : partitions) {
            check.run();
            counts.add(query.run(Stores.<HourlyEventKey, Long>partition(app, StoreNames.HOURLY_COUNTS, p)));
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
