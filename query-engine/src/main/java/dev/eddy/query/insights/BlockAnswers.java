package dev.eddy.query.insights;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.KeptEntries;
import dev.eddy.columns.KeptTail;
import dev.eddy.columns.PartBytes;
import dev.eddy.funnels.FunnelProgress;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.util.BitSet;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * What each sealed event block added to a query of some shape, kept between queries: Druid's per-segment result
 * cache, for Eddy's blocks. A dashboard tile asks the same question again and again; its answer is the sum of its
 * blocks' answers, and only the blocks sealed since it last asked, and the rows of the blocks being filled, are read
 * again.
 *
 * <p>An answer is keyed by the block's entry (project, block number and the id drawn when it was sealed:
 * {@link BlockKeys.Sealed}) or a part's bytes ({@link PartBytes}), the block's deleted rows, and the query's shape: everything besides the block's rows
 * that decides the block's answer ({@code TrendQuery.blockShape}). So an answer is never stale: rows merged away or
 * expired change the deleted rows, a block sealed again gets another id, a query asking anything else (another
 * filter, another day's buckets) has another shape; the old keys age out. The answers' total weight stays under
 * {@code insights.answer-cache}, the least valuable dropped first (Caffeine's frequency and recency).
 *
 * <p>Funnels keep their {@link FunnelProgress} per partition here too, under the same budget: each person's part of
 * the answer from its sealed rows, evaluated again only when those rows change.
 */
final class BlockAnswers {
    /**
     * @param content what names the unit's rows: a sealed block's id, or a {@link PartBytes}
     * @param deleted never changed once in a key
     */
    private record Key(long projectId, long block, Object content, BitSet deleted, String shape) {
    }

    /** The sum of a partition's sealed blocks' answers to a shape ({@link #sealedSum}). */
    private record SumKey(long projectId, int partition, String shape) {
    }

    /** Which sealed blocks a sum is of, in block order, and the sum. */
    private record SealedSum(List<SealedUnit<?>> units, Object sum) {
    }

    /**
     * A sealed block or part a read met: its number, what names its content (a sealed block's id, a part's
     * {@link PartBytes}) and its deleted rows, and its answer (kept per unit, {@link #answer}), worked out only if
     * needed.
     */
    record SealedUnit<A>(long block, Object content, BitSet deleted, Supplier<A> answer) {
        boolean sameAs(final SealedUnit<?> other) {
            return block == other.block && content.equals(other.content) && deleted.equals(other.deleted);
        }
    }

    /** A funnel's progress over a partition's sealed blocks of a project. */
    private record ProgressKey(long projectId, int partition, String shape) {
    }

    /** A project's tail rows in a partition, within one store generation (a rebuild numbers rows again). */
    private record TailKey(long projectId, int partition, long generation) {
    }

    private record Entry(Object answer, long weight) {
    }

    /**
     * How long a funnel's progress stays unread before it goes. A progress is large (hundreds of bytes a person) and
     * its shape is asked again only while a tile stays as it is: a tile whose filters changed, or a dashboard deleted,
     * leaves one nothing will read, which the cache's frequency sketch would otherwise keep over the new tile's.
     */
    static final java.time.Duration PROGRESS_IDLE = java.time.Duration.ofMinutes(15);

    /** A progress expires {@link #PROGRESS_IDLE} after its last read or write; every other answer only by size. */
    private static final com.github.benmanes.caffeine.cache.Expiry<Object, Entry> PROGRESS_EXPIRY = new com.github.benmanes.caffeine.cache.Expiry<>() {
        @Override
        public long expireAfterCreate(final Object key, final Entry entry, final long now) {
            return key instanceof ProgressKey ? PROGRESS_IDLE.toNanos() : Long.MAX_VALUE;
        }

        @Override
        public long expireAfterUpdate(final Object key, final Entry entry, final long now, final long left) {
            return expireAfterCreate(key, entry, now);
        }

        @Override
        public long expireAfterRead(final Object key, final Entry entry, final long now, final long left) {
            return expireAfterCreate(key, entry, now);
        }
    };

    /** What a kept tail and walk are counted as taking: two parts of rows of about 1 KiB, a block of one, and a block's parts. */
    private static final int TAIL_WEIGHT = 2 * BlockKeys.PART_ROWS * 1024 + BlockKeys.PART_ROWS * 512 + BlockKeys.ROWS * 128;

    private final Cache<Object, Entry> answers;
    /** Tail rows as parsed and ranges as walked ({@link #kept}), apart from the answers: under an eighth of the budget. */
    private final Cache<TailKey, Kept> tail;
    /**
     * Funnels' progress dropped to stay under the budget, lately: built again at each query, a progress that does not
     * fit would cost more than reading the funnel without one, so such funnels are read without for a while.
     */
    private final Cache<ProgressKey, Boolean> unkept = Caffeine.newBuilder().maximumSize(10_000)
            .expireAfterWrite(java.time.Duration.ofMinutes(10)).build();
    /**
     * Facts true for as long as what their key names stays ({@link #keptIfTrue}): apart from the answers, whose
     * hits and misses they would blur, and weighing nothing.
     */
    private final Cache<Record, Boolean> facts = Caffeine.newBuilder().maximumSize(10_000).build();
    /** Query shapes asked lately (per project and kind): answers are kept for a shape from its second ask on. */
    private final Cache<String, Boolean> asked = Caffeine.newBuilder().maximumSize(10_000).expireAfterAccess(java.time.Duration.ofHours(1)).build();

    /**
     * @param maxBytes what the answers may take on the heap together; 0 keeps none
     * @param registry where hits, misses and evictions are counted (as {@code cache.*{cache=block-answers}})
     */
    BlockAnswers(final long maxBytes, final MeterRegistry registry) {
        this(maxBytes, registry, com.github.benmanes.caffeine.cache.Ticker.systemTicker());
    }

    /** @param ticker the answers' clock (a funnel's progress expires after {@link #PROGRESS_IDLE} unread) */
    BlockAnswers(final long maxBytes, final MeterRegistry registry, final com.github.benmanes.caffeine.cache.Ticker ticker) {
        if (maxBytes <= 0) {
            this.answers = null;
            this.tail = null;
            return;
        }
        // A kept tail grows as rows arrive, up to about two parts of rows and a block of them, and a walk holds up to a
        // block's parts: weighed at that.
        this.tail = Caffeine.newBuilder().maximumWeight(Math.max(1, maxBytes / 8))
                .weigher((TailKey key, Kept kept) -> TAIL_WEIGHT).recordStats().build();
        // Maintenance (eviction) on the thread that wrote, when no other is at it: a progress that outgrew the budget is
        // evicted as its read ends, so the next query knows (progressFits), and no reader waits for another's.
        this.answers = Caffeine.newBuilder().maximumWeight(maxBytes).executor(Runnable::run).ticker(ticker).expireAfter(PROGRESS_EXPIRY)
                .weigher((Object key, Entry entry) -> (int) Math.min(Integer.MAX_VALUE, entry.weight() + 64 + keyBytes(key)))
                .evictionListener((Object key, Entry entry, com.github.benmanes.caffeine.cache.RemovalCause cause) -> {
                    if (key instanceof ProgressKey progress && cause == com.github.benmanes.caffeine.cache.RemovalCause.SIZE) {
                        unkept.put(progress, Boolean.TRUE);
                    }
                })
                .recordStats().build();
        if (registry != null) {
            CaffeineCacheMetrics.monitor(registry, answers, "block-answers");
            CaffeineCacheMetrics.monitor(registry, tail, "tail-rows");
        }
    }

    /** What a key holds besides its answer: its shape, and a part's bytes. */
    private static long keyBytes(final Object key) {
        if (key instanceof Key k) {
            return 2L * k.shape().length() + (k.content() instanceof PartBytes p ? p.memoryBytes() : 0);
        }
        if (key instanceof ProgressKey k) {
            return 2L * k.shape().length();
        }
        if (key instanceof SumKey k) {
            return 2L * k.shape().length();
        }
        return 64;
    }

    /**
     * Whether answers to {@code shape} are worth keeping: it was asked before, within the last hour (a dashboard's
     * tile, a live dashboard, a query polled). A question asked once costs no more than without keeping, and fills no
     * memory; asked again, its answers are kept from then on.
     */
    boolean askedBefore(final String shape) {
        return answers != null && asked.asMap().putIfAbsent(shape, Boolean.TRUE) != null;
    }

    /** Whether answers are kept at all. */
    boolean enabled() {
        return answers != null;
    }

    /**
     * The answer of a sealed block or a part of one being filled to queries of {@code shape}: kept, or worked out by
     * {@code answer} (null when the block is gone; nothing is kept then) and kept, weighed by {@code weight}.
     * Callers must not change what they get: other queries read it too.
     *
     * @param content a sealed block's id ({@link BlockKeys.Sealed#id}) or a {@link PartBytes}
     * @param deleted the rows not stored any more; must not be changed afterwards
     */
    @SuppressWarnings("unchecked")
    <A> A answer(final String shape, final long projectId, final long block, final Object content, final BitSet deleted,
                 final Supplier<A> answer, final ToLongFunction<A> weight) {
        if (answers == null) {
            return answer.get();
        }
        final Entry kept = answers.get(new Key(projectId, block, content, deleted, shape), k -> {
            final A found = answer.get();
            return found == null ? null : new Entry(found, weight.applyAsLong(found));
        });
        return kept == null ? null : (A) kept.answer();
    }

    /**
     * What {@code key} names, kept, or worked out by {@code answer} and kept, weighed by {@code weight}: for answers
     * named by everything they depend on (another key for anything else), such as a partition's settled hours.
     * Callers must not change what they get.
     */
    @SuppressWarnings("unchecked")
    <A> A kept(final Record key, final Supplier<A> answer, final ToLongFunction<A> weight) {
        if (answers == null) {
            return answer.get();
        }
        return (A) answers.get(key, k -> {
            final A found = answer.get();
            return new Entry(found, weight.applyAsLong(found));
        }).answer();
    }

    /**
     * Whether {@code test} holds, asked once for {@code key} if it did: for facts that stay true while everything
     * {@code key} names stays (a partition's counts being built, within a store generation).
     */
    boolean keptIfTrue(final Record key, final java.util.function.BooleanSupplier test) {
        if (answers == null) {
            return test.getAsBoolean();
        }
        if (facts.getIfPresent(key) != null) {
            return true;
        }
        final boolean holds = test.getAsBoolean();
        if (holds) {
            facts.put(key, Boolean.TRUE);
        }
        return holds;
    }

    /**
     * The sum of the answers of a partition's sealed blocks (or of the parts of its block being filled) {@code units}, in
     * block order, to queries of {@code shape}: kept per partition, so a query asked again merges one answer for all of
     * them instead of one per unit (a tenth of a refreshed dashboard's CPU at 1M events was those merges). When the
     * units are as the kept sum's, it is the answer; when units were added since, the kept sum and theirs; when any
     * other unit changed (rows moved by a merge, expired, a block removed), the units' own kept answers summed again.
     * Callers must not change what they get.
     *
     * @param shape what the answers answer, and which of the partition's sums (sealed blocks, parts) this is
     *
     * @param empty  a new, empty answer
     * @param merger adds its second argument to its first, and returns the first
     */
    @SuppressWarnings("unchecked")
    <A> A sealedSum(final String shape, final long projectId, final int partition, final List<SealedUnit<A>> units, final Supplier<A> empty,
                    final java.util.function.BinaryOperator<A> merger, final ToLongFunction<A> weight) {
        if (answers == null) {
            final A sum = empty.get();
            units.forEach(unit -> {
                final A answer = unit.answer().get();
                if (answer != null) {
                    merger.apply(sum, answer);
                }
            });
            return sum;
        }
        final SumKey key = new SumKey(projectId, partition, shape);
        final Entry kept = answers.getIfPresent(key);
        final SealedSum had = kept == null ? null : (SealedSum) kept.answer();
        int same = 0;
        while (had != null && same < had.units().size() && same < units.size() && had.units().get(same).sameAs(units.get(same))) {
            same++;
        }
        if (had != null && same == had.units().size() && same == units.size()) {
            return (A) had.sum();
        }
        final A sum = empty.get();
        int from = 0;
        if (had != null && same == had.units().size()) {
            merger.apply(sum, (A) had.sum());
            from = same;
        }
        boolean complete = true;
        for (int i = from; i < units.size(); i++) {
            final A answer = units.get(i).answer().get();
            if (answer == null) {
                complete = false;
            } else {
                merger.apply(sum, answer);
            }
        }
        if (complete) {
            final List<SealedUnit<?>> named = new java.util.ArrayList<>(units.size());
            units.forEach(unit -> named.add(new SealedUnit<>(unit.block(), unit.content(), unit.deleted(), null)));
            answers.put(key, new Entry(new SealedSum(named, sum), weight.applyAsLong(sum) + 64L * units.size()));
        }
        return sum;
    }

    /**
     * Reads a funnel of {@code shape} over a partition's sealed blocks of a project with the progress kept for it
     * ({@link FunnelProgress}, made empty if none is), and weighs the progress again after.
     */
    void withProgress(final String shape, final long projectId, final int partition, final java.util.function.Consumer<FunnelProgress> read) {
        if (answers == null) {
            read.accept(new FunnelProgress());
            return;
        }
        final ProgressKey key = new ProgressKey(projectId, partition, shape);
        final Entry entry = answers.get(key, k -> new Entry(new FunnelProgress(), 0));
        final FunnelProgress progress = (FunnelProgress) entry.answer();
        try {
            read.accept(progress);
        } finally {
            answers.asMap().computeIfPresent(key, (k, kept) -> kept.answer() == progress ? new Entry(progress, progress.memoryBytes()) : kept);
        }
    }

    /** What a partition's reads of a project keep between them: its tail rows, and its range as last walked. */
    record Kept(KeptTail tail, KeptEntries entries) {
    }

    /**
     * A project's tail rows in a partition as kept between reads ({@link KeptTail}) and its range as last walked
     * ({@link KeptEntries}), for store generation {@code generation}: a dashboard refreshed reads and parses each new
     * row once, walks the range only when it changed, and its tiles share the tail's block.
     */
    Kept kept(final long projectId, final int partition, final long generation) {
        if (tail == null) {
            return new Kept(KeptTail.none(), KeptEntries.none());
        }
        return tail.get(new TailKey(projectId, partition, generation), k -> new Kept(KeptTail.kept(), KeptEntries.kept()));
    }

    /**
     * Whether a funnel of {@code shape} over a partition's blocks of a project may keep its progress: answers are kept,
     * and its progress was not dropped to stay under the budget in the last ten minutes (built again and dropped at
     * every query, it would only cost more than reading without).
     */
    boolean progressFits(final String shape, final long projectId, final int partition) {
        return answers != null && unkept.getIfPresent(new ProgressKey(projectId, partition, shape)) == null;
    }

    /** How many answers are kept. */
    long size() {
        if (answers == null) {
            return 0;
        }
        answers.cleanUp();
        return answers.estimatedSize();
    }
}
