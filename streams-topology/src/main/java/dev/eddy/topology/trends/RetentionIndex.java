package dev.eddy.topology.trends;

import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Which events of a partition's timelines are due to expire. Retention counts from the day an event was first stored
 * here ({@link TimelineEvent#storedDay}), moves included. {@link StoreNames#TIMELINE_EXPIRY} indexes, for each day, the
 * persons who had events stored that day, with the span of days those events happened in: one entry per person and
 * day, not per event, so a person's later events that day only read it (a cached read). {@link #expire} finds the
 * events stored longer ago than the retention through the entries of those days, a bounded batch at a time, and hands
 * them to the timeline processor to remove. (Entries of the first layout, one per event stored before the stored day was
 * kept, are still read and expire as they did.)
 */
final class RetentionIndex {
    /** The most events one run removes, so processing never pauses long; the rest go next time. */
    static final int MAX_EXPIRED_PER_RUN = 50_000;
    private static final long MICROS_PER_DAY = 86_400_000_000L;
    /** An entry of the first layout: {@code [stored day: 8][timeline key]}, one per event. */
    private static final int EVENT_ENTRY_LENGTH = Long.BYTES + TimelineKeys.LENGTH;
    /** An entry: {@code [stored day: 8][project: 8][person: 16]}, one per person and day. */
    private static final int PERSON_ENTRY_LENGTH = Long.BYTES + Long.BYTES + 16;

    /** Removes expired events of one person from its timeline; how many were still there. */
    @FunctionalInterface
    interface Removal {
        int remove(long projectId, UUID person, List<Bytes> timelineKeys);
    }

    private final KeyValueStore<Bytes, byte[]> expiry;
    private final KeyValueStore<Bytes, byte[]> timelines;
    private final Duration retention;

    /** @param retention how long an event is kept after it was stored */
    RetentionIndex(final KeyValueStore<Bytes, byte[]> expiry, final KeyValueStore<Bytes, byte[]> timelines, final Duration retention) {
        this.expiry = expiry;
        this.timelines = timelines;
        this.retention = retention;
    }

    /**
     * Indexes the person as having an event stored on {@code storedDay} that happened at {@code timeMicros}: the
     * person's entry of that day covers the event's day. Written only when it is new or its span widens (the first
     * event of the person that day, mostly), read from the cache otherwise.
     */
    void retain(final long projectId, final UUID person, final int storedDay, final long timeMicros) {
        final Bytes entry = personEntry(storedDay, projectId, person);
        final int day = (int) Math.floorDiv(timeMicros, MICROS_PER_DAY);
        final byte[] span = expiry.get(entry);
        if (span == null) {
            expiry.put(entry, span(day, day));
        } else if (day < firstDay(span) || day > lastDay(span)) {
            expiry.put(entry, span(Math.min(day, firstDay(span)), Math.max(day, lastDay(span))));
        }
    }

    /**
     * Removes, through {@code removal}, the events stored before the retention began as of {@code nowMillis}, at most
     * about {@link #MAX_EXPIRED_PER_RUN} of them (a person's day is removed whole); the rest go next time.
     */
    void expire(final long nowMillis, final Removal removal) {
        final long firstKept = Math.floorDiv(nowMillis - retention.toMillis(), Duration.ofDays(1).toMillis());
        final List<KeyValue<Bytes, byte[]>> due = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = expiry.range(dayStart(Long.MIN_VALUE), dayStart(firstKept))) {
            while (it.hasNext() && due.size() < MAX_EXPIRED_PER_RUN) {
                final KeyValue<Bytes, byte[]> entry = it.next();
                if (storedDayOf(entry.key) < firstKept) {
                    due.add(entry);
                }
            }
        }
        int removed = 0;
        for (final KeyValue<Bytes, byte[]> entry : due) {
            if (removed >= MAX_EXPIRED_PER_RUN) {
                break;
            }
            final byte[] key = entry.key.get();
            if (key.length == EVENT_ENTRY_LENGTH) {
                final Bytes timelineKey = Bytes.wrap(Arrays.copyOfRange(key, Long.BYTES, key.length));
                removed += removal.remove(TimelineKeys.project(timelineKey), TimelineKeys.person(timelineKey), List.of(timelineKey));
            } else if (key.length == PERSON_ENTRY_LENGTH) {
                final ByteBuffer b = ByteBuffer.wrap(key, Long.BYTES, key.length - Long.BYTES);
                final long projectId = b.getLong();
                final UUID person = new UUID(b.getLong(), b.getLong());
                removed += removal.remove(projectId, person, storedBefore(projectId, person, entry.value, firstKept));
            }
            expiry.delete(entry.key);
        }
    }

    /** The person's events that happened on the days of {@code span} and were stored before {@code firstKept}. */
    private List<Bytes> storedBefore(final long projectId, final UUID person, final byte[] span, final long firstKept) {
        final List<Bytes> keys = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(
                TimelineKeys.of(projectId, person, (long) firstDay(span) * MICROS_PER_DAY, new UUID(0, 0)),
                TimelineKeys.of(projectId, person, (lastDay(span) + 1L) * MICROS_PER_DAY - 1, new UUID(-1, -1)))) {
            while (it.hasNext()) {
                final KeyValue<Bytes, byte[]> event = it.next();
                final int stored = TimelineEvent.storedDay(event.value);
                if (stored != TimelineEvent.NO_STORED_DAY && stored < firstKept) {
                    keys.add(event.key);
                }
            }
        }
        return keys;
    }

    /** The first key of a stored day: {@code [day: 8, sign-flipped]}, so days sort in order. */
    private static Bytes dayStart(final long day) {
        return Bytes.wrap(ByteBuffer.allocate(Long.BYTES).putLong(day ^ Long.MIN_VALUE).array());
    }

    private static Bytes personEntry(final long storedDay, final long projectId, final UUID person) {
        return Bytes.wrap(ByteBuffer.allocate(PERSON_ENTRY_LENGTH).putLong(storedDay ^ Long.MIN_VALUE).putLong(projectId)
                .putLong(person.getMostSignificantBits()).putLong(person.getLeastSignificantBits()).array());
    }

    private static long storedDayOf(final Bytes expiryKey) {
        return ByteBuffer.wrap(expiryKey.get()).getLong() ^ Long.MIN_VALUE;
    }

    /** An entry's value: the first and last day (since the epoch) the person's events stored that day happened on. */
    private static byte[] span(final int firstDay, final int lastDay) {
        return ByteBuffer.allocate(2 * Integer.BYTES).putInt(firstDay).putInt(lastDay).array();
    }

    private static int firstDay(final byte[] span) {
        return ByteBuffer.wrap(span).getInt();
    }

    private static int lastDay(final byte[] span) {
        return ByteBuffer.wrap(span).getInt(Integer.BYTES);
    }
}
