package dev.eddy.query.insights;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.columns.EventBlock;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.serde.Json;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/** Tail rows are kept per project, partition, sequence and timeline key: parsed once, never mistaken for another. */
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
}
