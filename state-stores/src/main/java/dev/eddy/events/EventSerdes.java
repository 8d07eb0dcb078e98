package dev.eddy.events;

import dev.eddy.serde.JsonSerde;
import org.apache.kafka.common.serialization.Serde;

/** Serdes of the event records on Kafka. */
public final class EventSerdes {
    private EventSerdes() {
    }

    public static Serde<CapturedEvent> capturedEvent() {
        return new JsonSerde<>(CapturedEvent.class);
    }
}
