package dev.eddy.benchmarks;

import dev.eddy.config.EddyConfig;
import dev.eddy.topology.StreamsProperties;
import dev.eddy.topology.Topic;
import dev.eddy.topology.TopicProvisioner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;

/**
 * The baseline a topology's rate is compared with: a bare exactly-once Kafka Streams app, configured as Eddy's
 * instances are (the same threads, commit interval and client settings), that consumes a topic's records and forwards
 * them unchanged to a topic of its own. Its rate runs from the app reaching RUNNING until every record is in its output,
 * read committed.
 */
final class BareForward {
    private BareForward() {
    }

    /**
     * @param config   Eddy's configuration: the broker, the topic prefix of the run (the output topic gets it too) and
     *                 the Streams settings
     * @param source   the topic whose records are forwarded, read from its start
     * @param records  how many records it holds
     * @return records forwarded per second
     */
    static double eventsPerSecond(final EddyConfig config, final String source, final long records) throws Exception {
        final String prefix = config.kafka().topic("");
        final String forwarded = prefix + "bench.forwarded";
        TopicProvisioner.ensure(config.kafka(), List.of(new Topic<>(forwarded, Serdes.ByteArray(), Serdes.ByteArray(), false)),
                Duration.ofSeconds(60));
        final Topology forward = new Topology();
        forward.addSource("source", Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer(), source);
        forward.addSink("sink", forwarded, Serdes.ByteArray().serializer(), Serdes.ByteArray().serializer(), "source");
        final Properties props = StreamsProperties.of(config, "127.0.0.1:1");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, prefix + "forward");
        final Path stateDir = Files.createTempDirectory("eddy-bare-forward");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        try (KafkaConsumer<byte[], byte[]> output = committedReader(config.kafka().bootstrap(), forwarded);
             KafkaStreams streams = new KafkaStreams(forward, props)) {
            final AtomicLong seen = new AtomicLong();
            final StreamsRun.Result run = StreamsRun.until("forward", streams, records,
                    s -> seen.addAndGet(output.poll(Duration.ofMillis(200)).count()), Duration.ofMinutes(2), s -> { });
            return records / run.seconds();
        } finally {
            try (Stream<Path> files = Files.walk(stateDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** A counting reader of the output: committed records only, fetched in large, infrequent chunks (little CPU). */
    private static KafkaConsumer<byte[], byte[]> committedReader(final String bootstrap, final String topic) {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-counter");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 1024 * 1024);
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 500);
        final KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }
}
