package dev.eddy.events;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * Writes a {@link CapturedEvent} as its JSON envelope with a streaming generator: the gateway writes one per
 * ingested event, so this skips data-binding's per-call serializer lookup. The bytes are exactly what
 * Jackson data-binding writes for the record (snake_case fields in declaration order, nulls left out), which
 * {@code CapturedEventWriterTest} checks; readers use data-binding.
 *
 * <p>{@code rawProperties}, when given, is written verbatim in place of {@code properties}: the gateway
 * passes the event's properties exactly as the client sent them (already parsed and validated once) instead
 * of serializing the parsed tree again. It must be the JSON of an object equal to {@code event.properties()}.
 */
public final class CapturedEventWriter {
    private CapturedEventWriter() {
    }

    public static byte[] write(final CapturedEvent event) {
        return write(event, null);
    }

    public static byte[] write(final CapturedEvent event, final byte[] rawProperties) {
        final ByteArrayBuilder out = new ByteArrayBuilder(Json.mapper().getFactory()._getBufferRecycler(),
                rawProperties == null ? 512 : rawProperties.length + 512);
        try (JsonGenerator gen = Json.mapper().getFactory().createGenerator(out)) {
            gen.writeStartObject();
            gen.writeNumberField("v", event.v());
            gen.writeStringField("uuid", event.uuid());
            gen.writeNumberField("project_id", event.projectId());
            optional(gen, "token", event.token());
            gen.writeStringField("distinct_id", event.distinctId());
            gen.writeStringField("event", event.event());
            if (rawProperties != null) {
                gen.writeFieldName("properties");
                // An empty raw value makes the generator write the ':' and count the value as written; the
                // bytes then go straight to the buffer, without a round trip through a String.
                gen.writeRawValue("");
                gen.flush();
                out.write(rawProperties);
            } else if (event.properties() != null) {
                gen.writeFieldName("properties");
                Json.mapper().writeTree(gen, event.properties());
            }
            instant(gen, "timestamp", event.timestamp());
            instant(gen, "now", event.now());
            instant(gen, "sent_at", event.sentAt());
            optional(gen, "ip", event.ip());
            optional(gen, "site_url", event.siteUrl());
            optional(gen, "lib", event.lib());
            gen.writeEndObject();
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write a captured event", e);
        }
        final byte[] bytes = out.toByteArray();
        out.release();
        return bytes;
    }

    private static void optional(final JsonGenerator gen, final String field, final String value) throws IOException {
        if (value != null) {
            gen.writeStringField(field, value);
        }
    }

    private static void instant(final JsonGenerator gen, final String field, final Instant value) throws IOException {
        if (value != null) {
            gen.writeStringField(field, IsoInstants.format(value));
        }
    }
}
