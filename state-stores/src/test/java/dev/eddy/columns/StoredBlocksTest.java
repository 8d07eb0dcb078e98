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
            // Properties in columns of a few values; one only from row 280 of every 300 on (absent before it).
            final String properties = "{\"n\":" + sequence % 5 + (sequence % 300 >= 280 ? ",\"late\":\"x" + sequence % 2 + "\"" : "") + "}";
            final TimelineEvent event = new TimelineEvent(1_000_000L * sequence, new UUID(7, sequence), "$pageview", "d", Map.of(),
                    properties.getBytes(StandardCharsets.UTF_8));
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
                blocks.put(BlockKeys.entriesChanged(PROJECT), BlockKeys.number(sequence));
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
                blocks.put(BlockKeys.entriesChanged(PROJECT), BlockKeys.number(sequence));
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
        return read(newest, deletedOfBlock0, KeptTail.none(), new ArrayList<>());
    }

    /** The same, with the tail kept in {@code tail}; each block visited added to {@code visited}. */
    private List<Long> read(final long newest, final BitSet deletedOfBlock0, final KeptTail tail, final List<EventBlock> visited) {
        return read(newest, deletedOfBlock0, tail, KeptEntries.none(), visited);
    }

    /** The same, with the range as walked kept in {@code entries} too. */
    private List<Long> read(final long newest, final BitSet deletedOfBlock0, final KeptTail tail, final KeptEntries entries,
                            final List<EventBlock> visited) {
        if (!deletedOfBlock0.isEmpty()) {
            blocks.put(BlockKeys.deleted(PROJECT, 0), BlockKeys.deletedValue(deletedOfBlock0));
            blocks.put(BlockKeys.entriesChanged(PROJECT), BlockKeys.number(1_000_000 + deletedOfBlock0.hashCode()));
        }
        blocks.put(BlockKeys.newest(PROJECT), BlockKeys.number(newest));
        final List<Long> rows = new ArrayList<>();
        final java.util.function.Function<Bytes, byte[]> lookups = key -> {
            timelineLookups++;
            return timelines.get(key);
        };
        StoredBlocks.read(new StoredBlocks.Source(PROJECT, blocks, lookups, tail, entries), StoredBlocks.sealedIn(blocks::get), (block, deleted) -> {
            visited.add(block);
            for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                rows.add(block.uuid(r).getLeastSignificantBits());
            }
        });
        return rows;
    }

    private int timelineLookups;

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
    void tailRowsKeptBetweenReadsAreReadOnceAndTheirBlockShared() {
        storeUpTo(299);
        final KeptTail tail = KeptTail.kept();
        final List<EventBlock> first = new ArrayList<>();
        assertThat(read(299, new BitSet(), tail, first)).isEqualTo(upTo(299));
        assertThat(timelineLookups).as("the tail's 44 rows").isEqualTo(44);

        final List<EventBlock> again = new ArrayList<>();
        assertThat(read(299, new BitSet(), tail, again)).isEqualTo(upTo(299));
        assertThat(timelineLookups).as("nothing new: no row read again").isEqualTo(44);
        assertThat(again.get(again.size() - 1)).as("the same tail block, built once").isSameAs(first.get(first.size() - 1));

        storeUpTo(302);
        assertThat(read(302, new BitSet(), tail, new ArrayList<>())).isEqualTo(upTo(302));
        assertThat(timelineLookups).as("only the 3 new rows").isEqualTo(47);

        storeUpTo(520);
        assertThat(read(520, new BitSet(), tail, new ArrayList<>())).isEqualTo(upTo(520));
        assertThat(timelineLookups).as("rows 303 to 511 come in their part; 512 to 520 are new").isEqualTo(56);
        assertThat(tail.keptRange()).as("rows 303 to 511 left the tail for their part: kept from the newest row's part")
                .containsExactly(512, 520);
    }

    @Test
    void aTailBlockGrowsFromTheOneBuiltBeforeAndEqualsOneBuiltAfresh() {
        final KeptTail tail = KeptTail.kept();
        final BitSet deleted = new BitSet();
        for (long newest = 256; newest < 320; newest++) {
            storeUpTo(newest);
            if (newest == 290) {
                // A row deleted since the last read: the block is built again without it, and grows from there.
                deleted.set(270);
            }
            final List<EventBlock> kept = new ArrayList<>();
            final List<EventBlock> fresh = new ArrayList<>();
            assertThat(read(newest, deleted, tail, kept)).isEqualTo(read(newest, deleted, KeptTail.none(), fresh));
            final EventBlock grown = kept.get(kept.size() - 1);
            assertThat(grown.encode()).as("the tail to row %d", newest).isEqualTo(fresh.get(fresh.size() - 1).encode());
            assertThat(grown.property("n").value(grown.rows() - 1).asInt()).isEqualTo((int) (newest % 5));
        }
    }

    @Test
    void aRangeWalkedIsKeptUntilItsCountOfChangesMovesOn() {
        storeUpTo(299);
        final KeptTail tail = KeptTail.kept();
        final KeptEntries entries = KeptEntries.kept();
        assertThat(read(299, new BitSet(), tail, entries, new ArrayList<>())).isEqualTo(upTo(299));
        final long walked = blocks.entriesRead();
        assertThat(read(299, new BitSet(), tail, entries, new ArrayList<>())).isEqualTo(upTo(299));
        assertThat(blocks.entriesRead()).as("the range not walked again, no tail row read again").isEqualTo(walked);

        storeUpTo(310);
        assertThat(read(310, new BitSet(), tail, entries, new ArrayList<>())).as("new tail rows: the range unchanged")
                .isEqualTo(upTo(310));
        assertThat(blocks.entriesRead()).as("only the 11 new tail rows").isEqualTo(walked + 11);

        // A part made between the read of the newest row and the walk: its tail rows are gone, the count moved on.
        storeUpTo(520);
        assertThat(read(310, new BitSet(), tail, entries, new ArrayList<>())).as("part 1 met in a new walk").isEqualTo(upTo(511));
        final BitSet deleted = new BitSet();
        deleted.set(7);
        final List<Long> expected = new ArrayList<>(upTo(520));
        expected.remove(7L);
        assertThat(read(520, deleted, tail, entries, new ArrayList<>())).as("rows marked deleted since: walked again").isEqualTo(expected);
    }

    @Test
    void aRowDeletedInAKeptTailLeavesItsBlock() {
        storeUpTo(299);
        final KeptTail tail = KeptTail.kept();
        assertThat(read(299, new BitSet(), tail, new ArrayList<>())).isEqualTo(upTo(299));
        final BitSet deleted = new BitSet();
        deleted.set(260);
        final List<Long> expected = new ArrayList<>(upTo(299));
        expected.remove(260L);
        assertThat(read(299, deleted, tail, new ArrayList<>())).isEqualTo(expected);
        assertThat(timelineLookups).as("the kept rows, not read again").isEqualTo(44);
    }

    @Test
    void aSlowReadWhoseKeptRowsWereLetGoIsToldToReadAgain() {
        storeUpTo(299);
        final KeptTail tail = KeptTail.kept();
        assertThat(read(299, new BitSet(), tail, new ArrayList<>())).isEqualTo(upTo(299));
        // A slow read asks from where to read the store with the newest row at 310: after the rows kept.
        assertThat(tail.readFrom(310)).isEqualTo(300);
        // Meanwhile a faster read goes far ahead: rows up to 1,000 stored, the kept rows of part 1 let go.
        storeUpTo(1000);
        assertThat(read(1000, new BitSet(), tail, new ArrayList<>())).isEqualTo(upTo(1000));
        assertThat(tail.keptRange()[0]).isGreaterThan(299);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> tail.block(256, 310, 300, new long[0], new EventBlock.Row[0], 0, s -> false))
                .isInstanceOf(KeptTail.Gone.class);
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
