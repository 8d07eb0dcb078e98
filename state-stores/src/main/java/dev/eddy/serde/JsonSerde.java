package dev.eddy.serde;

import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * JSON serde of one record type. A record that does not parse raises {@link SerializationException},
 * which the topology's deserialization handler sends to the dead-letter topic.
 */
public final class JsonSerde<T> implements Serde<T> {
    private final Class<T> type;
    private final ObjectReader reader;
    private final ObjectWriter writer;

    public JsonSerde(final Class<T> type) {
        this.type = type;
        this.reader = Json.mapper().readerFor(type);
        this.writer = Json.mapper().writerFor(type);
    }

    @Override
    public Serializer<T> serializer() {
        return (topic, value) -> {
            if (value == null) {
                return null;
            }
            try {
                return writer.writeValueAsBytes(value);
            } catch (final IOException e) {
                throw new SerializationException("cannot write " + type.getSimpleName() + " for " + topic, e);
            }
        };
    }

    @Override
    public Deserializer<T> deserializer() {
        return (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                return reader.readValue(bytes);
            } catch (final IOException | IllegalArgumentException e) {
                throw new SerializationException("cannot read " + type.getSimpleName() + " from " + topic + ": " + e.getMessage(), e);
            }
        };
    }
}
