package dev.eddy.topology.trends;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.KeptEntries;
import dev.eddy.columns.KeptTail;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.events.CapturedEvent;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.topology.TopologyFixture;
import dev.eddy.topology.TopologyTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

/**
 * The event blocks through the whole topology hold exactly the timelines' events, each once, under the person whose
 * timeline holds it: through sealing, identify merges moving events between persons, re-delivered duplicates and
 * retention expiry, which removes whole blocks once every row of them has gone.
 */
class EventBlocksTopologyTest extends TopologyTest {
    @Override
    protected Map<String, String> env() {
        return Map.of("EDDY_STREAMS_DEDUP_RETENTION", "1h", "EDDY_STREAMS_TIMELINE_RETENTION", "2d");
    }

    @Test
    void blocksHoldExactlyTheTimelinesEvents() {
        final Random random = new Random(18);
        final List<CapturedEvent> sent = new ArrayList<>();
        // Day 1: anonymous visitors, some identifying; more than two blocks' rows.
        for (int i = 0; i < 2 * BlockKeys.ROWS + 700; i++) {
            final int visitor = random.nextInt(40);
            final CapturedEvent event;
            if (random.nextInt(60) == 0) {
                event = t.send("user-" + visitor, "$identify", "{\"$anon_distinct_id\":\"anon-" + visitor + "\"}");
            } else {
                event = t.send((random.nextBoolean() ? "anon-" : "user-") + visitor, random.nextBoolean() ? "$pageview" : "signup",
                        "{\"$browser\":\"" + (random.nextBoolean() ? "Chrome" : "Safari") + "\",\"n\":" + i + "}");
            }
            sent.add(event);
            if (random.nextInt(50) == 0) {
                t.send(sent.get(random.nextInt(sent.size())));
            }
            if (i % 97 == 0) {
                assertThat(blocks(keptTail, keptEntries)).as("after %d events, read with what earlier reads kept", i + 1)
                        .isEqualTo(blocks(KeptTail.none(), KeptEntries.none()));
            }
        }
        assertThat(kinds().get(BlockKeys.Kind.SEALED)).as("sealed blocks").isEqualTo(2);
        assertThat(kinds().get(BlockKeys.Kind.PART)).as("the filling block's parts only: the sealed blocks' went")
                .isLessThan(BlockKeys.ROWS / BlockKeys.PART_ROWS);
        assertThat(tailRows()).as("the tail holds the rows not in a part yet, and no deleted one is left in reach")
                .isLessThan(BlockKeys.PART_ROWS).isPositive();
        assertThat(sealedBlock(0)).as("a sealed block is stored apart from its entry").isNotNull();
        assertThat(sealedBlock(1)).isNotNull();
        assertBlocksEqualTimelines(2 * BlockKeys.ROWS + 700);

        // Day 2: more events, stored a day later.
        t.driver().advanceWallClockTime(Duration.ofDays(1));
        for (int i = 0; i < 500; i++) {
            t.send("late-" + random.nextInt(20), "$pageview", "{}");
        }
        assertBlocksEqualTimelines(2 * BlockKeys.ROWS + 1200);

        // Two days after the first day ended, its events are past the retention (2 days); whole blocks go.
        t.driver().advanceWallClockTime(Duration.ofHours(40));
        assertBlocksEqualTimelines(500);
        assertThat(kinds().get(BlockKeys.Kind.SEALED)).as("blocks whose every row expired are removed").isNull();
        assertThat(sealedBlock(0)).as("with their sealed block").isNull();
        assertThat(sealedBlock(1)).isNull();
        try (KeyValueIterator<Bytes, byte[]> left = t.driver().<Bytes, byte[]>getKeyValueStore(StoreNames.EVENT_BLOCKS)
                .range(BlockKeys.sealedBlock(TopologyFixture.PROJECT, 0), BlockKeys.sealedSectionsEnd(TopologyFixture.PROJECT, 1))) {
            assertThat(left.hasNext()).as("and every section of it").isFalse();
        }

        t.driver().advanceWallClockTime(Duration.ofDays(2));
        assertBlocksEqualTimelines(0);
        assertThat(kinds()).as("only the unsealed block's parts, all deleted, are left").containsOnlyKeys(BlockKeys.Kind.PART, BlockKeys.Kind.DELETED);
    }

    private void assertBlocksEqualTimelines(final int expected) {
        final Map<String, Integer> timelines = new HashMap<>();
        final KeyValueStore<Bytes, byte[]> timelineStore = t.driver().getKeyValueStore(StoreNames.EVENT_TIMELINES);
        try (KeyValueIterator<Bytes, byte[]> it = timelineStore.all()) {
            it.forEachRemaining(e -> timelines.merge(identity(TimelineKeys.person(e.key).toString(), TimelineEvent.decode(e.value)), 1, Integer::sum));
        }
        final Map<String, Integer> blocks = blocks(KeptTail.none(), KeptEntries.none());
        assertThat(timelines.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(expected);
        assertThat(blocks).isEqualTo(timelines);
        assertThat(blocks(keptTail, keptEntries)).as("read with what earlier reads kept").isEqualTo(timelines);
    }

    /** The tail and the range as kept by the reads of this test: a change the writer did not count would show. */
    private final KeptTail keptTail = KeptTail.kept();
    private final KeptEntries keptEntries = KeptEntries.kept();

    /** The project's rows as a read of its blocks finds them (each with its person, uuid, event, time, properties). */
    private Map<String, Integer> blocks(final KeptTail tail, final KeptEntries entries) {
        final Map<String, Integer> blocks = new HashMap<>();
        final KeyValueStore<Bytes, byte[]> timelineStore = t.driver().getKeyValueStore(StoreNames.EVENT_TIMELINES);
        final KeyValueStore<Bytes, byte[]> blockStore = t.driver().getKeyValueStore(StoreNames.EVENT_BLOCKS);
        StoredBlocks.read(new StoredBlocks.Source(TopologyFixture.PROJECT, blockStore, timelineStore::get, tail, entries),
                StoredBlocks.sealedIn(blockStore::get), (block, deleted) -> {
                    for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                        final var row = block.row(r);
                        blocks.merge(String.join(" ", row.person().toString(), row.uuid().toString(), row.event(),
                                Long.toString(row.timeMicros()), row.properties().toString()), 1, Integer::sum);
                    }
                });
        return blocks;
    }

    private static String identity(final String person, final TimelineEvent event) {
        return String.join(" ", person, event.uuid().toString(), event.event(), Long.toString(event.timeMicros()),
                dev.eddy.serde.Json.mapper().valueToTree(readTree(event.properties())).toString());
    }

    private static Object readTree(final byte[] json) {
        try {
            return dev.eddy.serde.Json.mapper().readTree(json);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private byte[] sealedBlock(final long block) {
        return t.driver().<Bytes, byte[]>getKeyValueStore(StoreNames.EVENT_BLOCKS).get(BlockKeys.sealedBlock(TopologyFixture.PROJECT, block));
    }

    /** How many rows the project's tail holds. */
    private int tailRows() {
        final KeyValueStore<Bytes, byte[]> blockStore = t.driver().getKeyValueStore(StoreNames.EVENT_BLOCKS);
        int slots = 0;
        try (KeyValueIterator<Bytes, byte[]> it = blockStore.range(BlockKeys.tail(TopologyFixture.PROJECT, 0),
                BlockKeys.tail(TopologyFixture.PROJECT, Long.MAX_VALUE - 1))) {
            for (; it.hasNext(); it.next()) {
                slots++;
            }
        }
        return slots;
    }

    private Map<BlockKeys.Kind, Integer> kinds() {
        final Map<BlockKeys.Kind, Integer> kinds = new HashMap<>();
        final KeyValueStore<Bytes, byte[]> blockStore = t.driver().getKeyValueStore(StoreNames.EVENT_BLOCKS);
        try (KeyValueIterator<Bytes, byte[]> it = blockStore.range(BlockKeys.projectStart(TopologyFixture.PROJECT),
                BlockKeys.projectEnd(TopologyFixture.PROJECT))) {
            it.forEachRemaining((KeyValue<Bytes, byte[]> e) -> kinds.merge(BlockKeys.kind(e.key), 1, Integer::sum));
        }
        return kinds;
    }
}
