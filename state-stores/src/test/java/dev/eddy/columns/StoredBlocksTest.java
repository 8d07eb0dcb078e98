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

    /** Stores rows up to {@code last} as the writer does: each in its slot, each full part made. */
    private void storeUpTo(final long last) {
        for (long sequence = keys.size(); sequence <= last; sequence++) {
            final TimelineEvent event = new TimelineEvent(1_000_000L * sequence, new UUID(7, sequence), "$pageview", "d", Map.of(),
                    "{}".getBytes(StandardCharsets.UTF_8));
            final Bytes key = TimelineKeys.of(PROJECT, new UUID(1, sequence % 3), event.timeMicros(), event.uuid());
            timelines.put(key, event.encode());
            keys.add(key);
            blocks.put(BlockKeys.tail(PROJECT, sequence), new TailRow(sequence, key).encode());
            blocks.put(BlockKeys.newest(PROJECT), BlockKeys.number(sequence));
            if ((sequence + 1) % BlockKeys.PART_ROWS == 0) {
                final EventBlock.Builder part = new EventBlock.Builder();
                for (long s = sequence + 1 - BlockKeys.PART_ROWS; s <= sequence; s++) {
                    part.add(TailRow.row(keys.get((int) s), timelines.get(keys.get((int) s))));
                }
                blocks.put(BlockKeys.part(PROJECT, BlockKeys.blockOf(sequence), BlockKeys.rowOf(sequence) / BlockKeys.PART_ROWS),
                        part.build().encode());
            }
        }
    }

    /** The uuids' low bits of the rows a read visits, with the newest row as {@code newest} reads it. */
    private List<Long> read(final long newest, final BitSet deletedOfBlock0) {
        if (!deletedOfBlock0.isEmpty()) {
            blocks.put(BlockKeys.deleted(PROJECT, 0), BlockKeys.deletedValue(deletedOfBlock0));
        }
        final StoredBlocks.Source source = new StoredBlocks.Source(PROJECT,
                () -> blocks.range(BlockKeys.projectStart(PROJECT), BlockKeys.projectEnd(PROJECT)),
                key -> key.equals(BlockKeys.newest(PROJECT)) ? BlockKeys.number(newest) : blocks.get(key), timelines::get);
        final List<Long> rows = new ArrayList<>();
        StoredBlocks.read(source, StoredBlocks.sealedIn(blocks::get), event -> true, (block, deleted) -> {
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
        assertThat(blocks.entriesRead()).as("the walk meets the part only: the tail is read by key").isEqualTo(1);
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
