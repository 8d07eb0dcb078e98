package dev.eddy.benchmarks;

import dev.eddy.events.CapturedEvent;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * Ingest and trend-query throughput of one Eddy configuration, the instances {@code scripts/bench-scale} started
 * (the first answers the API, the others are {@code streams} instances of the same application), with the CPU time
 * every process used in each phase. The script runs it once per configuration; {@link ScaleReport} then sets the
 * configurations side by side. Phases, on the same seeded {@link InsightsEvents} (with {@code $identify}s):
 * <ol>
 *   <li>warm-up: {@code --warmup-events} other events (their own persons, dated before the measured range, so no
 *       answer below counts them) through {@code /batch/} and the topology, so that the measurements are of warm JVMs
 *       (compiled code, open stores, initialized transactions), not of their start;</li>
 *   <li>baseline: a raw {@code KafkaProducer} with the gateway's settings writes the same events as envelopes to a
 *       topic of its own on the same broker (one warm-up round, then the median of {@code --raw-rounds});</li>
 *   <li>ingest: the events as live {@code /batch/}es of {@code --batch} from {@code --clients} concurrent clients:
 *       accepted (every request answered 200, i.e. acknowledged by Kafka) and end-to-end (until the all-events trend
 *       counts every event: the stream processing rate, which more instances should raise);</li>
 *   <li>queries: with the data in place and the stream threads idle, {@code --query-clients} clients each asking in
 *       turn the unfiltered daily trend of all events, a filtered and broken-down trend and a 3-step funnel for
 *       {@code --query-seconds} (after {@code --query-warmup-seconds} not counted): queries/s and p50/p99 per kind.
 *       Every answer must equal DuckDB's over the same events, else the run fails.</li>
 * </ol>
 *
 * <p>Usage: {@code ScaleBenchmark --label NAME --out FILE --instances URL[,URL...] --token phc_... --key phx_...
 * --bootstrap HOST:PORT --raw-topic NAME --pids NAME=PID[,NAME=PID...] --pg-db DB [--state-dirs DIR[,DIR...]] [--standby-replicas N (as configured, for the report)] [--events 300000] [--persons 30000]
 * [--identify-percent 20] [--days 30] [--batch 100] [--clients 16] [--query-clients 4] [--query-seconds 60]
 * [--query-warmup-seconds 10] [--warmup-events events/5] [--raw-rounds 3] [--partitions 12] [--seed 42] [--poll-ms 250] [--load-timeout 3600]}.
 * The pids are named {@code eddy-N} for Eddy's instances; others (the broker) as wished. Exits 1 on a wrong answer.
 */
public final class ScaleBenchmark {
    /** Process groups whose CPU counts as Eddy's. */
    static final String EDDY = "eddy-";
    static final String POSTGRES = "postgres";
    static final String GENERATOR = "generator";

    private final Map<String, String> args;
    private final List<URI> instances;
    private final int eventCount;
    private final int persons;
    private final int identifyPercent;
    private final int days;
    private final int batch;
    private final int clients;
    private final int queryClients;
    private final double querySeconds;
    private final double queryWarmupSeconds;
    private final int rawRounds;
    private final int warmupEvents;
    private final long seed;
    private final long pollMillis;
    private final long loadTimeoutSeconds;
    private final Properties results = new Properties();

    private ScaleBenchmark(final Map<String, String> args) {
        this.args = args;
        this.instances = Arrays.stream(args.get("instances").split(",")).map(URI::create).toList();
        this.eventCount = Integer.parseInt(args.getOrDefault("events", "300000"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "30000"));
        this.identifyPercent = Integer.parseInt(args.getOrDefault("identify-percent", "20"));
        this.days = Integer.parseInt(args.getOrDefault("days", "30"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "100"));
        this.clients = Integer.parseInt(args.getOrDefault("clients", "16"));
        this.queryClients = Integer.parseInt(args.getOrDefault("query-clients", "4"));
        this.querySeconds = Double.parseDouble(args.getOrDefault("query-seconds", "60"));
        this.queryWarmupSeconds = Double.parseDouble(args.getOrDefault("query-warmup-seconds", "10"));
        this.rawRounds = Integer.parseInt(args.getOrDefault("raw-rounds", "3"));
        this.warmupEvents = Integer.parseInt(args.getOrDefault("warmup-events", Integer.toString(eventCount / 5)));
        this.seed = Long.parseLong(args.getOrDefault("seed", "42"));
        this.pollMillis = Long.parseLong(args.getOrDefault("poll-ms", "250"));
        this.loadTimeoutSeconds = Long.parseLong(args.getOrDefault("load-timeout", "3600"));
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "label", "out", "instances", "token", "key", "bootstrap", "raw-topic",
                "pids", "pg-db");
        if (!new ScaleBenchmark(args).run()) {
            System.exit(1);
        }
    }

    /** A query of the mix and the answer it must get. */
    private record Kind(InsightQuery query, String expected) {
    }

    /** @return whether every answer was right */
    private boolean run() throws Exception {
        final String label = args.get("label");
        long t0 = System.nanoTime();
        final InsightsEvents events = new InsightsEvents(eventCount, persons, days, LocalDate.now(ZoneOffset.UTC).minusDays(1), seed,
                identifyPercent, 0);
        final long identifies = countIdentifies(events);
        System.out.printf(Locale.ROOT, "%n== %s: %,d events of %,d persons (%,d $identify) over %d days, seed %d: generated in %.1f s%n",
                label, eventCount, persons, identifies, days, seed, seconds(t0));
        put("label", label);
        put("instances", instances.size());
        put("cores", Runtime.getRuntime().availableProcessors());
        put("events", eventCount);
        put("persons", persons);
        put("identifies", identifies);
        put("loadavg", Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        put("standby", args.getOrDefault("standby-replicas", "?"));

        final List<Kind> kinds = new ArrayList<>();
        try (DuckDbInsights duck = new DuckDbInsights(events)) {
            final List<InsightQuery> standard = InsightQuery.standard(events, duck);
            // The all-events trend, the filtered breakdown and the funnel; the $pageview trend reads the same hourly
            // counts as the first.
            for (final InsightQuery q : List.of(standard.get(0), standard.get(2), standard.get(3))) {
                kinds.add(new Kind(q, q.expected()));
            }
        }
        final ProcessCpu cpu = new ProcessCpu(groups());
        final Vertx vertx = Vertx.vertx();
        try {
            final EddyHttp gateway = new EddyHttp(vertx, instances.get(0), args.get("key"), Math.max(clients, queryClients) + 1);
            final List<HttpClient> all = new ArrayList<>(List.of(gateway.client()));
            for (final URI other : instances.subList(1, instances.size())) {
                all.add(new EddyHttp(vertx, other, args.get("key"), 2).client());
            }
            EddyStreams.awaitBalanced(all);
            final double[] rebalances = perInstance(all, EddyStreams::rebalances);

            warmUp(events, gateway, all);
            baseline(events);
            ingest(events, gateway, all, cpu);
            boolean right = true;
            for (final Kind k : kinds) {
                right &= k.query().crossCheck(gateway, k.expected());
            }
            if (right) {
                right = queries(kinds, gateway, cpu);
            }
            final double[] after = perInstance(all, EddyStreams::rebalances);
            final double moved = Arrays.stream(after).sum() - Arrays.stream(rebalances).sum();
            put("rebalances", moved);
            if (moved > 0) {
                System.out.printf(Locale.ROOT, "WARNING: %.0f rebalances during the measurement: the figures include moving partitions%n", moved);
            }
            if (gateway.connectRetries() > 0) {
                System.out.printf(Locale.ROOT, "%d requests got no connection within 10 s and were sent again%n", gateway.connectRetries());
            }
            put("right", right);
            try (Writer out = Files.newBufferedWriter(Path.of(args.get("out")))) {
                results.store(out, "scripts/bench-scale: " + label);
            }
            System.out.println(right ? "every answer equal to DuckDB's" : "MISMATCH: Eddy's answers differ from DuckDB's (see above)");
            return right;
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static long countIdentifies(final InsightsEvents events) {
        long n = 0;
        for (final byte name : events.name) {
            n += name == InsightsEvents.IDENTIFY ? 1 : 0;
        }
        return n;
    }

    /** Eddy's instances, the other named processes, PostgreSQL's backends of the run's database, and this process. */
    private List<ProcessCpu.Group> groups() {
        final List<ProcessCpu.Group> groups = new ArrayList<>();
        for (final String named : args.get("pids").split(",")) {
            final String[] nameAndPid = named.split("=", 2);
            groups.add(ProcessCpu.Group.of(nameAndPid[0], Long.parseLong(nameAndPid[1])));
        }
        groups.add(ProcessCpu.Group.postgres(POSTGRES, args.get("pg-db")));
        groups.add(ProcessCpu.Group.of(GENERATOR, ProcessHandle.current().pid()));
        return groups;
    }

    @FunctionalInterface
    private interface InstanceMetric {
        double read(HttpClient instance) throws Exception;
    }

    private static double[] perInstance(final List<HttpClient> instances, final InstanceMetric metric) throws Exception {
        final double[] values = new double[instances.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = metric.read(instances.get(i));
        }
        return values;
    }

    /** Other events, of other persons and dated before the measured ones, through /batch/ until a trend counts them. */
    private void warmUp(final InsightsEvents measured, final EddyHttp gateway, final List<HttpClient> all) throws Exception {
        if (warmupEvents == 0) {
            return;
        }
        final InsightsEvents warm = new InsightsEvents(warmupEvents, Math.max(1, persons * warmupEvents / eventCount), days,
                measured.firstDay.minusDays(1), seed + 1, identifyPercent, 1);
        final long start = System.nanoTime();
        gateway.sendBatches(warm, args.get("token"), batch, clients, false);
        gateway.awaitCounted(warm, InsightQuery.allEvents(warm), start, pollMillis, loadTimeoutSeconds);
        EddyStreams.awaitIdle(all);
        System.out.printf(Locale.ROOT, "warm-up: %,d events (%s to %s) through /batch/ and the topology in %.1f s%n", warm.count,
                warm.firstDay, measured.firstDay.minusDays(1), seconds(start));
    }

    /** The raw producer's events/s with the same events, keys and settings on the same broker; its topic is deleted after. */
    private void baseline(final InsightsEvents events) throws Exception {
        final String bootstrap = args.get("bootstrap");
        final String topic = args.get("raw-topic");
        final Instant now = Instant.now();
        final List<CapturedEvent> envelopes = new ArrayList<>(events.count);
        for (int i = 0; i < events.count; i++) {
            envelopes.add(events.envelope(i, args.get("token"), now));
        }
        final double[] rounds = BenchKafka.rawProducerRounds(bootstrap, topic, Integer.parseInt(args.getOrDefault("partitions", "12")), envelopes,
                rawRounds);
        put("raw.eps", rounds[rawRounds / 2]);
        System.out.printf(Locale.ROOT, "baseline: raw KafkaProducer %,.0f events/s (median of %d rounds after a warm-up: %s)%n",
                rounds[rawRounds / 2], rawRounds, Arrays.stream(rounds).mapToObj(r -> String.format(Locale.ROOT, "%,.0f", r)).toList());
    }

    /** Sends the events as live batches, then waits until a trend counts them all and the stream threads are idle. */
    private void ingest(final InsightsEvents events, final EddyHttp gateway, final List<HttpClient> all, final ProcessCpu cpu) throws Exception {
        final double[] processedBefore = perInstance(all, EddyStreams::processedRecords);
        final ProcessCpu.Snapshot start = cpu.take();
        gateway.sendBatches(events, args.get("token"), batch, clients, false);
        final ProcessCpu.Snapshot acked = cpu.take();
        final double accepted = (acked.nanos() - start.nanos()) / 1e9;
        System.out.printf(Locale.ROOT, "ingest: %,d events in /batch/es of %d from %d clients: all accepted in %.1f s (%,.0f events/s)%n",
                events.count, batch, clients, accepted, events.count / accepted);
        gateway.awaitCounted(events, InsightQuery.allEvents(events), start.nanos(), pollMillis, loadTimeoutSeconds);
        final ProcessCpu.Snapshot visible = cpu.take();
        final double counted = (visible.nanos() - start.nanos()) / 1e9;
        System.out.printf(Locale.ROOT, "ingest: all %,d in Eddy's trends %.1f s after the first send (%,.0f events/s end to end)%n",
                events.count, counted, events.count / counted);
        EddyStreams.awaitIdle(all);
        final ProcessCpu.Snapshot idle = cpu.take();
        put("accept.seconds", accepted);
        put("accept.eps", events.count / accepted);
        put("e2e.seconds", counted);
        put("e2e.eps", events.count / counted);
        putCpu("ingest", start, visible);
        putCpu("settle", visible, idle);
        printCpu("ingest (first send to all counted)", ProcessCpu.used(start, visible), counted);
        printCpu("settling (all counted to idle, less 3 s of idling)", ProcessCpu.used(visible, idle), (idle.nanos() - visible.nanos()) / 1e9);
        final double[] processed = perInstance(all, EddyStreams::processedRecords);
        final double total = Arrays.stream(processed).sum() - Arrays.stream(processedBefore).sum();
        final StringBuilder shares = new StringBuilder();
        for (int i = 0; i < processed.length; i++) {
            final double share = (processed[i] - processedBefore[i]) / total;
            put("processed.share." + (i + 1), share);
            shares.append(String.format(Locale.ROOT, "%seddy-%d %.0f%%", i == 0 ? "" : ", ", i + 1, share * 100));
        }
        put("processed.records", total);
        if (args.containsKey("state-dirs")) {
            long bytes = 0;
            for (final String dir : args.get("state-dirs").split(",")) {
                bytes += directoryBytes(Path.of(dir));
            }
            put("state.bytes", bytes);
            put("state.events", events.count + warmupEvents);
            System.out.printf(Locale.ROOT, "state directories: %,.1f MB on disk for %,d events with the warm-up (%,.0f bytes an event)%n",
                    bytes / 1e6, events.count + warmupEvents, (double) bytes / (events.count + warmupEvents));
        }
        System.out.printf(Locale.ROOT, "records processed by the stream threads: %,.0f (%.1f per event): %s%n", total, total / events.count, shares);
    }

    /** The bytes of the regular files under {@code dir} (RocksDB's files, checkpoints, locks). */
    private static long directoryBytes(final Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (final IOException gone) {
                    return 0;
                }
            }).sum();
        }
    }

    /** Warm-up, then the measured mix; false if any answer was wrong. */
    private boolean queries(final List<Kind> kinds, final EddyHttp gateway, final ProcessCpu cpu) throws Exception {
        final Mix warmup = mix(kinds, gateway, queryWarmupSeconds);
        final ProcessCpu.Snapshot start = cpu.take();
        final Mix measured = mix(kinds, gateway, querySeconds);
        final ProcessCpu.Snapshot end = cpu.take();
        final double seconds = (end.nanos() - start.nanos()) / 1e9;
        long total = 0;
        System.out.printf(Locale.ROOT, "queries: %d clients for %.0f s after %.0f s of warm-up:%n", queryClients, seconds, queryWarmupSeconds);
        for (int k = 0; k < kinds.size(); k++) {
            final Histogram h = measured.latency()[k];
            total += h.getTotalCount();
            put("query." + k + ".name", kinds.get(k).query().name());
            put("query." + k + ".qps", h.getTotalCount() / seconds);
            put("query." + k + ".p50", h.getValueAtPercentile(50) / 1000.0);
            put("query." + k + ".p99", h.getValueAtPercentile(99) / 1000.0);
            System.out.printf(Locale.ROOT, "  %-30s %6d answers %8.1f /s  p50 %8.1f ms  p99 %8.1f ms%n", kinds.get(k).query().name(), h.getTotalCount(),
                    h.getTotalCount() / seconds, h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0);
        }
        put("queries.kinds", kinds.size());
        put("queries.seconds", seconds);
        put("queries.qps", total / seconds);
        System.out.printf(Locale.ROOT, "  all: %,.1f queries/s%n", total / seconds);
        putCpu("queries", start, end);
        printCpu("queries", ProcessCpu.used(start, end), seconds);
        final int wrong = warmup.wrong() + measured.wrong();
        if (wrong > 0) {
            System.out.printf(Locale.ROOT, "MISMATCH: %d of %d answers differed from DuckDB's%n", wrong,
                    total + Arrays.stream(warmup.latency()).mapToLong(Histogram::getTotalCount).sum());
        }
        return wrong == 0;
    }

    /**
     * @param latency per kind, microseconds
     * @param wrong   answers that differed from the expected one
     */
    private record Mix(Histogram[] latency, int wrong) {
    }

    /**
     * {@code --query-clients} threads, each asking the kinds in turn (client {@code c} starting at kind {@code c}) until
     * {@code seconds} have passed; every answer is compared with the expected one after its clock stops. The first
     * wrong answer of each kind is printed.
     */
    private Mix mix(final List<Kind> kinds, final EddyHttp gateway, final double seconds) throws Exception {
        final long deadline = System.nanoTime() + (long) (seconds * 1e9);
        final AtomicInteger wrong = new AtomicInteger();
        final Set<String> reported = ConcurrentHashMap.newKeySet();
        final ExecutorService pool = Executors.newFixedThreadPool(queryClients);
        try {
            final List<Future<Histogram[]>> clientsDone = new ArrayList<>();
            for (int c = 0; c < queryClients; c++) {
                final int client = c;
                clientsDone.add(pool.submit(() -> {
                    final Histogram[] latency = histograms(kinds.size());
                    for (int n = client; System.nanoTime() < deadline; n++) {
                        final Kind kind = kinds.get(n % kinds.size());
                        final long t0 = System.nanoTime();
                        final String body = gateway.post(kind.query().url(), kind.query().body());
                        latency[n % kinds.size()].recordValue((System.nanoTime() - t0) / 1000);
                        final String answer = kind.query().eddyAnswer(body);
                        if (!answer.equals(kind.expected())) {
                            wrong.incrementAndGet();
                            if (reported.add(kind.query().name())) {
                                kind.query().printMismatch(answer, kind.expected());
                            }
                        }
                    }
                    return latency;
                }));
            }
            final Histogram[] latency = histograms(kinds.size());
            for (final Future<Histogram[]> done : clientsDone) {
                final Histogram[] h = done.get();
                for (int k = 0; k < latency.length; k++) {
                    latency[k].add(h[k]);
                }
            }
            return new Mix(latency, wrong.get());
        } finally {
            pool.shutdownNow();
        }
    }

    private static Histogram[] histograms(final int n) {
        final Histogram[] h = new Histogram[n];
        for (int k = 0; k < n; k++) {
            h[k] = new Histogram(3);
        }
        return h;
    }

    private void putCpu(final String phase, final ProcessCpu.Snapshot from, final ProcessCpu.Snapshot to) {
        put("cpu." + phase + ".seconds", (to.nanos() - from.nanos()) / 1e9);
        ProcessCpu.used(from, to).forEach((group, seconds) -> put("cpu." + phase + "." + group, seconds));
    }

    /** One line: each group's CPU seconds, Eddy's total, and how busy the machine's cores were. */
    private static void printCpu(final String phase, final Map<String, Double> used, final double wallSeconds) {
        final StringBuilder line = new StringBuilder();
        double eddy = 0;
        for (final Map.Entry<String, Double> e : used.entrySet()) {
            if (!ProcessCpu.MACHINE.equals(e.getKey())) {
                line.append(String.format(Locale.ROOT, "%s %.1f, ", e.getKey(), e.getValue()));
                eddy += e.getKey().startsWith(EDDY) ? e.getValue() : 0;
            }
        }
        final double machine = used.get(ProcessCpu.MACHINE);
        System.out.printf(Locale.ROOT, "  CPU-s in %s, %.1f s: %sEddy %.1f; other processes %.1f; machine busy %.1f of %.1f (%.0f%%)%n", phase,
                wallSeconds, line, eddy, ProcessCpu.others(used), machine, wallSeconds * Runtime.getRuntime().availableProcessors(),
                100 * machine / (wallSeconds * Runtime.getRuntime().availableProcessors()));
    }

    private void put(final String key, final Object value) {
        results.setProperty(key, String.valueOf(value));
    }

    private static double seconds(final long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
