package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EventSerdes;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The registry of Eddy's topics for one deployment (names carry the configured prefix).
 *
 * @param ingest live events from the gateway, keyed {@code token:distinct_id}
 * @param dlq    records the topology could not read or process, with the reason in headers
 */
public record EddyTopics(Topic<String, CapturedEvent> ingest, Topic<byte[], byte[]> dlq) {

    public static final String INGEST = "events.ingest";
    public static final String DLQ = "events.dlq";

    public static EddyTopics of(final KafkaConfig kafka) {
        return new EddyTopics(
                new Topic<>(kafka.topic(INGEST), Serdes.String(), EventSerdes.capturedEvent(), false),
                new Topic<>(kafka.topic(DLQ), Serdes.ByteArray(), Serdes.ByteArray(), false));
    }

    /** Every topic Eddy creates at start-up (Kafka Streams creates its own internal ones). */
    public List<Topic<?, ?>> all() {
        return List.of(ingest, dlq);
    }
}
