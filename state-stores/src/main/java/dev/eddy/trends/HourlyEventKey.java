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
 * Key of the hourly rollup: (project, event name, hour). Its bytes sort by project, then name, then hour
 * ({@code [project: 8][name length: 2][name: UTF-8][hour: 8, sign flipped]}, big-endian), so one event's hours in a
 * time range are one contiguous range scan: a 30-day trend of one event reads 720 keys per partition, however many
 * other events the project has. Names are keyed as {@link UniqueMarkers} keys them.
 *
 * @param projectId project id, positive
 * @param hour      hours since the epoch (UTC); negative before 1970
 * @param event     event name
 */
public record HourlyEventKey(long projectId, long hour, String event) {
    /** The name of the change counters' keys ({@link #changes}). */
    private static final String CHANGES = "#changes";
    /** The name of the settled hours' change counters ({@link #settled}). */
    private static final String SETTLED = "#settled";

    public HourlyEventKey {
        Objects.requireNonNull(event, "event");
        if (projectId < 0) {
            throw new IllegalArgumentException("project must not be negative");
        }
    }

    /**
     * Where a partition counts the changes to a project's timelines: every event that enters a timeline of the
     * project there, or leaves one (moved away by a merge, expired), adds one. Only ever incremented, so the sum over
     * every partition changes exactly when some partition's events of the project did: live dashboards poll it to
     * know when to recalculate. It lives under project 0 (no project's: project ids start at 1), with the project id
     * in the hour field, so no count of any project's range ever includes it.
     */
    public static HourlyEventKey changes(final long projectId) {
        return new HourlyEventKey(0, projectId, CHANGES);
    }

    /**
     * Where a partition counts the changes to a project's settled hours: every count of an hour before
     * {@link #settledBefore} that goes up or down (a late event, an import, a merge moving old events, retention
     * expiring them) adds one. Live events count in the current hour and leave it alone, so cells of settled hours
     * read while it holds a value are still the cells while it holds that value: queries keep them.
     */
    public static HourlyEventKey settled(final long projectId) {
        return new HourlyEventKey(0, projectId, SETTLED);
    }

    /**
     * The first hour not settled at {@code epochMillis}: the hour before the current one and the current one take
     * events without counting a change of settled hours ({@link #settled}), so an event a little late, or a clock a
     * little behind, does not invalidate what queries kept.
     */
    public static long settledBefore(final long epochMillis) {
        return Math.floorDiv(epochMillis, 3_600_000L) - 1;
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

    /** The first key of a project (inclusive) and the first key after it (exclusive), for scans of every event. */
    static HourlyEventKey projectStart(final long projectId) {
        return new HourlyEventKey(projectId, Long.MIN_VALUE, "");
    }

    static HourlyEventKey projectEnd(final long projectId) {
        return new HourlyEventKey(projectId + 1, Long.MIN_VALUE, "");
    }

    public static Serde<HourlyEventKey> serde() {
        final Serializer<HourlyEventKey> serializer = (topic, key) -> {
            if (key == null) {
                return null;
            }
            final byte[] name = UniqueMarkers.name(key.event);
            return ByteBuffer.allocate(Long.BYTES + 2 + name.length + Long.BYTES)
                    .putLong(key.projectId).putShort((short) name.length).put(name).putLong(key.hour ^ Long.MIN_VALUE).array();
        };
        final Deserializer<HourlyEventKey> deserializer = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                final ByteBuffer buffer = ByteBuffer.wrap(bytes);
                final long project = buffer.getLong();
                final int length = Short.toUnsignedInt(buffer.getShort());
                final String name = new String(bytes, buffer.position(), length, StandardCharsets.UTF_8);
                buffer.position(buffer.position() + length);
                final long hour = buffer.getLong() ^ Long.MIN_VALUE;
                if (buffer.hasRemaining()) {
                    throw new SerializationException("hourly event key with trailing bytes");
                }
                return new HourlyEventKey(project, hour, name);
            } catch (final java.nio.BufferUnderflowException | IndexOutOfBoundsException e) {
                throw new SerializationException("hourly event key too short: " + bytes.length + " bytes", e);
            }
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }
}
