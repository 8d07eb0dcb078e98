package dev.eddy.query.insights;

import dev.eddy.trends.HourlyCells;
import dev.eddy.trends.HourlyEventKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A partition's hourly counts with the cells of settled hours kept between queries ({@link BlockAnswers}). Live
 * events count in the current hour; a cell of an earlier hour changes only when a late event, an import, a merge or
 * an expiry reaches it, and each of those also moves the project's settled-hours counter on
 * ({@link HourlyEventKey#settled}). So the cells of settled hours read while the counter holds a value are kept under
 * that value (and the {@linkplain dev.eddy.topology.StreamsApp#storeGeneration store generation}, which moves when a
 * partition's stores may have been replaced): a 30-day count then reads two or three cells per partition from the
 * store instead of 720, and the kept ones from memory.
 *
 * <p>The counter is read before the cells it keeps them under: a change landing between the two reads leaves cells
 * newer than their key, read again at the next query (the counter has moved on), never cells older than their key.
 * The engine keeps hours one before what the topology calls settled ({@link HourlyEventKey#settledBefore}), so a
 * count the topology takes as live is never in a kept range.
 */
final class SettledHours implements HourlyCells {
    /** What names a kept range of cells: the project, event (null for every event), hours and the state read. */
    private record Key(long projectId, int partition, String event, long firstHour, long lastHour, long changes, long generation) {
    }

    /** What names a partition's counts known to be built (once built, they stay so while the stores stay). */
    private record Built(int partition, long generation) {
    }

    /** One kept cell. */
    private record Kept(String event, long hour, long count) {
        /** What a kept cell takes, roughly: the record, its name and the list's reference to it. */
        long bytes() {
            return 88 + 2L * event.length();
        }
    }

    private final ReadOnlyKeyValueStore<HourlyEventKey, Long> store;
    private final BlockAnswers kept;
    private final int partition;
    private final long generation;
    private final long settledBefore;

    /**
     * @param generation the store generation {@code store} was resolved in (read before it)
     * @param nowMillis  the wall clock, as the topology reads it
     */
    SettledHours(final ReadOnlyKeyValueStore<HourlyEventKey, Long> store, final BlockAnswers kept, final int partition, final long generation,
                 final long nowMillis) {
        this.store = store;
        this.kept = kept;
        this.partition = partition;
        this.generation = generation;
        this.settledBefore = HourlyEventKey.settledBefore(nowMillis) - 1;
    }

    /** Whether the counts are built; a yes is kept for the store generation (the topology never takes it back). */
    @Override
    public boolean built() {
        return kept.keptIfTrue(new Built(partition, generation), () -> store.get(HourlyEventKey.BUILT) != null);
    }

    /** Cells of settled hours from memory (read once per change of them), the rest from the store; in no set order. */
    @Override
    public void forEach(final long projectId, final Optional<String> event, final long firstHour, final long lastHour, final Cell cell) {
        if (firstHour >= settledBefore || !kept.enabled()) {
            HourlyCells.scan(store, projectId, event, firstHour, lastHour, cell);
            return;
        }
        final long lastSettled = Math.min(lastHour, settledBefore - 1);
        final Long changes = store.get(HourlyEventKey.settled(projectId));
        final List<Kept> cells = kept.kept(new Key(projectId, partition, event.orElse(null), firstHour, lastSettled, changes == null ? 0 : changes,
                generation), () -> read(projectId, event, firstHour, lastSettled), list -> 48 + list.stream().mapToLong(Kept::bytes).sum());
        for (final Kept c : cells) {
            cell.accept(c.event(), c.hour(), c.count());
        }
        HourlyCells.scan(store, projectId, event, lastSettled + 1, lastHour, cell);
    }

    private List<Kept> read(final long projectId, final Optional<String> event, final long firstHour, final long lastHour) {
        final List<Kept> cells = new ArrayList<>();
        HourlyCells.scan(store, projectId, event, firstHour, lastHour, (name, hour, count) -> cells.add(new Kept(name, hour, count)));
        return List.copyOf(cells);
    }
}
