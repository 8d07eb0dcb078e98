package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the global stores' loaders put a record they cannot read. Kafka Streams' own dead-letter handling covers the
 * stream threads only (a global thread that meets a bad record dies, and the whole instance with it), so the loaders
 * catch the failure themselves and send the record here, with the headers Kafka Streams writes on its own dead
 * letters ({@code __streams.errors.*}).
 */
public interface DeadLetters extends AutoCloseable {
    Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

    /** Sends the unreadable record; never throws (a record that cannot be sent is logged). */
    void send(String topic, int partition, long offset, byte[] key, byte[] value, Exception cause);

    @Override
    default void close() {
    }

    /** Logs only (tests without a broker). */
    DeadLetters LOG_ONLY = (topic, partition, offset, key, value, cause) ->
            LOG.error("unreadable record {}-{}@{} skipped: {}", topic, partition, offset, cause.toString());

    /** To {@code dlqTopic} through a producer of its own (acks from all replicas, idempotent). */
    static DeadLetters producing(final KafkaConfig kafka, final String dlqTopic) {
        final Properties p = new Properties();
        p.putAll(kafka.clientProperties());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "eddy-dead-letters");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        final KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        return new DeadLetters() {
            @Override
            public void send(final String topic, final int partition, final long offset, final byte[] key, final byte[] value,
                             final Exception cause) {
                LOG.error("unreadable record {}-{}@{} sent to {}: {}", topic, partition, offset, dlqTopic, cause.toString());
                final RecordHeaders headers = new RecordHeaders();
                headers.add("__streams.errors.exception", utf8(cause.getClass().getName()));
                headers.add("__streams.errors.message", utf8(String.valueOf(cause.getMessage())));
                headers.add("__streams.errors.topic", utf8(topic));
                headers.add("__streams.errors.partition", utf8(Integer.toString(partition)));
                headers.add("__streams.errors.offset", utf8(Long.toString(offset)));
                try {
                    producer.send(new ProducerRecord<>(dlqTopic, null, key, value, headers), (metadata, e) -> {
                        if (e != null) {
                            LOG.error("dead letter from {}-{}@{} not delivered: {}", topic, partition, offset, e.toString());
                        }
                    });
                } catch (final RuntimeException e) {
                    LOG.error("dead letter from {}-{}@{} not sent: {}", topic, partition, offset, e.toString());
                }
            }

            @Override
            public void close() {
                producer.close();
            }
        };
    }

    private static byte[] utf8(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
