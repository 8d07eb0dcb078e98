package dev.eddy.gateway.testing;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EventSerdes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Records every captured event written to some topics, from their beginning, for tests to assert on. */
public final class TopicRecorder implements AutoCloseable {
    /**
     * One record as it reached Kafka.
     *
     * @param topic     topic
     * @param partition partition
     * @param offset    offset
     * @param key       key, null for unkeyed records
     * @param event     the envelope
     */
    public record Recorded(String topic, int partition, long offset, String key, CapturedEvent event) {
    }

    private final List<Recorded> records = new CopyOnWriteArrayList<>();
    private final KafkaConsumer<String, CapturedEvent> consumer;
    private final Thread poller;
    private volatile boolean running = true;

    public TopicRecorder(final String bootstrap, final List<String> topics) {
        final Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.putAll(Infrastructure.kafkaClientProperties());
        consumer = new KafkaConsumer<>(props, new StringDeserializer(), EventSerdes.capturedEvent().deserializer());
        final List<TopicPartition> partitions = new ArrayList<>();
        topics.forEach(t -> consumer.partitionsFor(t).forEach(p -> partitions.add(new TopicPartition(t, p.partition()))));
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        poller = new Thread(this::poll, "topic-recorder");
        poller.setDaemon(true);
        poller.start();
    }

    private void poll() {
        try {
            while (running) {
                consumer.poll(Duration.ofMillis(100)).forEach(r ->
                        records.add(new Recorded(r.topic(), r.partition(), r.offset(), r.key(), r.value())));
            }
        } catch (final WakeupException e) {
            // closing
        } finally {
            consumer.close();
        }
    }

    /** Waits until exactly {@code count} recorded events match, then returns them in arrival order. */
    public List<Recorded> await(final Predicate<Recorded> match, final int count, final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            final List<Recorded> matched = records.stream().filter(match).toList();
            if (matched.size() >= count || System.nanoTime() > deadline) {
                return matched;
            }
            Thread.sleep(50);
        }
    }

    /** Everything that matches right now. */
    public List<Recorded> matching(final Predicate<Recorded> match) {
        return records.stream().filter(match).toList();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        poller.join(5000);
    }
}
