package dev.eddy.topology;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the stores' keys and partitions live as of the current assignment, as Confluent's examples keep their
 * {@code MetadataService} apart from the application's lifecycle: the owner of a key ({@link #ownerOf}), the owner of
 * every partition ({@link #partitionsByOwner}), the standby copies ({@link #standbysOf}). Tables are built once per
 * assignment and dropped at every state change of the streams client ({@link #invalidate}).
 */
public final class StreamsRouting {
    private static final Logger LOG = LoggerFactory.getLogger(StreamsRouting.class);
    private static final StringSerializer KEYS = new StringSerializer();

    private final KafkaStreams streams;
    /** Store name to the input topic that places its keys ({@link EddyTopology#keyTopics}). */
    private final Map<String, String> keyTopics;
    /** The configured partition count of every topic (Eddy creates them alike; existing ones may have more). */
    private final int partitions;
    /** Whether the client's metadata may be asked (running or rebalancing). */
    private final BooleanSupplier queryable;
    /** Per store, which instance owns each partition: read on every keyed query, rebuilt after each state change. */
    private final Map<String, Routing> routing = new ConcurrentHashMap<>();
    private final AtomicLong generation = new AtomicLong();

    StreamsRouting(final KafkaStreams streams, final Map<String, String> keyTopics, final int partitions, final BooleanSupplier queryable) {
        this.streams = streams;
        this.keyTopics = keyTopics;
        this.partitions = partitions;
        this.queryable = queryable;
    }

    /** Where a key lives: the instance running its partition, and the partition. */
    public record Owner(Endpoint host, int partition) {
    }

    /** The owner of each partition of a key topic, as of one assignment. */
    private record Routing(HostInfo[] owners) {
        int partition(final byte[] key) {
            // Kafka's default partitioning of keyed records, which the producers and Streams both use.
            return Utils.toPositive(Utils.murmur2(key)) % owners.length;
        }
    }

    /** Drops the tables: the assignment may have changed (every rebalance passes through a state change). */
    void invalidate() {
        generation.incrementAndGet();
        routing.clear();
    }

    /** Where copies of a key's partition are kept besides the active one: the standby hosts and the partition. */
    public record Standbys(Set<Endpoint> hosts, int partition) {
    }

    /** The standby copies of {@code routingKey}'s partition of {@code storeName}; empty while unknown. */
    public Optional<Standbys> standbysOf(final String storeName, final String routingKey) {
        if (!queryable.getAsBoolean()) {
            return Optional.empty();
        }
        final KeyQueryMetadata meta = streams.queryMetadataForKey(storeName, routingKey, KEYS);
        if (meta == null || KeyQueryMetadata.NOT_AVAILABLE.equals(meta) || meta.standbyHosts().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Standbys(meta.standbyHosts().stream().map(Endpoint::of).collect(Collectors.toSet()),
                meta.partition()));
    }

    /** Every instance that hosts a partition of {@code storeName}, this one included. */
    public Collection<StreamsMetadata> instancesWith(final String storeName) {
        return streams.streamsMetadataForStore(storeName);
    }

    public <K> KeyQueryMetadata ownerOf(final String storeName, final K key, final Serializer<K> keySerializer) {
        return streams.queryMetadataForKey(storeName, key, keySerializer);
    }

    /**
     * The instance that owns {@code routingKey}'s partition of {@code storeName}; empty while that is unknown
     * (rebalancing, not running). Answered from a routing table built once per assignment: Kafka Streams' own
     * {@link KafkaStreams#queryMetadataForKey} rebuilds sets of every task on each call, which costs more than the
     * store read it routes. Each new table is checked against it once.
     */
    public Optional<Owner> ownerOf(final String storeName, final String routingKey) {
        if (!queryable.getAsBoolean()) {
            return Optional.empty();
        }
        final byte[] key = routingKey.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Routing table = routing.get(storeName);
        if (table == null) {
            final long built = generation.get();
            final Optional<Routing> fresh = routing(storeName);
            final KeyQueryMetadata truth = streams.queryMetadataForKey(storeName, routingKey, KEYS);
            if (truth == null || KeyQueryMetadata.NOT_AVAILABLE.equals(truth)) {
                return Optional.empty();
            }
            if (fresh.isEmpty() || fresh.get().partition(key) != truth.partition()
                    || !truth.activeHost().equals(fresh.get().owners()[truth.partition()])) {
                if (fresh.isPresent()) {
                    LOG.warn("routing table of {} disagrees with Kafka Streams' metadata; not cached", storeName);
                }
                return Optional.of(new Owner(Endpoint.of(truth.activeHost()), truth.partition()));
            }
            table = fresh.get();
            cache(storeName, table, built);
        }
        final int partition = table.partition(key);
        return Optional.of(new Owner(Endpoint.of(table.owners()[partition]), partition));
    }

    /**
     * Which partitions of {@code storeName} each instance runs as active, covering every partition exactly once;
     * empty while that is not known (not running, rebalancing). A query over the whole store asks each instance
     * for exactly its partitions, so no partition is read twice or missed.
     */
    public Optional<Map<Endpoint, List<Integer>>> partitionsByOwner(final String storeName) {
        if (!queryable.getAsBoolean()) {
            return Optional.empty();
        }
        Routing cached = routing.get(storeName);
        if (cached == null) {
            final long built = generation.get();
            final Optional<Routing> fresh = routing(storeName);
            if (fresh.isEmpty()) {
                return Optional.empty();
            }
            cached = fresh.get();
            cache(storeName, cached, built);
        }
        return Optional.of(cached).filter(table -> table.owners().length >= partitions).map(table -> {
            final Map<Endpoint, List<Integer>> byOwner = new HashMap<>();
            for (int p = 0; p < table.owners().length; p++) {
                byOwner.computeIfAbsent(Endpoint.of(table.owners()[p]), h -> new ArrayList<>()).add(p);
            }
            return byOwner;
        });
    }

    /** Keeps a table built during generation {@code built}, unless a rebalance began meanwhile (it may be stale). */
    private void cache(final String storeName, final Routing table, final long built) {
        routing.put(storeName, table);
        if (generation.get() != built) {
            routing.remove(storeName, table);
        }
    }

    /** Every partition of the store's key topic and its active owner; empty if unknown or incomplete. */
    private Optional<Routing> routing(final String storeName) {
        final String topic = keyTopics.get(storeName);
        if (topic == null) {
            return Optional.empty();
        }
        final Map<Integer, HostInfo> owners = new HashMap<>();
        for (final StreamsMetadata client : streams.metadataForAllStreamsClients()) {
            for (final TopicPartition tp : client.topicPartitions()) {
                if (tp.topic().equals(topic)) {
                    owners.put(tp.partition(), client.hostInfo());
                }
            }
        }
        // While running, every partition has an active owner: 0..n-1 all present, or the picture is incomplete.
        final int count = owners.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        if (count == 0 || owners.size() != count) {
            return Optional.empty();
        }
        final HostInfo[] table = new HostInfo[count];
        owners.forEach((partition, host) -> table[partition] = host);
        return Optional.of(new Routing(table));
    }
}
