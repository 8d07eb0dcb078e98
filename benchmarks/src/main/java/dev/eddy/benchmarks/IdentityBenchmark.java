package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.CapturedEventWriter;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.EddyTopics;
import dev.eddy.topology.EddyTopology;
import dev.eddy.topology.StreamsProperties;
import dev.eddy.topology.TopicProvisioner;
import dev.eddy.trends.HourlyEventKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;

/**
 * Events per second through Eddy's whole topology (de-duplication, distinct id resolution, merges through the project
 * coordinator, person property updates, timelines, rollups and event blocks), side by side with a bare exactly-once
 * Kafka Streams app that consumes the same records and forwards them unchanged, on the same broker in the same run,
 * both with the stream threads a streams instance has by default. Each rate runs from the app reaching RUNNING until
 * every event is done: in the bare app's output topic (read committed), in Eddy's hourly counts, where trends read
 * them.
 *
 * <p>Usage: {@code IdentityBenchmark --bootstrap HOST:PORT [--events 1000000] [--persons 100000]
 * [--merge-percent 5] [--partitions 12] [--initial-properties 0] [--rocksdb-stats true]}: {@code --initial-properties N} gives every
 * event a {@code $set_once} of N initial properties of its person, as posthog-js sends them; with {@code --rocksdb-stats}, each store's writes, flushes and
 * write stalls per event (RocksDB's statistics, recorded at DEBUG).
 */
public final class IdentityBenchmark {
    private static final String TOKEN = "phc_identity_benchmark";

    private final Map<String, String> args;
    private final int events;
    private final int persons;
    private final double mergeShare;
    private final int initialProperties;
    private final String prefix = "benchid" + UUID.randomUUID().toString().substring(0, 8) + ".";

    private IdentityBenchmark(final Map<String, String> args) {
        this.args = args;
        this.events = Integer.parseInt(args.getOrDefault("events", "1000000"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "100000"));
        this.mergeShare = Double.parseDouble(args.getOrDefault("merge-percent", "5")) / 100;
        this.initialProperties = Integer.parseInt(args.getOrDefault("initial-properties", "0"));
    }

    public static void main(final String[] argv) throws Exception {
        new IdentityBenchmark(BenchArgs.parse(argv, "bootstrap")).run();
    }

    private void run() throws Exception {
        final Path state = Files.createTempDirectory("eddy-identity-bench");
        try {
            // The environment's settings apply (EDDY_STREAMS_ROCKSDB_MEMORY, say), except where the benchmark's own go.
            final Map<String, String> env = new java.util.HashMap<>(System.getenv());
            // A streams instance's threads by default (one per core), unless the environment sets them.
            env.putIfAbsent("EDDY_ROLE", "streams");
            env.putAll(Map.of(
                    "EDDY_KAFKA_BOOTSTRAP", args.get("bootstrap"),
                    "EDDY_KAFKA_TOPIC_PREFIX", prefix,
                    "EDDY_PARTITIONS", args.getOrDefault("partitions", "12"),
                    "EDDY_STATE_DIR", state.toString()));
            final EddyConfig config = ConfigLoader.load(env, Optional.empty());
            final EddyTopics topics = EddyTopics.of(config.kafka());
            TopicProvisioner.ensure(config.kafka(), topics.all(), Duration.ofSeconds(60));
            final long merges = load(topics.ingest().name());
            System.out.printf(Locale.ROOT, "%,d events of %,d persons (%,d identify/alias) loaded into %s%n",
                    events, persons, merges, topics.ingest().name());

            final double bare = BareForward.eventsPerSecond(config, topics.ingest().name(), events);
            final double eddy = measure("eddy", EddyTopology.build(topics, config.streams()), config,
                    state.resolve("eddy"), IdentityBenchmark::counted);

            System.out.printf(Locale.ROOT, "stream threads      : %d%n", config.streams().threadsFor(config.role(),
                    Runtime.getRuntime().availableProcessors()));
            System.out.printf(Locale.ROOT, "consume-and-forward : %,10.0f events/s%n", bare);
            System.out.printf(Locale.ROOT, "eddy topology       : %,10.0f events/s%n", eddy);
            System.out.printf(Locale.ROOT, "ratio               : %.2f%n", eddy / bare);
        } finally {
            try (Stream<Path> files = Files.walk(state)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
            // A run's topics (about 340 partitions) left in the shared broker slow every later run.
            System.out.printf(Locale.ROOT, "%d topics of this run deleted%n", BenchKafka.deleteTopics(args.get("bootstrap"), prefix));
        }
    }

    /**
     * Anonymous browsing of {@code persons} visitors; {@code mergeShare} of the events are an {@code $identify}
     * of a visitor's first sign-up (after which half its events use the user id) or a {@code $create_alias}.
     */
    private long load(final String topic) throws Exception {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        final SplittableRandom random = new SplittableRandom(42);
        final boolean[] identified = new boolean[persons];
        final Instant start = Instant.now().minus(Duration.ofDays(1));
        long merges = 0;
        final AtomicLong failed = new AtomicLong();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < events; i++) {
                final int person = random.nextInt(persons);
                final ObjectNode props = Json.mapper().createObjectNode()
                        .put("$current_url", "https://shop.test/p/" + random.nextInt(500)).put("$browser", "Firefox")
                        .put("$os", "Linux").put("$lib", "web");
                String distinctId = identified[person] && random.nextBoolean() ? "user-" + person : "anon-" + person;
                String name = random.nextInt(10) == 0 ? "purchase" : "$pageview";
                if (random.nextDouble() < mergeShare) {
                    merges++;
                    distinctId = "user-" + person;
                    if (identified[person]) {
                        name = "$create_alias";
                        props.put("alias", "alias-" + person + "-" + random.nextInt(1000));
                    } else {
                        name = "$identify";
                        props.put("$anon_distinct_id", "anon-" + person);
                        props.putObject("$set").put("email", "user" + person + "@shop.test");
                        identified[person] = true;
                    }
                } else if (random.nextInt(20) == 0) {
                    props.putObject("$set").put("plan", random.nextBoolean() ? "free" : "pro");
                }
                if (initialProperties > 0) {
                    // As posthog-js sends with every event: the visitor's first referrer, UTM tags and landing page.
                    final ObjectNode initial = props.putObject("$set_once");
                    for (int n = 0; n < initialProperties; n++) {
                        initial.put("$initial_property_" + n, "https://shop.test/landing/" + person + "?utm_campaign=" + n);
                    }
                }
                final Instant at = start.plusMillis(i * 10L);
                final CapturedEvent event = new CapturedEvent(1, UUID.randomUUID().toString(), 1, TOKEN, distinctId, name,
                        props, at, at, null, "127.0.0.1", null, "web");
                producer.send(new ProducerRecord<>(topic, event.partitionKey(), CapturedEventWriter.write(event)), (metadata, e) -> {
                    if (e != null) {
                        failed.incrementAndGet();
                    }
                });
            }
            producer.flush();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " of the " + events + " events could not be loaded");
        }
        return merges;
    }

    /**
     * The events in the hourly counts of this instance (all of them: it runs every task), or what it has so far
     * while a rebalance closes the stores.
     */
    private static long counted(final KafkaStreams streams) {
        try {
            sleep(200);
            final ReadOnlyKeyValueStore<HourlyEventKey, Long> counts = streams.store(StoreQueryParameters.fromNameAndType(
                    StoreNames.HOURLY_COUNTS, QueryableStoreTypes.keyValueStore()));
            long total = 0;
            try (KeyValueIterator<HourlyEventKey, Long> it = counts.all()) {
                while (it.hasNext()) {
                    final KeyValue<HourlyEventKey, Long> cell = it.next();
                    // Project 0 holds the bookkeeping (change counters), no events.
                    total += cell.key.projectId() == 0 ? 0 : cell.value;
                }
            }
            return total;
        } catch (final InvalidStateStoreException e) {
            return 0;
        }
    }

    private static void sleep(final long millis) {
        try {
            Thread.sleep(millis);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * Events per second from RUNNING until {@code done} says every event is done.
     *
     * @param done how many events are done so far (called every 200 ms or so; it waits itself)
     */
    private double measure(final String name, final Topology topology, final EddyConfig config, final Path stateDir,
                           final java.util.function.ToLongFunction<KafkaStreams> done) throws Exception {
        final Properties props = StreamsProperties.of(config, "127.0.0.1:1");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, prefix + name);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        final boolean rocksdbStats = Boolean.parseBoolean(args.getOrDefault("rocksdb-stats", "false"));
        if (rocksdbStats) {
            // RocksDB's own statistics per store (Kafka Streams records them at DEBUG only; they cost a little CPU).
            props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
        }
        final java.util.OptionalLong brokerPid = ProcessCpu.localBroker();
        try (KafkaStreams streams = new KafkaStreams(topology, props)) {
            final long ownBefore = DiskWrites.of(ProcessHandle.current().pid()).orElse(-1);
            final long brokerBefore = brokerPid.isPresent() ? DiskWrites.of(brokerPid.getAsLong()).orElse(-1) : -1;
            final StreamsRun.Result run = StreamsRun.until(name, streams, events, done, Duration.ofMinutes(3), finished -> {
                if (rocksdbStats) {
                    printStoreWrites(name, finished);
                }
                final long ownAfter = DiskWrites.of(ProcessHandle.current().pid()).orElse(-1);
                final long brokerAfter = brokerPid.isPresent() ? DiskWrites.of(brokerPid.getAsLong()).orElse(-1) : -1;
                if (ownBefore >= 0 && ownAfter >= 0) {
                    System.out.printf(Locale.ROOT, "%s: disk writes %,.0f bytes/event by the app (RocksDB)%s%n", name,
                            (ownAfter - ownBefore) / (double) events, brokerBefore >= 0 && brokerAfter >= 0
                                    ? String.format(Locale.ROOT, ", %,.0f by the broker", (brokerAfter - brokerBefore) / (double) events) : "");
                }
            });
            return events / run.seconds();
        }
    }

    /**
     * Per store, summed over its partitions: bytes the topology wrote into it, bytes its memtables flushed to disk
     * (every byte of the store reaches disk at least so, before compactions rewrite it) and how long writes stalled,
     * per event of the run.
     */
    private void printStoreWrites(final String name, final KafkaStreams streams) {
        final Map<String, double[]> byStore = new java.util.TreeMap<>();
        final List<String> measures = List.of("bytes-written-total", "memtable-bytes-flushed-total", "write-stall-duration-total");
        streams.metrics().forEach((metric, value) -> {
            final int measure = measures.indexOf(metric.name());
            if (measure < 0 || !"stream-state-metrics".equals(metric.group())) {
                return;
            }
            final String store = metric.tags().entrySet().stream().filter(t -> t.getKey().endsWith("-state-id"))
                    .map(Map.Entry::getValue).findFirst().orElse("?");
            final Object v = value.metricValue();
            if (v instanceof Number n && !Double.isNaN(n.doubleValue())) {
                byStore.computeIfAbsent(store, k -> new double[3])[measure] += n.doubleValue();
            }
        });
        System.out.printf(Locale.ROOT, "%s: per event  %-24s %12s %12s %12s%n", name, "store", "written B", "flushed B", "stall µs");
        byStore.forEach((store, v) -> System.out.printf(Locale.ROOT, "%s:            %-24s %,12.1f %,12.1f %,12.2f%n", name, store,
                v[0] / events, v[1] / events, v[2] / events));
    }
}
