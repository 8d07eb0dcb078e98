package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EventSerdes;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The registry of Eddy's topics for one deployment (names carry the configured prefix).
 *
 * @param ingest     live events from the gateway, keyed {@code token:distinct_id}
 * @param historical {@code historical_migration} batches, same key, replayed in order and never overflowed
 * @param overflow   live events of a key past its rate, unkeyed so they spread over every partition
 * @param dlq        records the topology could not read or process, with the reason in headers
 */
public record EddyTopics(
        Topic<String, CapturedEvent> ingest,
        Topic<String, CapturedEvent> historical,
        Topic<String, CapturedEvent> overflow,
        Topic<byte[], byte[]> dlq) {

    public static final String INGEST = "events.ingest";
    public static final String HISTORICAL = "events.historical";
    public static final String OVERFLOW = "events.overflow";
    public static final String DLQ = "events.dlq";

    public static EddyTopics of(final KafkaConfig kafka) {
        return new EddyTopics(
                events(kafka.topic(INGEST)),
                events(kafka.topic(HISTORICAL)),
                events(kafka.topic(OVERFLOW)),
                new Topic<>(kafka.topic(DLQ), Serdes.ByteArray(), Serdes.ByteArray(), false));
    }

    private static Topic<String, CapturedEvent> events(final String name) {
        return new Topic<>(name, Serdes.String(), EventSerdes.capturedEvent(), false);
    }

    /** The topics whose records are captured events; the topology reads them all alike. */
    public List<Topic<String, CapturedEvent>> eventSources() {
        return List.of(ingest, historical, overflow);
    }

    /** Every topic Eddy creates at start-up (Kafka Streams creates its own internal ones). */
    public List<Topic<?, ?>> all() {
        return List.of(ingest, historical, overflow, dlq);
    }
}
