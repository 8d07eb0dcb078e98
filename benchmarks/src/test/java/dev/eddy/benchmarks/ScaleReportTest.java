package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The table's derived figures: per CPU-second rates, other processes' share, and the ratios of the two runs. */
class ScaleReportTest {
    @Test
    void derivedRowsComeFromTheMeasuredFigures() {
        final Properties one = config("1 instance", 1, Map.of("cpu.ingest.eddy-1", "16.0"));
        final Properties two = config("2 instances", 2, Map.of("cpu.ingest.eddy-1", "10.0", "cpu.ingest.eddy-2", "15.0",
                "processed.share.1", "0.49", "processed.share.2", "0.51"));
        final String table = new ScaleReport(List.of(one, two)).render();
        // 20,000 events over 16 and over 10 + 15 Eddy CPU-seconds; the ratio 800 / 1,250.
        assertThat(table).containsPattern("events per Eddy CPU-second +1,250 +800 +0\\.64\n");
        // The machine's 40 CPU-s less Eddy's, the broker's 4, PostgreSQL's 0.5 and the generator's 1.5.
        assertThat(table).containsPattern("other processes of the machine, CPU-s +18\\.0 +9\\.0\n");
        assertThat(table).containsPattern("accepted / raw +0\\.25 +0\\.25 +1\\.00\n");
        assertThat(table).containsPattern("share per instance +100% +49% / 51%\n");
        assertThat(table).containsPattern("bytes per event \\(warm-up events included\\) +2,000 +2,000 +1\\.00\n");
        // 12 queries/s for 10 s over 8 Eddy CPU-seconds.
        assertThat(table).containsPattern("queries per Eddy CPU-second +15\\.00 +15\\.00 +1\\.00\n");
        assertThat(table).contains("machine was already 100% busy during ingest");
    }

    private static Properties config(final String label, final int instances, final Map<String, String> more) {
        final Properties p = new Properties();
        p.putAll(Map.ofEntries(Map.entry("label", label), Map.entry("instances", "" + instances), Map.entry("cores", "2"),
                Map.entry("events", "20000"), Map.entry("persons", "2000"), Map.entry("identifies", "398"), Map.entry("standby", "1"),
                Map.entry("loadavg", "0.5"), Map.entry("rebalances", "0"), Map.entry("raw.eps", "40000"), Map.entry("accept.eps", "10000"), Map.entry("e2e.eps", "1000"),
                Map.entry("processed.share.1", "1.0"), Map.entry("cpu.ingest.seconds", "20"), Map.entry("cpu.ingest.machine", "40"),
                Map.entry("cpu.ingest.kafka", "4"), Map.entry("cpu.ingest.postgres", "0.5"), Map.entry("cpu.ingest.generator", "1.5"),
                Map.entry("cpu.settle.eddy-1", "1"), Map.entry("state.bytes", "48000000"), Map.entry("state.events", "24000"), Map.entry("queries.kinds", "1"), Map.entry("queries.qps", "12"),
                Map.entry("query.0.name", "trend"), Map.entry("query.0.qps", "12"), Map.entry("query.0.p50", "80"), Map.entry("query.0.p99", "200"),
                Map.entry("cpu.queries.seconds", "10"), Map.entry("cpu.queries.machine", "20"), Map.entry("cpu.queries.eddy-1", "8")));
        p.putAll(more);
        if (instances == 2) {
            p.setProperty("cpu.queries.eddy-1", "5");
            p.setProperty("cpu.queries.eddy-2", "3");
        }
        return p;
    }
}
