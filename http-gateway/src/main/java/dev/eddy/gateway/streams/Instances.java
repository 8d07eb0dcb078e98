package dev.eddy.gateway.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.KafkaConfig;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a gateway-only process finds the streams instances that answer its reads, without PostgreSQL or a
 * configured list: every streams instance {@linkplain Announcer announces} its advertised address on a compacted
 * topic every {@link #HEARTBEAT}, and gateways read that topic into a {@linkplain Directory directory}.
 *
 * <p>An instance is in the directory from its first heartbeat until {@link #EXPIRY} after its last one, or until
 * its shutdown's tombstone. A killed instance is dropped when a request to it fails, and comes back with its next
 * heartbeat. Liveness is judged on the gateway's own clock, from when a heartbeat arrived; a heartbeat already older
 * than {@link #EXPIRY} by its producer's timestamp when read (the compacted topic's history at start-up) is ignored.
 */
public final class Instances {
    /** How often an instance announces itself. */
    public static final Duration HEARTBEAT = Duration.ofSeconds(2);
    /** How long after its last heartbeat an instance is still asked. */
    public static final Duration EXPIRY = HEARTBEAT.multipliedBy(3);
    private static final Logger LOG = LoggerFactory.getLogger(Instances.class);

    private Instances() {
    }

    /** Publishes this streams instance's address and readiness, and a tombstone when it closes. */
    public static final class Announcer implements AutoCloseable {
        private final KafkaProducer<String, String> producer;
        private final String topic;
        private final String address;
        private final BooleanSupplier ready;
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread thread = new Thread(r, "eddy-instance-heartbeat");
            thread.setDaemon(true);
            return thread;
        });

        /**
         * @param address this instance's advertised {@code host:port}
         * @param ready   whether its stores can answer queries now
         */
        public Announcer(final KafkaConfig kafka, final String topic, final String address, final BooleanSupplier ready) {
            final Properties p = new Properties();
            p.putAll(kafka.clientProperties());
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "eddy-instance-" + address);
            p.put(ProducerConfig.ACKS_CONFIG, "1");
            // A heartbeat not delivered within its period is superseded by the next one.
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) HEARTBEAT.toMillis() * 2);
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) HEARTBEAT.toMillis());
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, HEARTBEAT.toMillis());
            this.producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
            this.topic = topic;
            this.address = address;
            this.ready = ready;
            timer.scheduleAtFixedRate(this::beat, 0, HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
        }

        private void beat() {
            final ObjectNode value = Json.mapper().createObjectNode().put("address", address).put("ready", ready.getAsBoolean());
            try {
                producer.send(new ProducerRecord<>(topic, address, value.toString()), (metadata, e) -> {
                    if (e != null) {
                        LOG.warn("instance heartbeat not delivered: {}", e.toString());
                    }
                });
            } catch (final RuntimeException e) {
                LOG.warn("instance heartbeat not sent: {}", e.toString());
            }
        }

        @Override
        public void close() {
            timer.shutdownNow();
            try {
                // Gateways stop asking this instance at once instead of after the expiry.
                producer.send(new ProducerRecord<>(topic, address, null)).get(HEARTBEAT.toMillis() * 2, TimeUnit.MILLISECONDS);
            } catch (final Exception e) {
                LOG.warn("instance tombstone not delivered: {}", e.toString());
            } finally {
                producer.close(HEARTBEAT);
            }
        }
    }

    /** The streams instances a gateway-only process can ask, read from the instances topic by a background thread. */
    public static final class Directory implements AutoCloseable {
        /** When each instance's last heartbeat arrived, by {@link #clock}, and whether it was ready. */
        private record Seen(long atMillis, boolean ready) {
        }

        private final Map<String, Seen> seen = new ConcurrentHashMap<>();
        private final AtomicInteger next = new AtomicInteger();
        private final LongSupplier clock;
        private final KafkaConsumer<String, String> consumer;
        private final Thread reader;
        private volatile boolean closed;

        /** Starts reading {@code topic} from its beginning. */
        public static Directory start(final KafkaConfig kafka, final String topic) {
            final Properties p = new Properties();
            p.putAll(kafka.clientProperties());
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "eddy-instance-directory");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            final KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
            final List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            return new Directory(consumer, System::currentTimeMillis);
        }

        private Directory(final KafkaConsumer<String, String> consumer, final LongSupplier clock) {
            this.consumer = consumer;
            this.clock = clock;
            this.reader = new Thread(this::read, "eddy-instance-directory");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try {
                while (!closed) {
                    for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        heard(record.key(), record.value(), record.timestamp());
                    }
                }
            } catch (final WakeupException e) {
                // closing
            } catch (final RuntimeException e) {
                LOG.error("the instance directory stopped reading; this gateway will not find new instances", e);
            } finally {
                consumer.close(Duration.ofSeconds(1));
            }
        }

        /** One heartbeat (or tombstone) read from the topic. */
        void heard(final String address, final String value, final long producedAt) {
            final long now = clock.getAsLong();
            if (value == null) {
                if (seen.remove(address) != null) {
                    LOG.info("streams instance {} left", address);
                }
                return;
            }
            if (now - producedAt > EXPIRY.toMillis()) {
                return;
            }
            boolean ready = false;
            try {
                final JsonNode beat = Json.mapper().readTree(value);
                ready = beat.path("ready").asBoolean(false);
            } catch (final IOException e) {
                LOG.warn("unreadable heartbeat of {} ignored", address);
                return;
            }
            if (seen.put(address, new Seen(now, ready)) == null) {
                LOG.info("streams instance {} joined", address);
            }
        }

        /** The instances heard from within {@link #EXPIRY}, in address order. */
        public List<String> live() {
            return heard(false);
        }

        /** The instance to ask next: the ready ones in turn (so load spreads), else any live one. */
        public Optional<String> pick() {
            List<String> from = heard(true);
            if (from.isEmpty()) {
                from = heard(false);
            }
            return from.isEmpty() ? Optional.empty() : Optional.of(from.get(Math.floorMod(next.getAndIncrement(), from.size())));
        }

        private List<String> heard(final boolean readyOnly) {
            final long now = clock.getAsLong();
            final List<String> addresses = new ArrayList<>();
            seen.forEach((address, s) -> {
                if (now - s.atMillis() <= EXPIRY.toMillis() && (s.ready() || !readyOnly)) {
                    addresses.add(address);
                }
            });
            addresses.sort(null);
            return addresses;
        }

        /** An instance that did not answer: not asked again until its next heartbeat. */
        public void unreachable(final String address) {
            seen.computeIfPresent(address, (a, s) -> new Seen(Long.MIN_VALUE / 2, s.ready()));
        }

        @Override
        public void close() {
            if (consumer == null) {
                return;
            }
            closed = true;
            consumer.wakeup();
            try {
                reader.join(Duration.ofSeconds(5).toMillis());
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** A directory fed by hand (tests): no consumer. */
        static Directory manual(final LongSupplier clock) {
            return new Directory(clock);
        }

        private Directory(final LongSupplier clock) {
            this.consumer = null;
            this.clock = clock;
            this.reader = null;
            this.closed = true;
        }
    }
}
