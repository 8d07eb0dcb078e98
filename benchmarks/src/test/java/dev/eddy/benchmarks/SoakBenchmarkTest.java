package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The soak's readings of Eddy's /metrics and its expected flag answers. */
class SoakBenchmarkTest {
    private static final String METRICS = """
            # HELP jvm_memory_used_bytes The amount of used memory
            # TYPE jvm_memory_used_bytes gauge
            jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 1.2E8
            jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 3.0E7
            jvm_memory_used_bytes{area="heap",id="G1 Survivor Space"} 5000000.0
            jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 9.0E7
            jvm_memory_used_bytes_other{area="heap"} 1.0
            eddy_streams_lag_records{application="soak"} 1234.0
            """;

    @Test
    void heapIsTheSumOfTheHeapPoolsOnly() {
        assertThat(EddyHttp.metricSum(METRICS, "jvm_memory_used_bytes", "area=\"heap\"")).isEqualTo(1.55e8);
        assertThat(EddyHttp.metricSum(METRICS, "eddy_streams_lag_records", "")).isEqualTo(1234.0);
        assertThat(EddyHttp.metricSum(METRICS, "eddy_absent", "")).isNaN();
        assertThat(EddyHttp.metricSum("eddy_streams_lag_records NaN\n", "eddy_streams_lag_records", "")).isNaN();
    }

    @Test
    void theVariantFollowsPostHogsHashOfTheDistinctId() {
        // 50/50 control/test: control below 0.5 of the "variant"-salted hash of the flag key and the id.
        for (final String id : new String[] {"soak-p1", "soak-p2", "soak-anon-p3", "soak-p4"}) {
            final double hash = dev.eddy.flags.FlagHash.of(SoakBenchmark.VARIANT_FLAG, id, "variant");
            assertThat(SoakBenchmark.expectedVariant(id)).isEqualTo(hash < 0.5 ? "control" : "test");
        }
        assertThat(SoakBenchmark.plan(3)).isEqualTo("pro");
        assertThat(SoakBenchmark.plan(4)).isEqualTo("free");
    }
}
