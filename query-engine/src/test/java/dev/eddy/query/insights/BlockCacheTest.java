package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class BlockCacheTest {
    private static final long PROJECT = 7;
    private final Map<Bytes, byte[]> store = new HashMap<>();
    private final List<Bytes> reads = new ArrayList<>();

    private byte[] get(final Bytes key) {
        reads.add(key);
        return store.get(key);
    }

    /** Block {@code number} of 100 rows, one a minute from {@code firstMinute}; its entry. */
    private BlockKeys.Sealed seal(final long number, final long id, final int firstMinute) {
        final EventBlock.Builder builder = new EventBlock.Builder();
        for (int r = 0; r < 100; r++) {
            builder.add(new EventBlock.Row((firstMinute + r) * 60_000_000L, new UUID(number, r), new UUID(1, r % 10), "d" + r, "$pageview",
                    Json.mapper().createObjectNode().put("$browser", r % 2 == 0 ? "Chrome" : "Safari")));
        }
        final EventBlock block = builder.build();
        final EventBlock.Stored stored = block.encodeSections();
        store.put(BlockKeys.sealedBlock(PROJECT, number), stored.header());
        stored.sections().forEach((name, bytes) -> store.put(BlockKeys.sealedSection(PROJECT, number, name), bytes));
        return new BlockKeys.Sealed(id, block.firstMicros(), block.lastMicros());
    }

    /** Block {@code number} as one read of {@code cache} finds it, used by {@code use} within the read. */
    private EventBlock readOnce(final BlockCache cache, final long number, final BlockKeys.Sealed entry,
                                final java.util.function.Consumer<EventBlock> use) {
        try (BlockCache.Read read = cache.read(this::get, (from, to) -> true)) {
            final EventBlock block = read.block(PROJECT, number, entry);
            use.accept(block);
            return block;
        }
    }

    @Test
    void aSealedBlockIsReadFromTheStoreOnceAndThenKeptDecoded() {
        final BlockCache cache = new BlockCache(64L << 20, null);
        final BlockKeys.Sealed entry = seal(0, 42, 0);
        final EventBlock first = readOnce(cache, 0, entry, block -> {
            assertThat(block.events().value(3).asText()).isEqualTo("$pageview");
            assertThat(block.property("$browser").value(3).asText()).isEqualTo("Safari");
        });
        assertThat(reads).as("the table of sections, then only the columns the read used").containsExactly(BlockKeys.sealedBlock(PROJECT, 0),
                BlockKeys.sealedSection(PROJECT, 0, "event"), BlockKeys.sealedSection(PROJECT, 0, "p:$browser"));
        assertThat(cache.weight()).as("weighed again with the columns the read decoded").isEqualTo(first.memoryBytes())
                .isGreaterThan(store.get(BlockKeys.sealedBlock(PROJECT, 0)).length + 2L * 100 * Character.BYTES);

        try (BlockCache.Read read = cache.read(this::get, (from, to) -> true)) {
            final EventBlock again = read.block(PROJECT, 0, entry);
            assertThat(again).as("the same content: the same decoded block").isSameAs(first);
            assertThat(again.property("$browser").value(4).asText()).isEqualTo("Chrome");
            assertThat(again.timeMicros(4)).as("a column not read before is read now").isEqualTo(4 * 60_000_000L);
        }
        assertThat(reads).hasSize(4).endsWith(BlockKeys.sealedSection(PROJECT, 0, "time"));

        // Sealed again (removed and rebuilt, say): another id is another block, read from the store.
        final BlockKeys.Sealed resealed = seal(0, 43, 500);
        try (BlockCache.Read read = cache.read(this::get, (from, to) -> true)) {
            final EventBlock again = read.block(PROJECT, 0, resealed);
            assertThat(again).isNotSameAs(first);
            assertThat(again.firstMicros()).isEqualTo(500 * 60_000_000L);
        }
        assertThat(reads).hasSize(6);
    }

    @Test
    void aBlockRemovedWhileCachedIsGoneForColumnsNotReadYet() {
        final BlockCache cache = new BlockCache(64L << 20, null);
        final BlockKeys.Sealed entry = seal(0, 42, 0);
        final EventBlock block = readOnce(cache, 0, entry, EventBlock::events);
        store.clear();
        assertThat(block.events().value(0).asText()).as("decoded already").isEqualTo("$pageview");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> block.timeMicros(0)).isInstanceOf(EventBlock.Gone.class);
    }

    @Test
    void blocksOutsideTheSpanOrRemovedAreNotVisited() {
        final BlockCache cache = new BlockCache(64L << 20, null);
        final BlockKeys.Sealed early = seal(0, 1, 0);
        final BlockKeys.Sealed late = seal(1, 2, 1000);
        store.keySet().removeIf(key -> key.compareTo(BlockKeys.sealedBlock(PROJECT, 1)) >= 0
                && key.compareTo(BlockKeys.sealedSectionsEnd(PROJECT, 1)) <= 0);
        try (BlockCache.Read read = cache.read(this::get, (from, to) -> to >= 900 * 60_000_000L)) {
            assertThat(read.block(PROJECT, 0, early)).as("before the range: not read").isNull();
            assertThat(read.block(PROJECT, 1, late)).as("removed since the entry was read").isNull();
        }
        assertThat(reads).containsExactly(BlockKeys.sealedBlock(PROJECT, 1));
        assertThat(cache.weight()).isZero();
    }

    @Test
    void withoutACacheEveryReadDecodes() {
        final BlockKeys.Sealed entry = seal(0, 1, 0);
        for (int i = 0; i < 2; i++) {
            try (BlockCache.Read read = BlockCache.NONE.read(this::get, (from, to) -> true)) {
                assertThat(read.block(PROJECT, 0, entry).events().value(0).asText()).isEqualTo("$pageview");
            }
        }
        assertThat(reads).hasSize(4);
    }

    @Test
    void theCacheStaysUnderItsSize() {
        final BlockKeys.Sealed entry = seal(0, 1, 0);
        final long one;
        try (BlockCache.Read read = new BlockCache(64L << 20, null).read(this::get, (from, to) -> true)) {
            one = read.block(PROJECT, 0, entry).memoryBytes();
        }
        final BlockCache cache = new BlockCache(one * 3, null);
        for (int b = 0; b < 10; b++) {
            final BlockKeys.Sealed sealed = seal(b, 100 + b, b * 100);
            try (BlockCache.Read read = cache.read(this::get, (from, to) -> true)) {
                read.block(PROJECT, b, sealed).events();
            }
        }
        assertThat(cache.weight()).isLessThanOrEqualTo(one * 3);
    }
}
