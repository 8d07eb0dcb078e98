package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The open-loop schedule: due times fixed by the rate alone, and a late sender catching up on every missed slot. */
class OpenLoopTest {
    @Test
    void slotsAreDueAtTheRateFromTheStartWithoutDrift() {
        final OpenLoop loop = new OpenLoop(1_000, 3);
        assertThat(loop.due(0)).isEqualTo(1_000);
        assertThat(loop.due(1)).isEqualTo(1_000 + 333_333_333);
        assertThat(loop.due(2)).isEqualTo(1_000 + 666_666_667);
        // Rounded from the start each time, not accumulated: slot 3,000,000 is exactly 1,000,000 s later.
        assertThat(loop.due(3_000_000)).isEqualTo(1_000 + 1_000_000_000_000_000L);
    }

    @Test
    void aSenderThatStalledFindsEverySlotItMissedDue() {
        final OpenLoop loop = new OpenLoop(0, 100);
        // Stalled until 1 s after the start: slots 0 (at 0) to 100 (at 1 s exactly) are due, 101 is not.
        assertThat(loop.dueUntil(0, 1_000_000_000L)).isEqualTo(101);
        assertThat(loop.dueUntil(101, 1_000_000_000L)).isEqualTo(101);
        assertThat(loop.dueUntil(0, -1)).isZero();
        assertThat(loop.dueUntil(5, 59_999_999L)).isEqualTo(6);
    }

    @Test
    void runSendsEverySlotBeforeTheEndWithItsOwnDueTimeAtTheRate() {
        final long start = System.nanoTime();
        final OpenLoop loop = new OpenLoop(start, 200);
        final List<Long> dues = new ArrayList<>();
        final List<Long> sentAt = new ArrayList<>();
        final long sent = loop.run(start + 100_000_000L, () -> false, (n, due) -> {
            assertThat(n).isEqualTo(dues.size());
            dues.add(due);
            sentAt.add(System.nanoTime());
        });
        // 0.1 s at 200/s: slots 0 to 19 (slot 20 is due at the end itself, not before it).
        assertThat(sent).isEqualTo(20);
        assertThat(dues).hasSize(20);
        for (int n = 0; n < 20; n++) {
            assertThat(dues.get(n)).isEqualTo(start + n * 5_000_000L);
            assertThat(sentAt.get(n)).isGreaterThanOrEqualTo(dues.get(n));
        }
    }

    @Test
    void aSlowSenderKeepsTheDueTimesOfTheSlotsItDelayed() {
        final long start = System.nanoTime();
        final List<Long> dues = new ArrayList<>();
        // Each send takes 30 ms against a 10 ms schedule: later slots go out late, timed from when they were due.
        new OpenLoop(start, 100).run(start + 50_000_000L, () -> false, (n, due) -> {
            dues.add(due);
            try {
                Thread.sleep(30);
            } catch (final InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(dues).containsExactly(start, start + 10_000_000L, start + 20_000_000L, start + 30_000_000L, start + 40_000_000L);
    }

    @Test
    void stoppingEndsTheLoopAndAZeroRateIsRefused() {
        final long start = System.nanoTime();
        final List<Long> sent = new ArrayList<>();
        new OpenLoop(start, 1_000).run(start + 60_000_000_000L, () -> sent.size() >= 3, (n, due) -> sent.add(n));
        assertThat(sent).containsExactly(0L, 1L, 2L);
        assertThatThrownBy(() -> new OpenLoop(0, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive rate");
    }
}
