package dev.eddy.serde;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** The one Jackson configuration Eddy uses for its Kafka records and HTTP bodies. */
public final class Json {
    /** Deepest nesting a JSON document may have; PostHog event properties are shallow. */
    public static final int MAX_NESTING_DEPTH = 64;
    /** Longest single string value (a whole /batch body is at most 20 MB). */
    public static final int MAX_STRING_LENGTH = 20 * 1024 * 1024;

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .addModule(new SimpleModule("eddy-instants")
                    .addSerializer(Instant.class, new StdSerializer<>(Instant.class) {
                        private static final long serialVersionUID = 1L;

                        @Override
                        public void serialize(final Instant value, final JsonGenerator gen, final SerializerProvider provider)
                                throws IOException {
                            gen.writeString(IsoInstants.format(value));
                        }
                    })
                    .addDeserializer(Instant.class, new StdScalarDeserializer<>(Instant.class) {
                        private static final long serialVersionUID = 1L;

                        @Override
                        public Instant deserialize(final JsonParser p, final DeserializationContext ctx) throws IOException {
                            try {
                                return IsoInstants.parse(p.getValueAsString());
                            } catch (final DateTimeParseException | NullPointerException e) {
                                return (Instant) ctx.handleWeirdStringValue(Instant.class, p.getText(), "not an ISO 8601 instant");
                            }
                        }
                    }))
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .build();

    static {
        // Bound every parse: a hostile body must not exhaust the stack or the heap.
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
                .maxNestingDepth(MAX_NESTING_DEPTH)
                .maxStringLength(MAX_STRING_LENGTH)
                .maxNumberLength(100)
                .build());
    }

    private Json() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }
}
