package dev.eddy.timelines;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One event in a person's timeline, in the compact form the {@code event-timelines} store keeps: what trends and
 * funnels read (name, time, uuid, distinct id, group keys) plus the event's properties as the JSON bytes they
 * arrived in, parsed only by queries that filter or break down on them.
 *
 * <p>Encoding (version 2): {@code [version][time micros: 8][uuid: 16][name][distinct id][group count]
 * ([group index][group key])*[properties length: 4][properties JSON][stored day: 4]}, strings as a 2-byte length and
 * UTF-8. The stored day (days since the epoch, UTC) is when Eddy first stored the event, what its retention counts
 * from; it is the store's, not the event's, so it is not one of the record's fields. Version 1 is the same without
 * the stored day and still reads. The value is self-contained, so a merge can move it to another person's timeline as
 * it is, stored day included.
 *
 * @param timeMicros event time, microseconds since the epoch
 * @param groups     group type index to group key ({@code $groups} of the event)
 * @param properties the event's properties, JSON
 */
public record TimelineEvent(long timeMicros, UUID uuid, String event, String distinctId, Map<Integer, String> groups,
                            byte[] properties) {
    private static final byte VERSION = 2;
    private static final byte VERSION_1 = 1;
    /** The stored day of an event not stored yet, or stored by version 1, which did not record it. */
    public static final int NO_STORED_DAY = Integer.MIN_VALUE;
    private static final int MAX_STRING_BYTES = 0xFFFF;

    public TimelineEvent {
        Objects.requireNonNull(uuid, "uuid");
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(distinctId, "distinctId");
        groups = Map.copyOf(groups);
        properties = properties.clone();
    }

    /**
     * An event as its timeline keeps it, from an event's fields as the topology carries them: its uuid as sent
     * ({@link TimelineKeys#eventUuid}) and its groups keyed by the index's text ("0".."4").
     */
    public static TimelineEvent of(final java.time.Instant timestamp, final String uuid, final String event, final String distinctId,
                                   final Map<String, String> groups, final byte[] properties) {
        final Map<Integer, String> byIndex = new TreeMap<>();
        groups.forEach((index, key) -> byIndex.put(Integer.parseInt(index), key));
        return new TimelineEvent(micros(timestamp), TimelineKeys.eventUuid(uuid), event, distinctId, byIndex, properties);
    }

    /** The event as a timeline stores it, on {@code storedDay} (days since the epoch, {@link #NO_STORED_DAY} if not stored). */
    public byte[] encode(final int storedDay) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(64 + properties.length);
        final ByteBuffer fixed = ByteBuffer.allocate(1 + 8 + 16);
        fixed.put(VERSION).putLong(timeMicros).putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        out.writeBytes(fixed.array());
        string(out, event);
        string(out, distinctId);
        out.write(groups.size());
        for (final Map.Entry<Integer, String> g : new TreeMap<>(groups).entrySet()) {
            out.write(g.getKey());
            string(out, g.getValue());
        }
        out.writeBytes(ByteBuffer.allocate(4).putInt(properties.length).array());
        out.writeBytes(properties);
        out.writeBytes(ByteBuffer.allocate(4).putInt(storedDay).array());
        return out.toByteArray();
    }

    /** The event not stored yet ({@link #NO_STORED_DAY}). */
    public byte[] encode() {
        return encode(NO_STORED_DAY);
    }

    /** The day an encoded event was stored (days since the epoch, UTC); {@link #NO_STORED_DAY} if not recorded. */
    public static int storedDay(final byte[] bytes) {
        if (bytes.length < 1 + 4 || bytes[0] != VERSION) {
            return NO_STORED_DAY;
        }
        return ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
    }

    /** An encoded event with its stored day set to {@code storedDay}; version-1 bytes are written as version 2. */
    public static byte[] withStoredDay(final byte[] bytes, final int storedDay) {
        if (bytes.length < 1 + 4 || bytes[0] != VERSION) {
            return decode(bytes).encode(storedDay);
        }
        final byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy, copy.length - 4, 4).putInt(storedDay);
        return copy;
    }

    /** @throws IllegalArgumentException on bytes that are not a timeline event of version 1 or 2 */
    public static TimelineEvent decode(final byte[] bytes) {
        try {
            final ByteBuffer in = ByteBuffer.wrap(bytes);
            final byte version = in.get();
            if (version != VERSION && version != VERSION_1) {
                throw new IllegalArgumentException("unknown timeline event version");
            }
            final long time = in.getLong();
            final UUID uuid = new UUID(in.getLong(), in.getLong());
            final String event = string(in);
            final String distinctId = string(in);
            final int groupCount = in.get() & 0xFF;
            final Map<Integer, String> groups = new TreeMap<>();
            for (int i = 0; i < groupCount; i++) {
                groups.put(in.get() & 0xFF, string(in));
            }
            final byte[] properties = new byte[in.getInt()];
            in.get(properties);
            if (version == VERSION) {
                in.getInt();
            }
            return new TimelineEvent(time, uuid, event, distinctId, groups, properties);
        } catch (final java.nio.BufferUnderflowException | NegativeArraySizeException e) {
            throw new IllegalArgumentException("truncated timeline event", e);
        }
    }

    /** When the event happened. */
    public java.time.Instant time() {
        return instant(timeMicros);
    }

    /** Microseconds since the epoch as an instant. */
    public static java.time.Instant instant(final long micros) {
        return java.time.Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
    }

    /** An instant as microseconds since the epoch (finer digits dropped). */
    public static long micros(final java.time.Instant time) {
        return Math.addExact(Math.multiplyExact(time.getEpochSecond(), 1_000_000L), time.getNano() / 1_000L);
    }

    /** Only the time of an encoded event, without decoding the rest. */
    public static long timeOf(final byte[] bytes) {
        return ByteBuffer.wrap(bytes, 1, 8).getLong();
    }

    /** Where the name's 2-byte length starts: after the version, the time and the uuid. */
    private static final int NAME_AT = 1 + 8 + 16;

    /** Event names as {@link #nameIn} compares them: UTF-8, cut as the encoding cuts them. */
    public static byte[][] names(final java.util.Collection<String> names) {
        return names.stream().map(n -> {
            final byte[] bytes = n.getBytes(StandardCharsets.UTF_8);
            return bytes.length > MAX_STRING_BYTES ? Arrays.copyOf(bytes, MAX_STRING_BYTES) : bytes;
        }).toArray(byte[][]::new);
    }

    /** Whether an encoded event's name is one of {@code names} ({@link #names}), read without decoding the event. */
    public static boolean nameIn(final byte[] bytes, final byte[][] names) {
        if (bytes.length < NAME_AT + 2) {
            return false;
        }
        final int length = ((bytes[NAME_AT] & 0xFF) << 8) | (bytes[NAME_AT + 1] & 0xFF);
        final int from = NAME_AT + 2;
        if (bytes.length < from + length) {
            return false;
        }
        for (final byte[] name : names) {
            if (name.length == length && Arrays.equals(bytes, from, from + length, name, 0, length)) {
                return true;
            }
        }
        return false;
    }

    private static void string(final ByteArrayOutputStream out, final String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            // Event names and ids are bounded far below this by capture; cut rather than fail a whole timeline.
            bytes = Arrays.copyOf(bytes, MAX_STRING_BYTES);
        }
        out.write(bytes.length >>> 8);
        out.write(bytes.length & 0xFF);
        out.writeBytes(bytes);
    }

    private static String string(final ByteBuffer in) {
        final int length = ((in.get() & 0xFF) << 8) | (in.get() & 0xFF);
        final byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof TimelineEvent other && timeMicros == other.timeMicros && uuid.equals(other.uuid)
                && event.equals(other.event) && distinctId.equals(other.distinctId) && groups.equals(other.groups)
                && Arrays.equals(properties, other.properties);
    }

    @Override
    public int hashCode() {
        return Objects.hash(timeMicros, uuid, event, distinctId, groups) * 31 + Arrays.hashCode(properties);
    }

    @Override
    public String toString() {
        return "TimelineEvent[" + event + " at " + timeMicros + ", " + uuid + ", " + distinctId + "]";
    }
}
