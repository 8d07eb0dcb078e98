package dev.eddy.columns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.SortedStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/**
 * A project's rows read from its parts and its tail slots, each once, including while rows arrive and a part is made
 * between the read of the newest row and the walk of the entries.
 */
class StoredBlocksTest {
    private static final long PROJECT = 5;
    private final SortedStore<Bytes, byte[]> blocks = new SortedStore<>(Serdes.Bytes());
    private final SortedStore<Bytes, byte[]> timelines = new SortedStore<>(Serdes.Bytes());
    private final List<Bytes> keys = new ArrayList<>();
    private final List<byte[]> events = new ArrayList<>();

    /**
     * Stores rows up to {@code last} as the writer does: each in the tail, each full part made (then its tail rows
     * deleted), each full block sealed (then its parts deleted, unless {@code keepSealedParts}: a reader in between).
     */
    private void storeUpTo(final long last, final boolean keepSealedParts) {
        for (long sequence = keys.size(); sequence <= last; sequence++) {
            final TimelineEvent event = new TimelineEvent(1_000_000L * sequence, new UUID(7, sequence), "$pageview", "d", Map.of(),
                    "{}".getBytes(StandardCharsets.UTF_8));
            final Bytes key = TimelineKeys.of(PROJECT, new UUID(1, sequence % 3), event.timeMicros(), event.uuid());
            keys.add(key);
            events.add(event.encode());
            if (sequence == 0) {
                blocks.put(BlockKeys.tailEnd(PROJECT), new byte[0]);
            }
            timelines.put(key, event.encode());
            blocks.put(BlockKeys.tail(PROJECT, sequence), TailRow.encode(key));
            blocks.put(BlockKeys.newest(PROJECT), BlockKeys.number(sequence));
            final long block = BlockKeys.blockOf(sequence);
            if ((sequence + 1) % BlockKeys.PART_ROWS == 0) {
                final long first = sequence + 1 - BlockKeys.PART_ROWS;
                blocks.put(BlockKeys.part(PROJECT, block, BlockKeys.rowOf(sequence) / BlockKeys.PART_ROWS), rows(first, sequence).encode());
                for (long s = first; s <= sequence; s++) {
                    blocks.delete(BlockKeys.tail(PROJECT, s));
                }
            }
            if (BlockKeys.rowOf(sequence) == BlockKeys.ROWS - 1) {
                final EventBlock sealed = rows(block * BlockKeys.ROWS, sequence);
                final EventBlock.Stored stored = sealed.encodeSections();
                blocks.put(BlockKeys.sealedBlock(PROJECT, block), stored.header());
                stored.sections().forEach((name, bytes) -> blocks.put(BlockKeys.sealedSection(PROJECT, block, name), bytes));
                blocks.put(BlockKeys.sealed(PROJECT, block), new BlockKeys.Sealed(block, sealed.firstMicros(), sealed.lastMicros()).encode());
                for (int part = 0; part < BlockKeys.ROWS / BlockKeys.PART_ROWS && !keepSealedParts; part++) {
                    blocks.delete(BlockKeys.part(PROJECT, block, part));
                }
            }
        }
    }

    private void storeUpTo(final long last) {
        storeUpTo(last, false);
    }

    private EventBlock rows(final long first, final long last) {
        final EventBlock.Builder rows = new EventBlock.Builder();
        for (long s = first; s <= last; s++) {
            rows.add(TailRow.row(keys.get((int) s), events.get((int) s)));
        }
        return rows.build();
    }

    /** The uuids' low bits of the rows a read visits, with the newest row as {@code newest} reads it. */
    private List<Long> read(final long newest, final BitSet deletedOfBlock0) {
        if (!deletedOfBlock0.isEmpty()) {
            blocks.put(BlockKeys.deleted(PROJECT, 0), BlockKeys.deletedValue(deletedOfBlock0));
        }
        blocks.put(BlockKeys.newest(PROJECT), BlockKeys.number(newest));
        final List<Long> rows = new ArrayList<>();
        StoredBlocks.read(new StoredBlocks.Source(PROJECT, blocks, timelines::get), StoredBlocks.sealedIn(blocks::get), event -> true, (block, deleted) -> {
            for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                rows.add(block.uuid(r).getLeastSignificantBits());
            }
        });
        return rows;
    }

    private static List<Long> upTo(final long last) {
        return java.util.stream.LongStream.rangeClosed(0, last).boxed().toList();
    }

    @Test
    void thePartsThenTheTailEachRowOnce() {
        storeUpTo(299);
        assertThat(read(299, new BitSet())).isEqualTo(upTo(299));
        assertThat(blocks.entriesRead()).as("the part, then the tail's 44 rows").isEqualTo(1 + 44);
    }

    @Test
    void aFullPartIsReadFromThePartAndNotFromItsSlots() {
        storeUpTo(511);
        assertThat(read(511, new BitSet())).isEqualTo(upTo(511));
    }

    @Test
    void rowsStoredAfterTheNewestWasReadWaitForTheNextRead() {
        storeUpTo(299);
        assertThat(read(280, new BitSet())).isEqualTo(upTo(280));
    }

    @Test
    void aPartMadeAfterTheNewestWasReadIsReadOnceFromThePart() {
        storeUpTo(300);
        final long newestAsRead = 300;
        storeUpTo(520);
        assertThat(read(newestAsRead, new BitSet())).as("part 1 (256 to 511) met in the walk; 512 on is after the read")
                .isEqualTo(upTo(511));
    }

    @Test
    void aSealedBlocksPartsLeftWhileTheWriterRemovesThemArePassedBy() {
        storeUpTo(BlockKeys.ROWS + 9, true);
        assertThat(read(BlockKeys.ROWS + 9, new BitSet())).isEqualTo(upTo(BlockKeys.ROWS + 9));
    }

    @Test
    void tailRowsKeptBetweenReadsAreParsedOnce() {
        storeUpTo(299);
        final Map<Long, EventBlock.Row> kept = new java.util.HashMap<>();
        final List<Long> parsed = new ArrayList<>();
        final StoredBlocks.TailRows keeping = (sequence, timelineKey, parse) -> {
            assertThat(timelineKey).isEqualTo(keys.get((int) sequence));
            return kept.computeIfAbsent(sequence, s -> {
                parsed.add(s);
                return parse.get();
            });
        };
        final StoredBlocks.Source source = new StoredBlocks.Source(PROJECT, blocks, timelines::get, keeping);
        final List<Long> rows = new ArrayList<>();
        final StoredBlocks.Visitor collect = (block, deleted) -> {
            for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                rows.add(block.uuid(r).getLeastSignificantBits());
            }
        };
        StoredBlocks.read(source, StoredBlocks.sealedIn(blocks::get), row -> true, collect);
        storeUpTo(302);
        rows.clear();
        StoredBlocks.read(source, StoredBlocks.sealedIn(blocks::get), row -> row.timeMicros() / 1_000_000L % 2 == 0, collect);
        assertThat(parsed).as("each tail row parsed once, the new ones at the second read").isEqualTo(
                java.util.stream.LongStream.rangeClosed(256, 302).boxed().toList());
        assertThat(rows).as("the part's rows, and the tail rows the read keeps").containsAll(upTo(255))
                .containsAll(java.util.stream.LongStream.rangeClosed(256, 302).filter(n -> n % 2 == 0).boxed().toList())
                .hasSize(256 + 24);
    }

    @Test
    void deletedTailRowsAreLeftOut() {
        storeUpTo(299);
        final BitSet deleted = new BitSet();
        deleted.set(3);
        deleted.set(260);
        final List<Long> expected = new ArrayList<>(upTo(299));
        expected.removeAll(List.of(3L, 260L));
        assertThat(read(299, deleted)).isEqualTo(expected);
    }
}
