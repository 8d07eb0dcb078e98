package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.funnels.FunnelProgress;
import dev.eddy.funnels.FunnelQuery;
import dev.eddy.serde.Json;
import dev.eddy.trends.PropertyLookup;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Tail rows are kept per project, partition and store generation, never mistaken for another's. A
 * funnel's progress that does not fit the budget is not built again at every query.
 */
class BlockAnswersTest {
    @Test
    void aTailIsKeptPerProjectPartitionAndStoreGeneration() {
        final BlockAnswers answers = new BlockAnswers(64 << 20, null);
        final BlockAnswers.Kept tail = answers.kept(7, 3, 1);
        assertThat(answers.kept(7, 3, 1)).as("kept").isSameAs(tail);
        assertThat(answers.kept(7, 4, 1)).as("another partition").isNotSameAs(tail);
        assertThat(answers.kept(8, 3, 1)).as("another project").isNotSameAs(tail);
        assertThat(answers.kept(7, 3, 2)).as("another generation: rows may be numbered again").isNotSameAs(tail);
    }

    @Test
    void aPartitionsSealedBlocksAreSummedOnceAndTheSumExtendedByBlocksSealedSince() {
        final BlockAnswers answers = new BlockAnswers(64 << 20, null);
        final List<Long> worked = new java.util.ArrayList<>();
        final java.util.function.Function<long[], List<BlockAnswers.SealedUnit<long[]>>> units = spec -> {
            final List<BlockAnswers.SealedUnit<long[]>> list = new java.util.ArrayList<>();
            for (int i = 0; i < spec.length; i += 2) {
                final long block = spec[i];
                final Long id = spec[i + 1];
                list.add(new BlockAnswers.SealedUnit<>(block, id, new BitSet(), () -> {
                    worked.add(block);
                    return new long[] {10 * block + id.longValue()};
                }));
            }
            return list;
        };
        final java.util.function.Function<List<BlockAnswers.SealedUnit<long[]>>, Long> sum = list -> answers.sealedSum("s", 1, 0, list,
                () -> new long[1], (into, other) -> {
                    into[0] += other[0];
                    return into;
                }, a -> 16)[0];

        assertThat(sum.apply(units.apply(new long[] {0, 1, 1, 1}))).isEqualTo(10 + 1 + 1);
        assertThat(worked).containsExactly(0L, 1L);
        assertThat(sum.apply(units.apply(new long[] {0, 1, 1, 1}))).as("the same blocks: the kept sum").isEqualTo(12);
        assertThat(worked).containsExactly(0L, 1L);
        assertThat(sum.apply(units.apply(new long[] {0, 1, 1, 1, 2, 1}))).as("a block sealed since: the sum and its answer").isEqualTo(12 + 21);
        assertThat(worked).containsExactly(0L, 1L, 2L);
        assertThat(sum.apply(units.apply(new long[] {0, 1, 1, 7, 2, 1}))).as("block 1 sealed again: every block summed again")
                .isEqualTo(1 + 17 + 21);
        assertThat(worked).containsExactly(0L, 1L, 2L, 0L, 1L, 2L);
        assertThat(answers.sealedSum("s", 1, 1, units.apply(new long[] {0, 1, 1, 7, 2, 1}), () -> new long[1], (into, other) -> into, a -> 16))
                .as("another partition's sum is its own").isNotNull();
        assertThat(worked).hasSize(9);
    }

    @Test
    void withoutABudgetNoTailIsKept() {
        final BlockAnswers answers = new BlockAnswers(0, null);
        assertThat(answers.kept(7, 3, 1)).isNotSameAs(answers.kept(7, 3, 1));
    }

    @Test
    void aFunnelProgressDroppedForItsSizeIsNotBuiltAgainAtEveryQuery() throws Exception {
        final Instant now = Instant.parse("2026-11-20T12:00:00Z");
        final FunnelQuery query = FunnelQuery.parse(Json.mapper().readTree("{\"events\":[{\"id\":\"$pageview\",\"order\":0},"
                + "{\"id\":\"signup\",\"order\":1}],\"date_from\":\"-7d\"}"), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, now, Optional::empty);
        final PropertyLookup none = PropertyLookup.of(person -> Json.mapper().createObjectNode(), (type, key) -> Json.mapper().createObjectNode());
        final BlockAnswers answers = new BlockAnswers(64 << 10, null);
        final String shape = query.progressShape().orElseThrow();
        final int[] persons = {2, 2_000};
        for (int partition = 0; partition < persons.length; partition++) {
            final EventBlock.Builder rows = new EventBlock.Builder();
            for (int p = 0; p < persons[partition]; p++) {
                rows.add(new EventBlock.Row(micros(now) - 3_600_000_000L + p, new UUID(1, p), new UUID(2, p), "d", "$pageview", Map.of(),
                        Json.mapper().createObjectNode()));
            }
            final EventBlock block = rows.build();
            final List<FunnelProgress.Unit> units = List.of(FunnelProgress.Unit.sealed(1, 0, new BlockKeys.Sealed(5, block.firstMicros(),
                    block.lastMicros()), new BitSet(), (project, number, entry) -> block));
            assertThat(answers.progressFits(shape, 1, partition)).as("never dropped").isTrue();
            final FunnelQuery.Partial partial = query.partial();
            answers.withProgress(shape, 1, partition, progress -> progress.read(query, units, List.of(), none, now, () -> { }, partial));
            assertThat(query.result(partial).get(0).path("count").asLong()).isEqualTo(persons[partition]);
        }
        assertThat(answers.progressFits(shape, 1, 0)).as("two persons' progress fits 64 KiB").isTrue();
        assertThat(answers.progressFits(shape, 1, 1)).as("2,000 persons' progress does not: read without for a while").isFalse();
        assertThat(answers.progressFits(shape, 2, 1)).as("another project's").isTrue();
        assertThat(new BlockAnswers(0, null).progressFits(shape, 1, 0)).as("nothing kept at all").isFalse();
    }

    @Test
    void aFunnelsProgressUnreadForAQuarterOfAnHourGoesAndOtherAnswersStay() throws Exception {
        final Instant now = Instant.parse("2026-11-20T12:00:00Z");
        final FunnelQuery query = FunnelQuery.parse(Json.mapper().readTree("{\"events\":[{\"id\":\"$pageview\",\"order\":0},"
                + "{\"id\":\"signup\",\"order\":1}],\"date_from\":\"-7d\"}"), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, now, Optional::empty);
        final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        final BlockAnswers answers = new BlockAnswers(64 << 20, null, nanos::get);
        final String shape = query.progressShape().orElseThrow();
        final FunnelProgress[] seen = new FunnelProgress[3];
        answers.withProgress(shape, 1, 0, progress -> seen[0] = progress);
        answers.answer("trend shape", 1, 7, "block id", new BitSet(), () -> "kept", x -> 8);
        assertThat(answers.size()).isEqualTo(2);

        nanos.addAndGet(BlockAnswers.PROGRESS_IDLE.toNanos() - 1);
        answers.withProgress(shape, 1, 0, progress -> seen[1] = progress);
        assertThat(seen[1]).as("read within the quarter hour: kept, and kept longer").isSameAs(seen[0]);
        nanos.addAndGet(BlockAnswers.PROGRESS_IDLE.toNanos() - 1);
        assertThat(answers.size()).isEqualTo(2);

        // Past it (the cache's timer wheel turns about every second: a few seconds past).
        nanos.addAndGet(java.time.Duration.ofSeconds(5).toNanos());
        assertThat(answers.size()).as("the progress went; the trend's block answer stays").isEqualTo(1);
        answers.withProgress(shape, 1, 0, progress -> seen[2] = progress);
        assertThat(seen[2]).as("built anew").isNotSameAs(seen[0]);
    }

    private static long micros(final Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }
}
