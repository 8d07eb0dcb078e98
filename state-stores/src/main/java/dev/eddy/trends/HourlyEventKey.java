package dev.eddy.trends;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Key of the hourly rollup: (project, hour, event name). Its bytes sort by project, then hour, then name
 * (big-endian non-negative longs followed by UTF-8), so one project's time range is one contiguous range scan.
 *
 * @param projectId project id, positive
 * @param hour      hours since the epoch (UTC)
 * @param event     event name
 */
public record HourlyEventKey(long projectId, long hour, String event) {
    private static final int FIXED_BYTES = 2 * Long.BYTES;

    public HourlyEventKey {
        Objects.requireNonNull(event, "event");
        if (projectId < 0 || hour < 0) {
            throw new IllegalArgumentException("project and hour must not be negative");
        }
    }

    public static HourlyEventKey of(final long projectId, final Instant timestamp, final String event) {
        return new HourlyEventKey(projectId, hourOf(timestamp), event);
    }

    public static long hourOf(final Instant timestamp) {
        return Math.floorDiv(timestamp.getEpochSecond(), 3600L);
    }

    public Instant hourStart() {
        return Instant.ofEpochSecond(hour * 3600L);
    }

    /** The smallest key of a project's hour: every event name of that hour sorts after it. */
    static HourlyEventKey firstOf(final long projectId, final long hour) {
        return new HourlyEventKey(projectId, hour, "");
    }

    public static Serde<HourlyEventKey> serde() {
        final Serializer<HourlyEventKey> serializer = (topic, key) -> {
            if (key == null) {
                return null;
            }
            final byte[] name = key.event.getBytes(StandardCharsets.UTF_8);
            return ByteBuffer.allocate(FIXED_BYTES + name.length)
                    .putLong(key.projectId).putLong(key.hour).put(name).array();
        };
        final Deserializer<HourlyEventKey> deserializer = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            if (bytes.length < FIXED_BYTES) {
                throw new SerializationException("hourly event key too short: " + bytes.length + " bytes");
            }
            final ByteBuffer buffer = ByteBuffer.wrap(bytes);
            final long project = buffer.getLong();
            final long hour = buffer.getLong();
            return new HourlyEventKey(project, hour,
                    new String(bytes, FIXED_BYTES, bytes.length - FIXED_BYTES, StandardCharsets.UTF_8));
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }
}
