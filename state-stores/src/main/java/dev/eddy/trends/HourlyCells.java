package dev.eddy.trends;

import java.util.Optional;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** A partition's hourly counts ({@link HourlyEventKey}), as the queries answered from them read them. */
public interface HourlyCells {
    /** Whether the counts include every stored event of the partition ({@link TimelineMetadata#ROLLUPS_BUILT}). */
    boolean built();

    /**
     * Feeds each cell of a project's hours {@code firstHour..lastHour} (both included) to {@code cell}: of one
     * event's name, in hour order, or of every event when {@code event} is empty, in name then hour order.
     */
    void forEach(long projectId, Optional<String> event, long firstHour, long lastHour, Cell cell);

    /**
     * The project's counts of the hours {@code firstHour..lastHour}, the first at index 0: of one event, or of every
     * event summed when {@code event} is empty. For spans a query may hold in memory ({@code TrendQuery} bounds them).
     */
    default long[] hours(final long projectId, final Optional<String> event, final long firstHour, final long lastHour) {
        final long[] counts = new long[Math.toIntExact(Math.max(0, lastHour - firstHour + 1))];
        forEach(projectId, event, firstHour, lastHour, (name, hour, count) -> counts[(int) (hour - firstHour)] += count);
        return counts;
    }

    /** One hour's count of one event. */
    @FunctionalInterface
    interface Cell {
        void accept(String event, long hour, long count);
    }

    /** The cells as stored, read from {@code store} each time, built as the partition's {@code metadata} says. */
    static HourlyCells of(final ReadOnlyKeyValueStore<HourlyEventKey, Long> store, final ReadOnlyKeyValueStore<String, String> metadata) {
        return new HourlyCells() {
            @Override
            public boolean built() {
                return TimelineMetadata.rollupsBuilt(metadata);
            }

            @Override
            public void forEach(final long projectId, final Optional<String> event, final long firstHour, final long lastHour, final Cell cell) {
                scan(store, projectId, event, firstHour, lastHour, cell);
            }
        };
    }

    /**
     * Reads the cells of {@link #forEach} out of {@code store}: one event's hours are one range; every event's, the
     * whole project's keys, filtered by hour.
     */
    static void scan(final ReadOnlyKeyValueStore<HourlyEventKey, Long> store, final long projectId, final Optional<String> event,
                     final long firstHour, final long lastHour, final Cell cell) {
        if (lastHour < firstHour) {
            return;
        }
        try (KeyValueIterator<HourlyEventKey, Long> it = event.isPresent()
                ? store.range(new HourlyEventKey(projectId, firstHour, event.get()), new HourlyEventKey(projectId, lastHour, event.get()))
                : store.range(HourlyEventKey.projectStart(projectId), HourlyEventKey.projectEnd(projectId))) {
            while (it.hasNext()) {
                final KeyValue<HourlyEventKey, Long> entry = it.next();
                final HourlyEventKey key = entry.key;
                if (key.projectId() == projectId && key.hour() >= firstHour && key.hour() <= lastHour) {
                    cell.accept(key.event(), key.hour(), entry.value);
                }
            }
        }
    }
}
