package dev.eddy.topology.trends;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.TimelineMetadata;
import dev.eddy.trends.UniqueMarkers;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Timelines stored before the rollups existed (an upgrade) are indexed in the background, a batch at a time, and
 * events that arrive meanwhile count exactly once whichever side of the rebuild's cursor they fall on.
 */
class RollupRebuildTest {
    private static final long PROJECT = 7;
    private static final Instant HOUR = Instant.parse("2026-11-20T10:00:00Z");

    private MockProcessorContext<String, byte[]> context;
    private KeyValueStore<Bytes, byte[]> timelines;
    private KeyValueStore<HourlyEventKey, Long> counts;
    private KeyValueStore<Bytes, byte[]> markers;
    private TimelineProcessor processor;
    private KeyValueStore<Bytes, byte[]> blocks;
    private KeyValueStore<String, String> redirects;
    private KeyValueStore<String, String> metadata;

    @BeforeEach
    void stores() {
        context = new MockProcessorContext<>();
        context.setCurrentSystemTimeMs(HOUR.toEpochMilli());
        timelines = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.EVENT_TIMELINES), Serdes.Bytes(), Serdes.ByteArray()));
        counts = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.HOURLY_COUNTS), HourlyEventKey.serde(), Serdes.Long()));
        markers = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.UNIQUE_MARKERS), Serdes.Bytes(), Serdes.ByteArray()));
        store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.TIMELINE_EXPIRY), Serdes.Bytes(), Serdes.ByteArray()));
        redirects = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.TIMELINE_REDIRECTS), Serdes.String(), Serdes.String()));
        metadata = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.TIMELINE_METADATA), Serdes.String(), Serdes.String()));
        blocks = store(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(StoreNames.EVENT_BLOCKS), Serdes.Bytes(), Serdes.ByteArray()));
    }

    private <S extends org.apache.kafka.streams.processor.StateStore> S store(final org.apache.kafka.streams.state.StoreBuilder<S> builder) {
        final S store = builder.withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
        return store;
    }

    @Test
    void storedTimelinesAreIndexedInBatchesAndNewEventsCountOnce() {
        // Ten persons' events stored before the rollups existed.
        final UUID[] persons = new UUID[10];
        for (int i = 0; i < persons.length; i++) {
            persons[i] = new UUID(1, i);
            put(persons[i], "$pageview", HOUR.plusSeconds(i));
        }
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(built()).as("not built: queries read the events").isFalse();

        rebuildSome();
        assertThat(count()).isEqualTo(4);
        // One event behind the cursor (person 1) and one ahead of it (person 8) arrive during the rebuild.
        process(persons[1], "$pageview", HOUR.plusSeconds(100));
        process(persons[8], "$pageview", HOUR.plusSeconds(200));
        assertThat(count()).as("only the one behind the cursor counts now").isEqualTo(5);

        rebuildSome();
        rebuildSome();
        assertThat(built()).isTrue();
        rebuildSome();
        assertThat(count()).isEqualTo(12);
        assertThat(markedPersons()).isEqualTo(10);
        // Once built, every new event counts at once.
        process(persons[0], "$pageview", HOUR.plusSeconds(300));
        assertThat(count()).isEqualTo(13);
    }

    @Test
    void emptyTimelinesAreBuiltWithTheFirstRecord() {
        processor = new TimelineProcessor(Duration.ZERO);
        processor.init(context);
        assertThat(context.scheduledPunctuators()).as("no rebuild to run").isEmpty();
        process(new UUID(2, 2), "signup", HOUR);
        assertThat(built()).isTrue();
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).isNotNull();
        assertThat(counts.get(HourlyEventKey.of(PROJECT, HOUR, "signup"))).isEqualTo(1L);
        assertThat(blockRows()).hasSize(1);
    }

    /**
     * Timelines stored before the event blocks existed (an upgrade; rollups already built) get their rows in the
     * background, each once, while events arriving meanwhile get theirs at once; the rollups are left as they were.
     */
    @Test
    void storedTimelinesGetTheirBlockRowsOnceWhileNewEventsGetThemAtOnce() {
        final UUID[] persons = new UUID[10];
        for (int i = 0; i < persons.length; i++) {
            persons[i] = new UUID(1, i);
            put(persons[i], "$pageview", HOUR.plusSeconds(i));
        }
        metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
        counts.put(HourlyEventKey.of(PROJECT, HOUR, "$pageview"), 10L);
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).as("not complete: queries read the timelines").isNull();

        rebuildSome();
        assertThat(blockRows()).hasSize(4);
        process(persons[1], "$pageview", HOUR.plusSeconds(100));
        process(persons[8], "$pageview", HOUR.plusSeconds(200));
        assertThat(blockRows()).as("new events have their rows at once").hasSize(6);
        assertThat(count()).as("the built rollups count new events at once").isEqualTo(12);

        rebuildSome();
        rebuildSome();
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).isNotNull();
        final List<String> uuids = blockRows();
        assertThat(uuids).hasSize(12).doesNotHaveDuplicates();
        final List<String> stored = new java.util.ArrayList<>();
        try (var it = timelines.all()) {
            it.forEachRemaining(e -> stored.add(TimelineEvent.decode(e.value).uuid().toString()));
        }
        assertThat(uuids).containsExactlyInAnyOrderElementsOf(stored);
        assertThat(count()).as("the rebuild left the rollups alone").isEqualTo(12);
    }

    /**
     * Blocks this instance kept from an earlier ownership of the partition (the timelines changed elsewhere since, and
     * were restored here from the changelog) are cleared and rebuilt; blocks closed cleanly at the timelines' state
     * are kept as they are.
     */
    @Test
    void blocksFromAnEarlierOwnershipAreRebuiltAndCurrentOnesKept() {
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        for (int i = 0; i < 3; i++) {
            process(new UUID(3, i), "$pageview", HOUR.plusSeconds(i));
        }
        processor.close();
        // Another instance stored two more events, and one left (moved by a merge); this one restores that state.
        put(new UUID(3, 7), "$pageview", HOUR.plusSeconds(10));
        put(new UUID(3, 8), "$pageview", HOUR.plusSeconds(11));
        try (var it = timelines.range(TimelineKeys.personStart(PROJECT, new UUID(3, 0)), TimelineKeys.personEnd(PROJECT, new UUID(3, 0)))) {
            timelines.delete(it.next().key);
        }
        metadata.put(TimelineMetadata.EVENT_BLOCK_CHANGES, Long.toString(Long.parseLong(metadata.get(TimelineMetadata.EVENT_BLOCK_CHANGES)) + 3));

        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).as("stale: queries read the timelines").isNull();
        rebuildSome();
        rebuildSome();
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).isNotNull();
        final List<String> stored = new java.util.ArrayList<>();
        try (var it = timelines.all()) {
            it.forEachRemaining(e -> stored.add(TimelineEvent.decode(e.value).uuid().toString()));
        }
        assertThat(stored).hasSize(4);
        assertThat(blockRows()).containsExactlyInAnyOrderElementsOf(stored);

        processor.close();
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).as("closed at the timelines' state: kept").isNotNull();
        assertThat(blockRows()).containsExactlyInAnyOrderElementsOf(stored);
        // Rows go on being numbered after the newest one kept: none of the kept rows is written over.
        process(new UUID(3, 9), "$pageview", HOUR.plusSeconds(12));
        try (var it = timelines.range(TimelineKeys.personStart(PROJECT, new UUID(3, 9)), TimelineKeys.personEnd(PROJECT, new UUID(3, 9)))) {
            stored.add(TimelineEvent.decode(it.next().value).uuid().toString());
        }
        assertThat(blockRows()).hasSize(5).containsExactlyInAnyOrderElementsOf(stored);

        // Blocks of another layout (an older Eddy's) are rebuilt in this one's.
        processor.close();
        blocks.put(BlockKeys.meta(BlockKeys.FORMAT), BlockKeys.number(BlockKeys.VERSION - 1));
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).as("another layout: queries read the timelines").isNull();
        assertThat(BlockKeys.number(blocks.get(BlockKeys.meta(BlockKeys.FORMAT)), -1)).isEqualTo(BlockKeys.VERSION);
        rebuildSome();
        rebuildSome();
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).isNotNull();
        assertThat(blockRows()).containsExactlyInAnyOrderElementsOf(stored);
    }

    /**
     * What an earlier release kept in the other stores (the built flag among the hourly counts, the rebuild's cursor and
     * the blocks' change count among the redirects) is moved to the metadata store when the task opens: the rollups are
     * not counted again, the blocks written then are kept, and the old stores hold only their own records.
     */
    @Test
    void anEarlierReleasesKeysMoveToTheMetadataStore() {
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        for (int i = 0; i < 3; i++) {
            process(new UUID(4, i), "$pageview", HOUR.plusSeconds(i));
        }
        processor.close();
        // As the earlier release left them.
        counts.put(LegacyMetadata.BUILT, 1L);
        redirects.put(LegacyMetadata.EVENT_BLOCK_CHANGES, metadata.delete(TimelineMetadata.EVENT_BLOCK_CHANGES));
        metadata.delete(TimelineMetadata.ROLLUPS_BUILT);
        final int punctuators = context.scheduledPunctuators().size();

        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);

        assertThat(built()).isTrue();
        assertThat(metadata.get(TimelineMetadata.EVENT_BLOCK_CHANGES)).isNotNull();
        assertThat(counts.get(LegacyMetadata.BUILT)).isNull();
        assertThat(redirects.get(LegacyMetadata.EVENT_BLOCK_CHANGES)).isNull();
        assertThat(context.scheduledPunctuators()).as("nothing to rebuild").hasSize(punctuators);
        assertThat(blocks.get(BlockKeys.meta(BlockKeys.COMPLETE))).as("the blocks kept").isNotNull();
        assertThat(count()).as("counted once").isEqualTo(3);

        // A rebuild's cursor of the earlier release: the rollups go on from it, counting only what is past it.
        processor.close();
        metadata.delete(TimelineMetadata.ROLLUPS_BUILT);
        final byte[] second;
        try (var it = timelines.all()) {
            it.next();
            second = it.next().key.get();
        }
        redirects.put(LegacyMetadata.REBUILD_CURSOR, java.util.HexFormat.of().formatHex(second));
        counts.put(HourlyEventKey.of(PROJECT, HOUR, "$pageview"), 2L);
        processor = new TimelineProcessor(Duration.ZERO, 4);
        processor.init(context);
        assertThat(redirects.get(LegacyMetadata.REBUILD_CURSOR)).isNull();
        rebuildSome();
        assertThat(built()).isTrue();
        assertThat(count()).as("the two before the cursor, and the one after it").isEqualTo(3);
    }

    /** Runs the rebuild's punctuation once, as the wall clock would; nothing when no rebuild is scheduled (it ended). */
    private void rebuildSome() {
        context.scheduledPunctuators().stream().filter(p -> p.getInterval().equals(RollupRebuild.INTERVAL) && !p.cancelled())
                .reduce((first, second) -> second)
                .ifPresent(p -> p.getPunctuator().punctuate(context.currentSystemTimeMs()));
    }

    private boolean built() {
        return metadata.get(TimelineMetadata.ROLLUPS_BUILT) != null;
    }

    /** The uuids of the rows in the project's event blocks that are not deleted. */
    private List<String> blockRows() {
        final List<String> uuids = new java.util.ArrayList<>();
        StoredBlocks.read(new StoredBlocks.Source(PROJECT, blocks, timelines::get), StoredBlocks.sealedIn(blocks::get), (block, deleted) -> {
            for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                uuids.add(block.uuid(r).toString());
            }
        });
        return uuids;
    }

    /** An event arriving for a person's timeline (as moved events do: already encoded). */
    private void process(final UUID person, final String event, final Instant at) {
        processor.process(new Record<>(PROJECT + ":" + person, encoded(person, event, at), at.toEpochMilli()));
    }

    private void put(final UUID person, final String event, final Instant at) {
        final byte[] value = encoded(person, event, at);
        final TimelineEvent decoded = TimelineEvent.decode(value);
        timelines.put(TimelineKeys.of(PROJECT, person, decoded.timeMicros(), decoded.uuid()), value);
    }

    private static byte[] encoded(final UUID person, final String event, final Instant at) {
        return new TimelineEvent(TimelineEvent.micros(at), UUID.randomUUID(), event, person.toString(), Map.of(), "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8)).encode();
    }

    private long count() {
        final Long count = counts.get(HourlyEventKey.of(PROJECT, HOUR, "$pageview"));
        return count == null ? 0 : count;
    }

    private long markedPersons() {
        final long day = UniqueMarkers.dayOf(HOUR);
        long persons = 0;
        try (var it = markers.range(UniqueMarkers.dayStart(PROJECT, "$pageview", day), UniqueMarkers.dayEnd(PROJECT, "$pageview", day))) {
            while (it.hasNext()) {
                it.next();
                persons++;
            }
        }
        return persons;
    }
}
