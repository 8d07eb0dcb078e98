package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading CPU times from /proc's formats, and what a group used between two snapshots. */
class ProcessCpuTest {
    @Test
    void utimePlusStimeAreCountedFromTheLastParenthesisOfTheCommandName() {
        // A command name with a space and parentheses of its own; utime 4321 and stime 79 ticks.
        final String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 123 0 0 0 4321 79 0 0 20 0 57 0 99 0 0";
        assertThat(ProcessCpu.statSeconds(stat)).isEqualTo(44.0);
    }

    @Test
    void theMachineIsBusyInUserNiceSystemIrqSoftirqAndStealButNotIdleOrIowait() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        assertThat(ProcessCpu.busySeconds("cpu  1000 50 300 90000 700 20 30 100 40 0")).isEqualTo(15.0);
    }

    @Test
    void aBackendIsRecognizedByTheDatabaseInItsTitle() {
        assertThat(ProcessCpu.isBackendOf("postgres: 15/main: eddy eddy_bench_scale 127.0.0.1(5432) idle", "eddy_bench_scale")).isTrue();
        assertThat(ProcessCpu.isBackendOf("postgres: 15/main: eddy eddy_bench_scale_2 127.0.0.1(5432) idle", "eddy_bench_scale")).isFalse();
        assertThat(ProcessCpu.isBackendOf("postgres: 15/main: checkpointer ", "eddy_bench_scale")).isFalse();
        assertThat(ProcessCpu.isBackendOf("/usr/lib/postgresql/15/bin/postgres\0-D\0eddy_bench_scale\0", "eddy_bench_scale")).isFalse();
    }

    @Test
    void aGroupUsedTheDifferenceOfItsProcessesAndAllOfOneThatStartedInBetween() {
        final ProcessCpu.Snapshot from = new ProcessCpu.Snapshot(Map.of("pg", Map.of(1L, 2.0, 2L, 5.0), ProcessCpu.MACHINE, Map.of(0L, 100.0)), 0);
        // Backend 2 ended (not counted), backend 3 started.
        final ProcessCpu.Snapshot to = new ProcessCpu.Snapshot(Map.of("pg", Map.of(1L, 3.5, 3L, 0.25), ProcessCpu.MACHINE, Map.of(0L, 110.0)), 1);
        assertThat(ProcessCpu.used(from, to)).containsExactlyInAnyOrderEntriesOf(Map.of("pg", 1.75, ProcessCpu.MACHINE, 10.0));
        assertThat(new ProcessCpu(List.of(ProcessCpu.Group.of("self", ProcessHandle.current().pid()))).take().groups().get("self"))
                .hasSize(1).allSatisfy((pid, seconds) -> assertThat(seconds).isPositive());
    }
}
