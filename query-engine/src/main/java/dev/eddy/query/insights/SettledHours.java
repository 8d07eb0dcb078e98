package dev.eddy.query.insights;

import dev.eddy.trends.HourlyCells;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.TimelineMetadata;
import java.util.Optional;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A partition's hourly counts with the counts of settled hours kept between queries ({@link BlockAnswers}). Live
 * events count in the current hour; a cell of an earlier hour changes only when a late event, an import, a merge or
 * an expiry reaches it, and each of those also moves the project's settled-hours counter on
 * ({@link HourlyEventKey#settled}). So the settled hours a query reads while the counter holds a value are kept under
 * that value (and the {@linkplain dev.eddy.topology.StreamsApp#storeGeneration store generation}, which moves when a
 * partition's stores may have been replaced), one count per hour in an array: a 30-day count then reads two or three
 * cells per partition from the store instead of 720, and sums an array for the others.
 *
 * <p>The counter is read before the cells it keeps them under: a change landing between the two reads leaves counts
 * newer than their key, read again at the next query (the counter has moved on), never counts older than their key.
 * The engine keeps hours one before what the topology calls settled ({@link HourlyEventKey#settledBefore}), so a
 * count the topology takes as live is never in a kept range. Cell by cell ({@link #forEach}) the store is read.
 */
final class SettledHours implements HourlyCells {
    /** What names kept counts: the project, event (null for every event), hours and the state read. */
    private record Key(long projectId, int partition, String event, long firstHour, long lastHour, long changes, long generation) {
    }

    /** What names a partition's counts known to be built (once built, they stay so while the stores stay). */
    private record Built(int partition, long generation) {
    }

    private final ReadOnlyKeyValueStore<HourlyEventKey, Long> store;
    private final ReadOnlyKeyValueStore<String, String> metadata;
    private final BlockAnswers kept;
    private final int partition;
    private final long generation;
    private final long settledBefore;

    /**
     * @param metadata   the partition's timeline metadata (whether its counts are built)
     * @param generation the store generation {@code store} was resolved in (read before it)
     * @param nowMillis  the wall clock, as the topology reads it
     */
    SettledHours(final ReadOnlyKeyValueStore<HourlyEventKey, Long> store, final ReadOnlyKeyValueStore<String, String> metadata,
                 final BlockAnswers kept, final int partition, final long generation, final long nowMillis) {
        this.store = store;
        this.metadata = metadata;
        this.kept = kept;
        this.partition = partition;
        this.generation = generation;
        this.settledBefore = HourlyEventKey.settledBefore(nowMillis) - 1;
    }

    /** Whether the counts are built; a yes is kept for the store generation (the topology never takes it back). */
    @Override
    public boolean built() {
        return kept.keptIfTrue(new Built(partition, generation), () -> TimelineMetadata.rollupsBuilt(metadata));
    }

    @Override
    public void forEach(final long projectId, final Optional<String> event, final long firstHour, final long lastHour, final Cell cell) {
        HourlyCells.scan(store, projectId, event, firstHour, lastHour, cell);
    }

    /** Settled hours' counts from memory (read once per change of them), the rest from the store. */
    @Override
    public long[] hours(final long projectId, final Optional<String> event, final long firstHour, final long lastHour) {
        if (firstHour >= settledBefore || !kept.enabled()) {
            return HourlyCells.super.hours(projectId, event, firstHour, lastHour);
        }
        final long lastSettled = Math.min(lastHour, settledBefore - 1);
        final Long changes = store.get(HourlyEventKey.settled(projectId));
        final long[] settled = kept.kept(new Key(projectId, partition, event.orElse(null), firstHour, lastSettled, changes == null ? 0 : changes,
                generation), () -> HourlyCells.super.hours(projectId, event, firstHour, lastSettled), counts -> 16 + 8L * counts.length);
        final long[] counts = java.util.Arrays.copyOf(settled, Math.toIntExact(lastHour - firstHour + 1));
        HourlyCells.scan(store, projectId, event, lastSettled + 1, lastHour, (name, hour, count) -> counts[(int) (hour - firstHour)] += count);
        return counts;
    }
}
