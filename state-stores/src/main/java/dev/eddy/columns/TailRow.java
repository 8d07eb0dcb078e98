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
 * A row of a block still being filled ({@link BlockKeys#tail}): where its event's timeline keeps it, until the row's
 * part is made. Encoding (version 3): {@code [version][timeline key]}.
 */
public final class TailRow {
    private static final byte VERSION = 3;
    /** The row of an event that left before its part was made: never read (its row is marked deleted). */
    private static final EventBlock.Row LEFT = new EventBlock.Row(0, new UUID(0, 0), new UUID(0, 0), "", "", Map.of(),
            Json.mapper().createObjectNode());

    private TailRow() {
    }

    public static byte[] encode(final Bytes timelineKey) {
        return ByteBuffer.allocate(1 + TimelineKeys.LENGTH).put(VERSION).put(timelineKey.get()).array();
    }

    /** @throws IllegalArgumentException on bytes that are not a tail row of this version */
    public static Bytes timelineKey(final byte[] tailRow) {
        if (tailRow.length != 1 + TimelineKeys.LENGTH || tailRow[0] != VERSION) {
            throw new IllegalArgumentException("not a tail row of version " + VERSION);
        }
        return Bytes.wrap(Arrays.copyOfRange(tailRow, 1, tailRow.length));
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
