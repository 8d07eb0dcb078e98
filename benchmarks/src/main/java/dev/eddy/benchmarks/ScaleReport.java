package dev.eddy.benchmarks;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.ToDoubleFunction;

/**
 * The table of {@code scripts/bench-scale}: the configurations {@link ScaleBenchmark} measured, side by side, and the
 * ratio of the last to the first. Usage: {@code ScaleReport RESULTS_FILE...} (the first is the reference).
 */
public final class ScaleReport {
    private static final String ROW = "%-50s";
    private static final String CELL = "%16s";

    private final List<Properties> configs;
    private final StringBuilder out = new StringBuilder();

    ScaleReport(final List<Properties> configs) {
        this.configs = configs;
    }

    public static void main(final String[] argv) throws Exception {
        final List<Properties> configs = new ArrayList<>();
        for (final String file : argv) {
            final Properties p = new Properties();
            try (Reader in = Files.newBufferedReader(Path.of(file))) {
                p.load(in);
            }
            configs.add(p);
        }
        System.out.print(new ScaleReport(configs).render());
    }

    String render() {
        final Properties first = configs.get(0);
        out.append(String.format(Locale.ROOT, "%n%s events of %s persons (%s $identify), %s cores shared by everything below%n%n",
                first.getProperty("events"), first.getProperty("persons"), first.getProperty("identifies"), first.getProperty("cores")));
        out.append(String.format(Locale.ROOT, ROW, ""));
        configs.forEach(c -> out.append(String.format(Locale.ROOT, CELL, c.getProperty("label"))));
        out.append(configs.size() > 1 ? String.format(Locale.ROOT, "%10s%n", "ratio") : "\n");
        row("streams.standby-replicas", "%.0f", c -> d(c, "standby"), false);
        row("load average before", "%.2f", c -> d(c, "loadavg"), false);
        row("rebalances while measuring (should be 0)", "%.0f", c -> d(c, "rebalances"), false);
        row("raw KafkaProducer, events/s", "%,.0f", c -> d(c, "raw.eps"), true);
        row("/batch/ accepted (all acked), events/s", "%,.0f", c -> d(c, "accept.eps"), true);
        row("  accepted / raw", "%.2f", c -> d(c, "accept.eps") / d(c, "raw.eps"), true);
        row("end to end (all counted in a trend), events/s", "%,.0f", c -> d(c, "e2e.eps"), true);
        row("  Eddy CPU-s (every instance), first send to counted", "%.1f", c -> eddyCpu(c, "ingest"), true);
        row("  events per Eddy CPU-second", "%,.0f", c -> d(c, "events") / eddyCpu(c, "ingest"), true);
        row("  broker CPU-s", "%.1f", c -> d(c, "cpu.ingest.kafka"), true);
        row("  PostgreSQL CPU-s (the run's database)", "%.1f", c -> d(c, "cpu.ingest." + ScaleBenchmark.POSTGRES), true);
        row("  load generator CPU-s", "%.1f", c -> d(c, "cpu.ingest." + ScaleBenchmark.GENERATOR), true);
        row("  other processes of the machine, CPU-s", "%.1f", c -> others(c, "ingest"), false);
        row("  machine busy, % of all cores", "%.0f%%", c -> busy(c, "ingest"), false);
        row("  Eddy CPU-s settling (counted to idle)", "%.1f", c -> eddyCpu(c, "settle"), true);
        shares();
        row("  state on disk after ingest (every instance), MB", "%,.1f", c -> d(c, "state.bytes") / 1e6, true);
        row("    bytes per event (warm-up events included)", "%,.0f", c -> d(c, "state.bytes") / d(c, "state.events"), true);
        row("queries/s, all kinds", "%,.1f", c -> d(c, "queries.qps"), true);
        for (int k = 0; k < (int) d(first, "queries.kinds"); k++) {
            final String q = "query." + k + ".";
            out.append(String.format(Locale.ROOT, "  %s%n", first.getProperty(q + "name")));
            row("    queries/s", "%,.1f", c -> d(c, q + "qps"), true);
            row("    p50 ms", "%,.1f", c -> d(c, q + "p50"), true);
            row("    p99 ms", "%,.1f", c -> d(c, q + "p99"), true);
        }
        row("  Eddy CPU-s (every instance)", "%.1f", c -> eddyCpu(c, "queries"), true);
        row("  queries per Eddy CPU-second", "%.2f", c -> d(c, "queries.qps") * d(c, "cpu.queries.seconds") / eddyCpu(c, "queries"), true);
        row("  PostgreSQL CPU-s", "%.1f", c -> d(c, "cpu.queries." + ScaleBenchmark.POSTGRES), true);
        row("  other processes of the machine, CPU-s", "%.1f", c -> others(c, "queries"), false);
        row("  machine busy, % of all cores", "%.0f%%", c -> busy(c, "queries"), false);
        note();
        return out.toString();
    }

    /** What the table can and cannot say on this machine. */
    private void note() {
        final Properties first = configs.get(0);
        out.append(String.format(Locale.ROOT, "%nAll instances, the broker, PostgreSQL and the load generator share these %s cores: with one "
                        + "instance the machine was already %.0f%% busy during ingest and %.0f%% during queries (other processes of the "
                        + "machine included: see their row), so a second instance finds no idle core to use and adds work of its own (a second JVM, "
                        + "standby copies of the other's stores, scatter requests between the instances). Totals here do not show "
                        + "scaling; the per-CPU-second figures are what carry over to machines with cores to spare (docs/architecture.md, "
                        + "\"Scaling\").%n",
                first.getProperty("cores"), busy(first, "ingest"), busy(first, "queries")));
    }

    /** A row: the value of each configuration, and the last one's over the first one's when {@code ratio}. */
    private void row(final String name, final String format, final ToDoubleFunction<Properties> value, final boolean ratio) {
        out.append(String.format(Locale.ROOT, ROW, name));
        for (final Properties c : configs) {
            out.append(String.format(Locale.ROOT, CELL, String.format(Locale.ROOT, format, value.applyAsDouble(c))));
        }
        if (ratio && configs.size() > 1) {
            out.append(String.format(Locale.ROOT, "%10.2f", value.applyAsDouble(configs.get(configs.size() - 1)) / value.applyAsDouble(configs.get(0))));
        }
        out.append('\n');
    }

    private void shares() {
        out.append(String.format(Locale.ROOT, ROW, "  stream records processed, share per instance"));
        for (final Properties c : configs) {
            final List<String> shares = new ArrayList<>();
            for (int i = 1; i <= (int) d(c, "instances"); i++) {
                shares.add(String.format(Locale.ROOT, "%.0f%%", 100 * d(c, "processed.share." + i)));
            }
            out.append(String.format(Locale.ROOT, CELL, String.join(" / ", shares)));
        }
        out.append('\n');
    }

    private static double d(final Properties c, final String key) {
        final String v = c.getProperty(key);
        return v == null ? Double.NaN : Double.parseDouble(v);
    }

    static double eddyCpu(final Properties c, final String phase) {
        final String prefix = "cpu." + phase + "." + ScaleBenchmark.EDDY;
        return c.stringPropertyNames().stream().filter(k -> k.startsWith(prefix)).mapToDouble(k -> d(c, k)).sum();
    }

    /** The machine's CPU seconds in the phase less those of every measured process. */
    private static double others(final Properties c, final String phase) {
        final String prefix = "cpu." + phase + ".";
        final Map<String, Double> used = new HashMap<>();
        c.stringPropertyNames().stream().filter(k -> k.startsWith(prefix) && !k.equals(prefix + "seconds"))
                .forEach(k -> used.put(k.substring(prefix.length()), d(c, k)));
        return ProcessCpu.others(used);
    }

    private static double busy(final Properties c, final String phase) {
        return 100 * d(c, "cpu." + phase + "." + ProcessCpu.MACHINE) / (d(c, "cpu." + phase + ".seconds") * d(c, "cores"));
    }
}
