package dev.eddy.benchmarks;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EventSerdes;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What benchmarks do with the broker directly: the raw-producer baseline and their own topics. As a program, {@code
 * BenchKafka --bootstrap HOST:PORT --delete-prefix P} deletes every topic whose name starts with {@code P} (a run's
 * topics, Kafka Streams' changelogs among them) and prints how many; {@code --delete-matching REGEX} instead deletes
 * those whose whole name matches (the topics of earlier runs a killed benchmark left behind).
 */
public final class BenchKafka {
    private BenchKafka() {
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "bootstrap");
        if (args.containsKey("delete-matching")) {
            final java.util.regex.Pattern pattern = java.util.regex.Pattern.compile(args.get("delete-matching"));
            System.out.println(deleteTopics(args.get("bootstrap"), name -> pattern.matcher(name).matches()) + " topics deleted");
        } else {
            System.out.println(deleteTopics(args.get("bootstrap"), BenchArgs.parse(argv, "delete-prefix").get("delete-prefix")) + " topics deleted");
        }
    }

    static void createTopic(final String bootstrap, final String topic, final int partitions) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    /** Deletes the topics whose names start with {@code prefix}; the number deleted. */
    static int deleteTopics(final String bootstrap, final String prefix) throws Exception {
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("an empty prefix would delete every topic");
        }
        return deleteTopics(bootstrap, name -> name.startsWith(prefix));
    }

    /** Deletes the topics whose names {@code doomed} accepts; the number deleted. */
    static int deleteTopics(final String bootstrap, final java.util.function.Predicate<String> doomed) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            final Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            final List<String> deleted = names.stream().filter(doomed).toList();
            admin.deleteTopics(deleted).all().get(60, TimeUnit.SECONDS);
            return deleted.size();
        }
    }

    private static Admin admin(final String bootstrap) {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    /**
     * {@link #rawProducer} into a new {@code topic} of {@code partitions}: one warm-up round, then {@code rounds}
     * measured ones, their rates sorted (the median in the middle); the topic is deleted after.
     */
    static double[] rawProducerRounds(final String bootstrap, final String topic, final int partitions, final List<CapturedEvent> envelopes,
                                      final int rounds) throws Exception {
        createTopic(bootstrap, topic, partitions);
        try {
            rawProducer(bootstrap, topic, envelopes);
            final double[] rates = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                rates[r] = rawProducer(bootstrap, topic, envelopes);
            }
            java.util.Arrays.sort(rates);
            return rates;
        } finally {
            deleteTopics(bootstrap, topic);
        }
    }

    /**
     * Events per second a {@code KafkaProducer} with the gateway's settings (those of its {@code EventProducer})
     * writes the envelopes to {@code topic}, keyed as the gateway keys them, all acknowledged.
     */
    static double rawProducer(final String bootstrap, final String topic, final List<CapturedEvent> envelopes) throws Exception {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L * 1024 * 1024);
        try (KafkaProducer<String, CapturedEvent> producer =
                     new KafkaProducer<>(p, new StringSerializer(), EventSerdes.capturedEvent().serializer())) {
            final CountDownLatch acked = new CountDownLatch(envelopes.size());
            final AtomicReference<Exception> error = new AtomicReference<>();
            final long start = System.nanoTime();
            for (final CapturedEvent e : envelopes) {
                producer.send(new ProducerRecord<>(topic, e.partitionKey(), e), (m, ex) -> {
                    if (ex != null) {
                        error.set(ex);
                    }
                    acked.countDown();
                });
            }
            acked.await();
            final double seconds = (System.nanoTime() - start) / 1e9;
            if (error.get() != null) {
                throw error.get();
            }
            return envelopes.size() / seconds;
        }
    }
}
