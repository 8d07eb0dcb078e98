package dev.eddy.columns;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.UUID;

/**
 * A row of a block still being filled ({@link BlockKeys.Kind#TAIL}): the event's person and the event as its timeline
 * keeps it. Encoding (version 1): {@code [version][person: 16][timeline event]}.
 */
public record TailRow(UUID person, TimelineEvent event) {
    private static final byte VERSION = 1;
    private static final int HEADER = 1 + 16;

    public static byte[] encode(final UUID person, final byte[] timelineEvent) {
        return ByteBuffer.allocate(HEADER + timelineEvent.length).put(VERSION).putLong(person.getMostSignificantBits())
                .putLong(person.getLeastSignificantBits()).put(timelineEvent).array();
    }

    /** @throws IllegalArgumentException on bytes that are not a version-1 tail row */
    public static TailRow decode(final byte[] bytes) {
        if (bytes.length < HEADER || bytes[0] != VERSION) {
            throw new IllegalArgumentException("not a tail row of version " + VERSION);
        }
        final ByteBuffer in = ByteBuffer.wrap(bytes, 1, 16);
        return new TailRow(new UUID(in.getLong(), in.getLong()), TimelineEvent.decode(event(bytes)));
    }

    /** The timeline event of an encoded tail row, undecoded (its time and name can be read without decoding it). */
    public static byte[] event(final byte[] tailRow) {
        if (tailRow.length < HEADER || tailRow[0] != VERSION) {
            throw new IllegalArgumentException("not a tail row of version " + VERSION);
        }
        return Arrays.copyOfRange(tailRow, HEADER, tailRow.length);
    }

    /** The row as a block takes it; properties that are not a JSON object count as none (as queries read them). */
    public EventBlock.Row row() {
        ObjectNode properties;
        try {
            final JsonNode tree = Json.mapper().readTree(event.properties());
            properties = tree instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
        } catch (final IOException e) {
            properties = Json.mapper().createObjectNode();
        }
        return new EventBlock.Row(event.timeMicros(), event.uuid(), person, event.distinctId(), event.event(), event.groups(), properties);
    }
}
