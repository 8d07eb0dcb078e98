package dev.eddy.gateway.capture;

import dev.eddy.config.KafkaConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.CapturedEventWriter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes captured events to Kafka and completes only when the broker acknowledged every one of them
 * (acks=all, idempotent producer). This is pure mechanism: which topic and key each event gets is decided
 * by the caller.
 *
 * <p>{@code KafkaProducer.send} can block (metadata fetch, full buffer), so sends run on one dedicated
 * thread, never on an event loop. One thread also keeps the events of one request in order. Its queue is
 * bounded: when it is full, the request fails at once with {@link Overloaded} instead of queueing without end.
 */
public final class EventProducer implements AutoCloseable {
    private static final int QUEUE_CAPACITY = 10_000;
    private static final long BUFFER_MEMORY = 64L * 1024 * 1024;
    private static final int LINGER_MS = 5;

    private final Producer<String, byte[]> producer;
    private final ThreadPoolExecutor sender;

    /** The producer could not take more work right now; the client should retry. */
    public static final class Overloaded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Overloaded(final String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Over a producer client made elsewhere: {@link #create} configures one for a broker; Kafka's MockProducer stands in
     * for one where no broker runs (the route tests).
     */
    public EventProducer(final Producer<String, byte[]> producer) {
        this.producer = producer;
        this.sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE_CAPACITY),
                runnable -> {
                    final Thread t = new Thread(runnable, "eddy-kafka-sender");
                    t.setDaemon(true);
                    return t;
                });
    }

    public static EventProducer create(final KafkaConfig kafka) {
        final Properties p = new Properties();
        p.putAll(kafka.clientProperties());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "eddy-gateway");
        // An event is acknowledged to the client only once every in-sync replica has it, written once.
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        // The whole produce, retries included, fits in the request's deadline; past it the client gets a 503.
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, kafka.produceTimeoutMs());
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, kafka.produceTimeoutMs() - LINGER_MS);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, kafka.produceTimeoutMs());
        p.put(ProducerConfig.LINGER_MS_CONFIG, LINGER_MS);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, BUFFER_MEMORY);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        final KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        return new EventProducer(producer);
    }

    /** The client, for metrics binding. */
    public Producer<String, byte[]> client() {
        return producer;
    }

    /**
     * One record to write.
     *
     * @param topic where it goes
     * @param key   its key, or null to let the producer spread it (overflow)
     * @param value the serialized envelope
     */
    public record Outgoing(String topic, String key, byte[] value) {
    }

    /**
     * A captured event as a record, serialized by the calling thread: the event loops share the JSON writing,
     * and the one sender thread only hands bytes to the producer.
     *
     * @param rawProperties the event's properties as sent, written verbatim; null to serialize the tree
     */
    public static Outgoing record(final String topic, final String key, final CapturedEvent event, final byte[] rawProperties) {
        return new Outgoing(topic, key, CapturedEventWriter.write(event, rawProperties));
    }

    /**
     * Sends {@code records} in order; the future completes on {@code context} when all are acknowledged, or
     * fails with the first error.
     */
    public Future<Void> send(final Context context, final List<Outgoing> records) {
        final Promise<Void> promise = Promise.promise();
        if (records.isEmpty()) {
            promise.complete();
            return promise.future();
        }
        final AtomicInteger pending = new AtomicInteger(records.size());
        try {
            sender.execute(() -> {
                for (final Outgoing record : records) {
                    try {
                        producer.send(new ProducerRecord<>(record.topic(), record.key(), record.value()), (metadata, error) -> {
                            if (error != null) {
                                context.runOnContext(v -> promise.tryFail(error));
                            } else if (pending.decrementAndGet() == 0) {
                                context.runOnContext(v -> promise.tryComplete());
                            }
                        });
                    } catch (final RuntimeException e) {
                        context.runOnContext(v -> promise.tryFail(e));
                        return;
                    }
                }
            });
        } catch (final RejectedExecutionException e) {
            promise.fail(new Overloaded("ingestion queue is full"));
        }
        return promise.future();
    }

    @Override
    public void close() {
        sender.shutdown();
        try {
            sender.awaitTermination(10, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(10));
    }
}
