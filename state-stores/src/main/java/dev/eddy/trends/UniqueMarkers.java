package dev.eddy.trends;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;

/**
 * Keys and values of the unique-person markers: one marker per (project, event name, UTC day, person) that has
 * that event that day, valued with the hours of the day it happened in (bit {@code h} for hour {@code h}). A
 * marker says who was active when to the hour, so distinct persons per hour, per day, week or month in any time
 * zone with whole-hour offsets, and weekly and monthly actives, are counted from the markers instead of the
 * events. {@link #ALL_EVENTS} marks every event, for series over all events.
 *
 * <p>Key: {@code [project: 8][name length: 2][name: UTF-8][day: 8, sign flipped][person: 16]}, big-endian: one
 * event's days are contiguous and in order.
 */
public final class UniqueMarkers {
    /** The event name under which every event is marked too (no real event has an empty name). */
    public static final String ALL_EVENTS = "";
    private static final long SECONDS_PER_DAY = 86_400;
    private static final int MAX_NAME_BYTES = 1024;

    private UniqueMarkers() {
    }

    /** A marker's key decoded. */
    public record Marker(long day, UUID person) {
    }

    public static long dayOf(final Instant time) {
        return Math.floorDiv(time.getEpochSecond(), SECONDS_PER_DAY);
    }

    /** The bit of the hour of the day {@code time} is in. */
    public static int hourBit(final Instant time) {
        return 1 << (int) (Math.floorMod(time.getEpochSecond(), SECONDS_PER_DAY) / 3600);
    }

    public static Bytes key(final long projectId, final String event, final long day, final UUID person) {
        final byte[] name = name(event);
        return Bytes.wrap(prefix(projectId, name, 16).putLong(day ^ Long.MIN_VALUE)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits()).array());
    }

    /** The first possible key of {@code event}'s markers on {@code day}. */
    public static Bytes dayStart(final long projectId, final String event, final long day) {
        return Bytes.wrap(prefix(projectId, name(event), 16).putLong(day ^ Long.MIN_VALUE).array());
    }

    /** The last possible key of {@code event}'s markers on {@code day} (inclusive). */
    public static Bytes dayEnd(final long projectId, final String event, final long day) {
        final ByteBuffer b = prefix(projectId, name(event), 16).putLong(day ^ Long.MIN_VALUE);
        while (b.hasRemaining()) {
            b.put((byte) 0xFF);
        }
        return Bytes.wrap(b.array());
    }

    /** Decodes the day and person of a key of {@code event}'s markers. */
    public static Marker marker(final Bytes key) {
        final ByteBuffer b = ByteBuffer.wrap(key.get());
        b.position(Long.BYTES);
        final int length = Short.toUnsignedInt(b.getShort());
        b.position(b.position() + length);
        return new Marker(b.getLong() ^ Long.MIN_VALUE, new UUID(b.getLong(), b.getLong()));
    }

    public static byte[] value(final int hours) {
        return ByteBuffer.allocate(Integer.BYTES).putInt(hours).array();
    }

    /** The hour bits of a marker's value; 0 for none. */
    public static int hours(final byte[] value) {
        return value == null || value.length != Integer.BYTES ? 0 : ByteBuffer.wrap(value).getInt();
    }

    /** The name as it is keyed: its UTF-8, or for an absurdly long name, its SHA-256. */
    static byte[] name(final String event) {
        final byte[] name = event.getBytes(StandardCharsets.UTF_8);
        if (name.length <= MAX_NAME_BYTES) {
            return name;
        }
        try {
            return ("#sha256:" + java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(name)))
                    .getBytes(StandardCharsets.UTF_8);
        } catch (final java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    private static ByteBuffer prefix(final long projectId, final byte[] name, final int more) {
        return ByteBuffer.allocate(Long.BYTES + 2 + name.length + Long.BYTES + more).putLong(projectId).putShort((short) name.length).put(name);
    }
}
