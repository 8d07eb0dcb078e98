package dev.eddy.topology.trends;

import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.UniqueMarkers;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A partition's rollups of its timelines: hourly counts per event name ({@link StoreNames#HOURLY_COUNTS}), the hours
 * each person was active per event name and day ({@link StoreNames#UNIQUE_MARKERS}), and each project's change
 * counters ({@link HourlyEventKey#changes}, {@link HourlyEventKey#settled}) that live dashboards and kept answers poll.
 * The timeline processor calls it as events enter and leave timelines, so unfiltered trends answered from the rollups
 * equal trends scanned from the timelines.
 */
final class Rollups {
    private static final long MICROS_PER_DAY = 86_400_000_000L;

    private final KeyValueStore<HourlyEventKey, Long> counts;
    private final KeyValueStore<Bytes, byte[]> markers;
    private final LongSupplier wallClockMs;

    Rollups(final KeyValueStore<HourlyEventKey, Long> counts, final KeyValueStore<Bytes, byte[]> markers, final LongSupplier wallClockMs) {
        this.counts = counts;
        this.markers = markers;
        this.wallClockMs = wallClockMs;
    }

    /**
     * Counts a stored event in its hour and marks its person active then, for its name and for all events. An hour
     * marked for a name is marked for all events too (they are set together, and removed and recomputed together), so
     * when the name's marker had the hour already, so has the other.
     */
    void index(final long projectId, final UUID person, final TimelineEvent event) {
        count(projectId, event, 1);
        if (mark(projectId, person, event.event(), event.time())) {
            mark(projectId, person, UniqueMarkers.ALL_EVENTS, event.time());
        }
    }

    /** Takes an event that left its timeline out of its hour's count (its person's markers are {@link #remark}ed or dropped). */
    void uncount(final long projectId, final TimelineEvent event) {
        count(projectId, event, -1);
    }

    /**
     * Adds {@code events} to the project's change counter: whatever entered or left its timelines here, counted or not
     * yet (a rebuild running), since queries read the timelines then.
     */
    void changed(final long projectId, final long events) {
        add(HourlyEventKey.changes(projectId), events);
    }

    /** Adds to {@code keys} the person's markers of the day of {@code event}, for its name and for all events: to drop when the person leaves. */
    static void addMarkerKeys(final Set<Bytes> keys, final long projectId, final UUID person, final TimelineEvent event) {
        final long day = UniqueMarkers.dayOf(event.time());
        keys.add(UniqueMarkers.key(projectId, event.event(), day, person));
        keys.add(UniqueMarkers.key(projectId, UniqueMarkers.ALL_EVENTS, day, person));
    }

    /** Drops markers of a person whose every event left this partition. */
    void unmark(final Set<Bytes> keys) {
        keys.forEach(markers::delete);
    }

    /**
     * Sets the person's markers of {@code day} for {@code names} and for all events from the events its timeline in
     * {@code timelines} holds then (after some left).
     */
    void remark(final KeyValueStore<Bytes, byte[]> timelines, final long projectId, final UUID person, final long day, final Set<String> names) {
        final Map<String, Integer> named = new HashMap<>();
        names.forEach(name -> named.put(name, 0));
        int all = 0;
        final long dayStart = day * MICROS_PER_DAY;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.of(projectId, person, dayStart, new UUID(0, 0)),
                TimelineKeys.of(projectId, person, dayStart + MICROS_PER_DAY - 1, new UUID(-1, -1)))) {
            while (it.hasNext()) {
                final TimelineEvent same = TimelineEvent.decode(it.next().value);
                final int hour = UniqueMarkers.hourBit(same.time());
                all |= hour;
                named.computeIfPresent(same.event(), (name, hours) -> hours | hour);
            }
        }
        named.forEach((name, hours) -> putMarker(UniqueMarkers.key(projectId, name, day, person), hours));
        putMarker(UniqueMarkers.key(projectId, UniqueMarkers.ALL_EVENTS, day, person), all);
    }

    /**
     * Adds {@code delta} to the event's hourly count; a count that reaches zero is removed. A count of a settled hour
     * also counts a change of the project's settled hours ({@link HourlyEventKey#settled}), so queries know to read
     * them again.
     */
    private void count(final long projectId, final TimelineEvent event, final long delta) {
        final HourlyEventKey cell = HourlyEventKey.of(projectId, event.time(), event.event());
        final Long current = counts.get(cell);
        final long updated = (current == null ? 0 : current) + delta;
        if (updated > 0) {
            counts.put(cell, updated);
        } else {
            counts.delete(cell);
        }
        if (cell.hour() < HourlyEventKey.settledBefore(wallClockMs.getAsLong())) {
            add(HourlyEventKey.settled(projectId), 1);
        }
    }

    private void add(final HourlyEventKey counter, final long n) {
        final Long current = counts.get(counter);
        counts.put(counter, (current == null ? 0 : current) + n);
    }

    /** Sets the hour of {@code time} in the person's marker of {@code event} for that day; whether it was not set. */
    private boolean mark(final long projectId, final UUID person, final String event, final Instant time) {
        final Bytes key = UniqueMarkers.key(projectId, event, UniqueMarkers.dayOf(time), person);
        final int hours = UniqueMarkers.hours(markers.get(key));
        final int updated = hours | UniqueMarkers.hourBit(time);
        if (updated == hours) {
            return false;
        }
        markers.put(key, UniqueMarkers.value(updated));
        return true;
    }

    private void putMarker(final Bytes key, final int hours) {
        if (hours == 0) {
            markers.delete(key);
        } else {
            markers.put(key, UniqueMarkers.value(hours));
        }
    }
}
