package dev.eddy.query.insights;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.StoredBlocks;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;

/**
 * Sealed event blocks kept decoded between queries, on the heap of the instance whose partitions hold them: DuckDB's
 * buffer pool, or Pinot's loaded segments, for Eddy's blocks. A sealed block never changes, and the id its entry
 * carries is new each time a block is sealed ({@link BlockKeys.Sealed}), so an entry is never stale: a block removed or
 * rebuilt is another key, and the old one ages out. A block is decoded column by column as queries ask
 * ({@link EventBlock}), and weighed by what it takes in memory after each read; the total stays under
 * {@code insights.block-cache} (least valuable blocks dropped first, by Caffeine's frequency and recency).
 */
final class BlockCache {
    private record Key(long projectId, long block, long id) {
    }

    /** A block and the weight the cache knows it by. */
    private record Entry(EventBlock block, long weight) {
    }

    /** Nothing cached: every read decodes the blocks it visits. */
    static final BlockCache NONE = new BlockCache(0, null);

    private final Cache<Key, Entry> blocks;

    /**
     * @param maxBytes what the decoded blocks may take on the heap together; 0 keeps none
     * @param registry where the cache's hits, misses and evictions are counted (as {@code cache.*{cache=event-blocks}})
     */
    BlockCache(final long maxBytes, final MeterRegistry registry) {
        if (maxBytes <= 0) {
            this.blocks = null;
            return;
        }
        this.blocks = Caffeine.newBuilder().maximumWeight(maxBytes).weigher((Key key, Entry entry) -> (int) Math.min(Integer.MAX_VALUE, entry.weight()))
                .recordStats().build();
        if (registry != null) {
            CaffeineCacheMetrics.monitor(registry, blocks, "event-blocks");
        }
    }

    /**
     * The sealed blocks of one read over a partition's store whose span meets {@code span}, from the cache or from
     * {@code store}; {@link Read#close} weighs again the blocks the read decoded further.
     */
    Read read(final Function<Bytes, byte[]> store, final Span span) {
        return new Read(store, span);
    }

    /** What the cached blocks weigh together, as last weighed. */
    long weight() {
        if (blocks == null) {
            return 0;
        }
        blocks.cleanUp();
        return blocks.policy().eviction().orElseThrow().weightedSize().orElseThrow();
    }

    /** Which time spans a read wants. */
    @FunctionalInterface
    interface Span {
        boolean overlaps(long firstMicros, long lastMicros);
    }

    final class Read implements StoredBlocks.Sealed, AutoCloseable {
        private final Function<Bytes, byte[]> store;
        private final Span span;
        private final List<Key> keys = new ArrayList<>();
        private final List<Entry> entries = new ArrayList<>();

        private Read(final Function<Bytes, byte[]> store, final Span span) {
            this.store = store;
            this.span = span;
        }

        @Override
        public EventBlock block(final long projectId, final long block, final BlockKeys.Sealed entry) {
            if (!span.overlaps(entry.firstMicros(), entry.lastMicros())) {
                return null;
            }
            if (blocks == null) {
                return load(projectId, block);
            }
            final Key key = new Key(projectId, block, entry.id());
            final Entry cached = blocks.get(key, k -> {
                final EventBlock loaded = load(projectId, block);
                return loaded == null ? null : new Entry(loaded, loaded.memoryBytes());
            });
            if (cached == null) {
                return null;
            }
            keys.add(key);
            entries.add(cached);
            return cached.block();
        }

        private EventBlock load(final long projectId, final long block) {
            return StoredBlocks.load(store, projectId, block);
        }

        /** Weighs again each block this read decoded more of. */
        @Override
        public void close() {
            for (int i = 0; i < keys.size(); i++) {
                final Entry entry = entries.get(i);
                final long now = entry.block().memoryBytes();
                if (now != entry.weight()) {
                    blocks.asMap().replace(keys.get(i), entry, new Entry(entry.block(), now));
                }
            }
        }
    }
}
