package dev.eddy.columns;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;

/**
 * A row of a block still being filled, in its tail slot ({@link BlockKeys#tail}): its sequence, and a reference to the event in its
 * person's timeline, which holds it until the row becomes part of a block. Encoding (version 2):
 * {@code [version][sequence: 8][timeline key]}.
 *
 * @param sequence    the row's number in its project
 * @param timelineKey where its event is stored
 */
public record TailRow(long sequence, Bytes timelineKey) {
    private static final byte VERSION = 2;
    /** The row of an event that left before its part was made: never read (its row is marked deleted). */
    private static final EventBlock.Row LEFT = new EventBlock.Row(0, new UUID(0, 0), new UUID(0, 0), "", "", Map.of(),
            Json.mapper().createObjectNode());

    public byte[] encode() {
        return ByteBuffer.allocate(1 + Long.BYTES + TimelineKeys.LENGTH).put(VERSION).putLong(sequence).put(timelineKey.get()).array();
    }

    /** @throws IllegalArgumentException on bytes that are not a tail row of this version */
    public static TailRow decode(final byte[] tailRow) {
        if (tailRow.length != 1 + Long.BYTES + TimelineKeys.LENGTH || tailRow[0] != VERSION) {
            throw new IllegalArgumentException("not a tail row of version " + VERSION);
        }
        return new TailRow(ByteBuffer.wrap(tailRow, 1, Long.BYTES).getLong(), Bytes.wrap(Arrays.copyOfRange(tailRow, 1 + Long.BYTES, tailRow.length)));
    }

    /**
     * The row as a block takes it, of the event stored under {@code timelineKey}; properties that are not a JSON
     * object count as none (as queries read them). An event no longer stored (null) gives a placeholder row, for rows
     * that are marked deleted.
     */
    public static EventBlock.Row row(final Bytes timelineKey, final byte[] timelineEvent) {
        if (timelineEvent == null) {
            return LEFT;
        }
        final TimelineEvent event = TimelineEvent.decode(timelineEvent);
        ObjectNode properties;
        try {
            final JsonNode tree = Json.mapper().readTree(event.properties());
            properties = tree instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
        } catch (final IOException e) {
            properties = Json.mapper().createObjectNode();
        }
        return new EventBlock.Row(event.timeMicros(), event.uuid(), TimelineKeys.person(timelineKey), event.distinctId(), event.event(),
                event.groups(), properties);
    }
}
