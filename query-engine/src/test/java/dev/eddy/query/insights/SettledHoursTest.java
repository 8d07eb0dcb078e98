package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.trends.HourlyCells;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.SortedStore;
import dev.eddy.trends.TimelineMetadata;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A partition's counts of settled hours are read from the store once per value of the project's settled-hours counter
 * (and store generation), and from memory after; the hours still taking live events are read from the store each time.
 */
class SettledHoursTest {
    private static final long PROJECT = 3;
    /** 2026-11-22T10:30Z: hours up to 07:00 are settled for the engine (the topology's settled hours, less one). */
    private static final long NOW = java.time.Instant.parse("2026-11-22T10:30:00Z").toEpochMilli();
    private static final long HOUR = HourlyEventKey.settledBefore(NOW) + 1;

    private final SortedStore<HourlyEventKey, Long> store = new SortedStore<>(HourlyEventKey.serde());
    private final SortedStore<String, String> metadata = new SortedStore<>(org.apache.kafka.common.serialization.Serdes.String());
    private final BlockAnswers kept = new BlockAnswers(1 << 20, null);

    SettledHoursTest() {
        metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
        for (long h = HOUR - 48; h <= HOUR; h++) {
            store.put(new HourlyEventKey(PROJECT, h, "$pageview"), h - HOUR + 100);
            store.put(new HourlyEventKey(PROJECT, h, "signup"), 1L);
        }
        store.put(new HourlyEventKey(PROJECT + 1, HOUR - 5, "$pageview"), 1_000L);
    }

    @Test
    void settledCellsAreReadOnceAndTheLiveHoursEveryTime() {
        final TreeMap<Long, Long> first = cells(hours(0), Optional.of("$pageview"), HOUR - 24, HOUR);
        assertThat(first).isEqualTo(expected("$pageview", HOUR - 24, HOUR));
        final long afterFirst = store.entriesRead();
        assertThat(afterFirst).isEqualTo(25);

        assertThat(cells(hours(0), Optional.of("$pageview"), HOUR - 24, HOUR)).isEqualTo(first);
        assertThat(store.entriesRead() - afterFirst).as("only the three hours not settled").isEqualTo(3);
    }

    @Test
    void aChangeOfASettledHourIsReadOnceTheCounterMoves() {
        cells(hours(0), Optional.of("$pageview"), HOUR - 24, HOUR);
        store.put(new HourlyEventKey(PROJECT, HOUR - 10, "$pageview"), 7L);
        assertThat(cells(hours(0), Optional.of("$pageview"), HOUR - 24, HOUR).get(HOUR - 10))
                .as("kept under the counter's value: the topology moves it with every such change").isEqualTo(90);

        store.put(HourlyEventKey.settled(PROJECT), 1L);
        assertThat(cells(hours(0), Optional.of("$pageview"), HOUR - 24, HOUR).get(HOUR - 10)).isEqualTo(7);

        store.delete(new HourlyEventKey(PROJECT, HOUR - 11, "$pageview"));
        assertThat(cells(hours(1), Optional.of("$pageview"), HOUR - 24, HOUR)).as("a store generation later")
                .doesNotContainKey(HOUR - 11).containsEntry(HOUR - 10, 7L);
    }

    @Test
    void everyEventsCellsOfTheProjectOnly() {
        final TreeMap<Long, Long> all = cells(hours(0), Optional.empty(), HOUR - 48, HOUR);
        final TreeMap<Long, Long> expected = expected("$pageview", HOUR - 48, HOUR);
        expected.replaceAll((hour, count) -> count + 1);
        assertThat(all).isEqualTo(expected);
        assertThat(cells(hours(0), Optional.empty(), HOUR - 48, HOUR)).isEqualTo(expected);
        assertThat(cells(hours(0), Optional.empty(), HOUR - 12, HOUR - 6)).as("another range, inside the first")
                .isEqualTo(new TreeMap<>(expected.subMap(HOUR - 12, true, HOUR - 6, true)));
    }

    @Test
    void rangesOfLiveHoursOnlyAndNothingKeptWithoutABudget() {
        assertThat(cells(hours(0), Optional.of("signup"), HOUR - 1, HOUR)).containsOnlyKeys(HOUR - 1, HOUR);
        final SettledHours none = new SettledHours(store, metadata, new BlockAnswers(0, null), 0, 0, NOW);
        cells(none, Optional.of("signup"), HOUR - 24, HOUR);
        final long before = store.entriesRead();
        cells(none, Optional.of("signup"), HOUR - 24, HOUR);
        assertThat(store.entriesRead() - before).isEqualTo(25);
    }

    @Test
    void aYesToBuiltIsKeptForTheGenerationAndANoAskedAgain() {
        metadata.delete(TimelineMetadata.ROLLUPS_BUILT);
        assertThat(hours(0).built()).isFalse();
        metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
        assertThat(hours(0).built()).as("a no is not kept").isTrue();
        metadata.delete(TimelineMetadata.ROLLUPS_BUILT);
        assertThat(hours(0).built()).as("a yes is: the topology never takes it back while the stores stay").isTrue();
        assertThat(hours(1).built()).as("stores replaced (a store generation later) are asked again").isFalse();
    }

    private SettledHours hours(final long generation) {
        return new SettledHours(store, metadata, kept, 0, generation, NOW);
    }

    /** The hours' counts as {@link HourlyCells#hours} gives them, by hour (those not 0). */
    private static TreeMap<Long, Long> cells(final HourlyCells cells, final Optional<String> event, final long first, final long last) {
        final TreeMap<Long, Long> byHour = new TreeMap<>();
        assertThat(cells.built()).isTrue();
        final long[] counts = cells.hours(PROJECT, event, first, last);
        assertThat(counts).hasSize((int) (last - first + 1));
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] != 0) {
                byHour.put(first + i, counts[i]);
            }
        }
        return byHour;
    }

    private TreeMap<Long, Long> expected(final String event, final long first, final long last) {
        final TreeMap<Long, Long> byHour = new TreeMap<>();
        for (long h = first; h <= last; h++) {
            byHour.put(h, store.get(new HourlyEventKey(PROJECT, h, event)));
        }
        return byHour;
    }
}
