package dev.eddy.events;

import dev.eddy.serde.JsonSerde;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** Serdes of the event records on Kafka. */
public final class EventSerdes {
    private EventSerdes() {
    }

    /** Written by {@link CapturedEventWriter} (the ingestion hot path), read by data-binding. */
    public static Serde<CapturedEvent> capturedEvent() {
        final Deserializer<CapturedEvent> reader = new JsonSerde<>(CapturedEvent.class).deserializer();
        return Serdes.serdeFrom((topic, event) -> event == null ? null : CapturedEventWriter.write(event), reader);
    }
}
