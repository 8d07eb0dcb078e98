package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.StoredBlocks;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/**
 * Tail rows are kept per project, partition, sequence and timeline key: parsed once, never mistaken for another. A
 * funnel's progress that does not fit the budget is not built again at every query.
 */
class BlockAnswersTest {
    private final AtomicInteger parsed = new AtomicInteger();

    private EventBlock.Row parse(final String event) {
        parsed.incrementAndGet();
        return new EventBlock.Row(1, new UUID(0, 1), new UUID(0, 2), "d", event, Map.of(), Json.mapper().createObjectNode().put("a", 1));
    }

    @Test
    void aTailRowIsParsedOncePerContent() {
        final BlockAnswers answers = new BlockAnswers(1 << 20, null);
        final StoredBlocks.TailRows rows = answers.tailRows(7, 3);
        final Bytes key = Bytes.wrap(new byte[] {1, 2, 3});

        assertThat(rows.row(5, key, () -> parse("a")).event()).isEqualTo("a");
        assertThat(rows.row(5, key, () -> parse("b")).event()).as("kept").isEqualTo("a");
        assertThat(parsed).hasValue(1);

        assertThat(rows.row(5, Bytes.wrap(new byte[] {9}), () -> parse("c")).event()).as("another event in that row: a rebuilt tail")
                .isEqualTo("c");
        assertThat(answers.tailRows(7, 4).row(5, key, () -> parse("d")).event()).as("another partition").isEqualTo("d");
        assertThat(answers.tailRows(8, 3).row(5, key, () -> parse("e")).event()).as("another project").isEqualTo("e");
        assertThat(rows.row(6, key, () -> null)).as("an event gone").isNull();
        assertThat(parsed).hasValue(4);
    }

    @Test
    void withoutABudgetEveryReadParses() {
        final StoredBlocks.TailRows rows = new BlockAnswers(0, null).tailRows(7, 3);
        rows.row(5, Bytes.wrap(new byte[] {1}), () -> parse("a"));
        rows.row(5, Bytes.wrap(new byte[] {1}), () -> parse("a"));
        assertThat(parsed).hasValue(2);
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

    private static long micros(final Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }
}
