package dev.eddy.timelines;

import java.nio.ByteBuffer;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;

/**
 * Keys of the {@code event-timelines} store: {@code [project: 8][person: 16][time: 8][event uuid: 16]}, big-endian,
 * so a project's keys are contiguous, a person's keys are contiguous within it, and a person's events iterate in time
 * order. Times are stored with the sign bit flipped, so events before 1970 still sort first.
 */
public final class TimelineKeys {
    public static final int LENGTH = 8 + 16 + 8 + 16;

    private TimelineKeys() {
    }

    public static Bytes of(final long projectId, final UUID person, final long timeMicros, final UUID event) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).putLong(projectId)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits())
                .putLong(timeMicros ^ Long.MIN_VALUE)
                .putLong(event.getMostSignificantBits()).putLong(event.getLeastSignificantBits()).array());
    }

    /** The first key of a project's timelines; with {@link #projectEnd} the range of all of them. */
    public static Bytes projectStart(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).putLong(projectId).array());
    }

    /** The last possible key of a project's timelines (inclusive). */
    public static Bytes projectEnd(final long projectId) {
        final ByteBuffer b = ByteBuffer.allocate(LENGTH).putLong(projectId);
        while (b.hasRemaining()) {
            b.put((byte) 0xFF);
        }
        return Bytes.wrap(b.array());
    }

    /** The first key of a person's timeline; with {@link #personEnd} the range of all of it. */
    public static Bytes personStart(final long projectId, final UUID person) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).putLong(projectId)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits()).array());
    }

    /** The last possible key of a person's timeline (inclusive). */
    public static Bytes personEnd(final long projectId, final UUID person) {
        final ByteBuffer b = ByteBuffer.allocate(LENGTH).putLong(projectId)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits());
        while (b.hasRemaining()) {
            b.put((byte) 0xFF);
        }
        return Bytes.wrap(b.array());
    }

    /** The project a key belongs to. */
    public static long project(final Bytes key) {
        return ByteBuffer.wrap(key.get(), 0, 8).getLong();
    }

    /** The person a key belongs to. */
    public static UUID person(final Bytes key) {
        final ByteBuffer b = ByteBuffer.wrap(key.get(), 8, 16);
        return new UUID(b.getLong(), b.getLong());
    }

    /** The event a key belongs to. */
    public static UUID event(final Bytes key) {
        final ByteBuffer b = ByteBuffer.wrap(key.get(), 8 + 16 + 8, 16);
        return new UUID(b.getLong(), b.getLong());
    }

    /** The uuid an event is stored under: its own; an id that is not one (capture accepts any string) gets a stable name-based uuid. */
    public static UUID eventUuid(final String id) {
        try {
            return UUID.fromString(id);
        } catch (final IllegalArgumentException e) {
            return UUID.nameUUIDFromBytes(id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
