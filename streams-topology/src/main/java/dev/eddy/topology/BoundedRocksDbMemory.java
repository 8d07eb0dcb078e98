package dev.eddy.topology;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the off-heap memory of every RocksDB store in the process together. Left to its defaults, Kafka Streams
 * gives each store partition its own 50 MB block cache and up to three 16 MB memtables: with Eddy's stores on 12
 * partitions that is gigabytes, and the resident size grew to 2.1 GB under the soak at a 1 GB heap. Here every store
 * shares one LRU cache of {@code streams.rocksdb-memory} bytes, which also holds their index and filter blocks, and
 * the memtables are charged to that same cache through one write buffer manager (at most half of it), so the total
 * stays near the configured figure however many partitions an instance takes. Memtables allocate in small arena
 * blocks, so the budget goes to what they hold, not to a megabyte reserved by each of a few hundred store partitions.
 *
 * <p>It also compresses what the stores write to disk, which Kafka Streams leaves uncompressed: LZ4 (a few hundred MB/s
 * a core) for data still being compacted, and Zstandard for the bottommost, longest-kept run, as RocksDB's tuning
 * guide advises. Timelines hold each event's property JSON, whose keys and values repeat from event to event.
 *
 * <p>Configured through {@link #MEMORY_BYTES} in the Streams properties ({@link StreamsProperties}); the cache and the
 * write buffer manager are per process and per size, shared by every store and every Kafka Streams client of the
 * process, and never closed by a store.
 */
public final class BoundedRocksDbMemory implements RocksDBConfigSetter {
    /** Streams property: the bytes all RocksDB stores of the process share. */
    public static final String MEMORY_BYTES = "eddy.rocksdb.memory.bytes";

    /** Share of the cache kept for index and filter blocks, evicted last: a miss there costs a disk read per lookup. */
    private static final double INDEX_FILTER_RATIO = 0.1;
    /** Memtables may take at most this share of the cache before RocksDB flushes the largest. */
    private static final double MEMTABLE_RATIO = 0.5;
    /** A memtable is flushed at this size; small, since many partitions share the memtable budget. */
    private static final long MEMTABLE_BYTES = 8L * 1024 * 1024;
    private static final int MEMTABLES = 2;
    /**
     * Memtables take memory in blocks of this size. RocksDB's default, an eighth of the memtable (1 MiB here), charges
     * every store partition's memtable at least that much against the shared budget however little it holds: with a
     * hundred-odd store partitions the budget is spent on empty blocks, and the write buffer manager flushes memtables
     * holding a few kilobytes, over and over.
     */
    private static final long ARENA_BLOCK_BYTES = 64L * 1024;
    /** Larger than RocksDB's 4 KB default: fewer index entries to keep cached for the same data. */
    private static final long BLOCK_BYTES = 16L * 1024;

    private record Shared(Cache cache, WriteBufferManager writeBuffers) {
    }

    private static final Map<Long, Shared> SHARED = new ConcurrentHashMap<>();

    @Override
    public void setConfig(final String storeName, final Options options, final Map<String, Object> configs) {
        final Shared shared = shared(memoryBytes(configs));
        final BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
        table.setBlockCache(shared.cache());
        table.setCacheIndexAndFilterBlocks(true);
        table.setCacheIndexAndFilterBlocksWithHighPriority(true);
        table.setPinTopLevelIndexAndFilter(true);
        table.setBlockSize(BLOCK_BYTES);
        options.setTableFormatConfig(table);
        options.setWriteBufferManager(shared.writeBuffers());
        options.setWriteBufferSize(MEMTABLE_BYTES);
        options.setMaxWriteBufferNumber(MEMTABLES);
        options.setArenaBlockSize(ARENA_BLOCK_BYTES);
        // Kafka Streams turns this on, which leaves the largest level without bloom filters: right for stores read
        // mostly for keys they hold, wrong for Eddy's, most of whose reads look for a key that is not there yet (is
        // this event stored, is this person's hour marked, is this distinct id held). Without filters each such read
        // searched a data block of the last level; the profile put that at a tenth of the topology's CPU.
        options.setOptimizeFiltersForHits(false);
        options.setCompressionType(CompressionType.LZ4_COMPRESSION);
        options.setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION);
    }

    @Override
    public void close(final String storeName, final Options options) {
        // The cache and the write buffer manager are shared by every store of the process: closing one store must
        // not free them.
    }

    private static Shared shared(final long bytes) {
        return SHARED.computeIfAbsent(bytes, b -> {
            final Cache cache = new LRUCache(b, -1, false, INDEX_FILTER_RATIO);
            return new Shared(cache, new WriteBufferManager((long) (b * MEMTABLE_RATIO), cache));
        });
    }

    /**
     * Bytes of a {@code bytes} budget in use: the shared block cache's usage, the memtables' reservations included
     * ({@code eddy_rocksdb_memory_used_bytes}).
     */
    public static long usedBytes(final long bytes) {
        return shared(bytes).cache().getUsage();
    }

    static long memoryBytes(final Map<String, Object> configs) {
        final Object value = configs.get(MEMORY_BYTES);
        if (value == null) {
            throw new IllegalStateException(MEMORY_BYTES + " is not set: StreamsProperties installs this setter with it");
        }
        return value instanceof Number n ? n.longValue() : Long.parseLong(value.toString());
    }
}
