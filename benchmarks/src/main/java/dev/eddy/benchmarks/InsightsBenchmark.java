package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import java.net.URI;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Trend and funnel latency of a running Eddy against DuckDB in this process, over the same seeded events
 * ({@link InsightsEvents}) loaded into both, in one run: a daily {@code $pageview} trend, the same filtered on
 * {@code $browser} and broken down by {@code $current_url}, and an ordered 3-step funnel. Every answer of Eddy's must
 * equal DuckDB's (a MISMATCH fails the run); then warm-ups and {@code --repeats} alternating runs per query give p50
 * and p90 on both engines and their ratio against the targets (ad-hoc queries in a shape of their own each
 * run: {@link InsightQuery#bodyForRun}); then a dashboard of the filtered trend and the funnel as tiles, refreshed
 * ({@code refresh=force_blocking}) against DuckDB answering both. Also prints the load's rate beside a bare
 * exactly-once consume-and-forward of the same records ({@link BareForward}) and, after it,
 * the freshness of single captured events: from {@code /capture/}'s 200 until a trend query counts them, and the same
 * dashboard over a relative range refreshed while live events arrive.
 *
 * <p>Usage: {@code InsightsBenchmark --gateway URL --token phc_... --key phx_... [--events 1000000] [--persons 50000]
 * [--days 30] [--repeats 20] [--warmups 15] [--pause-ms 0] [--batch 1000] [--in-flight 4] [--seed 42] [--freshness-samples 100]
 * [--capture-rate 1000] [--capture-seconds 30] [--refresh-ms 500] [--hold-minutes 0]}: with {@code --hold-minutes}, Eddy stays up that long after the run, loaded, its dashboard's URL
 * printed, for a profiler or a load generator (wrk) to be pointed at it.
 */
public final class InsightsBenchmark {
    private static final String FRESHNESS_EVENT = "bench_freshness";

    private final Map<String, String> args;
    private final URI gateway;
    private final int eventCount;
    private final int persons;
    private final int days;
    private final int repeats;
    private final int warmups;
    private final long pauseMillis;
    private final int batch;
    private final int inFlight;
    private final long seed;
    private final int freshnessSamples;
    private final long loadTimeoutSeconds;
    private final long holdMinutes;
    private final int captureRate;
    private final int captureSeconds;
    private final long refreshMillis;
    private EddyHttp eddy;
    /** The tiles' dashboard, once made. */
    private String dashboardUrl;

    private InsightsBenchmark(final Map<String, String> args) {
        this.args = args;
        this.gateway = URI.create(args.get("gateway"));
        this.eventCount = Integer.parseInt(args.getOrDefault("events", "1000000"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "50000"));
        this.days = Integer.parseInt(args.getOrDefault("days", "30"));
        this.repeats = Integer.parseInt(args.getOrDefault("repeats", "20"));
        // Fifteen per query and engine: with three, a profile of the first timed rows found the JIT compiling for 37% of
        // the machine's CPU (Eddy's query paths are new to a process that has only loaded events), timing compilation.
        this.warmups = Integer.parseInt(args.getOrDefault("warmups", "15"));
        // Optionally each engine timed from idle (a pause before each run). Off by default, as the figures were
        // taken: a 50 ms pause made DuckDB slower (its p50 9.8 -> 14.2 ms for the daily trend) and Eddy faster.
        this.pauseMillis = Long.parseLong(args.getOrDefault("pause-ms", "0"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "1000"));
        this.inFlight = Integer.parseInt(args.getOrDefault("in-flight", "4"));
        this.seed = Long.parseLong(args.getOrDefault("seed", "42"));
        this.freshnessSamples = Integer.parseInt(args.getOrDefault("freshness-samples", "100"));
        this.loadTimeoutSeconds = Long.parseLong(args.getOrDefault("load-timeout", "3600"));
        this.holdMinutes = Long.parseLong(args.getOrDefault("hold-minutes", "0"));
        this.captureRate = Integer.parseInt(args.getOrDefault("capture-rate", "1000"));
        this.captureSeconds = Integer.parseInt(args.getOrDefault("capture-seconds", "30"));
        this.refreshMillis = Long.parseLong(args.getOrDefault("refresh-ms", "500"));
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "gateway", "token", "key");
        if (!new InsightsBenchmark(args).run()) {
            System.exit(1);
        }
    }

    /** @return whether every answer of Eddy's matched DuckDB's */
    private boolean run() throws Exception {
        final LocalDate lastDay = LocalDate.now(ZoneOffset.UTC).minusDays(1);
        long t0 = System.nanoTime();
        final InsightsEvents events = new InsightsEvents(eventCount, persons, days, lastDay, seed);
        System.out.printf(Locale.ROOT, "%,d events of %,d persons over %d days (%s to %s UTC), seed %d: generated in %.1f s%n",
                eventCount, persons, days, events.firstDay, lastDay, seed, seconds(t0));
        final Vertx vertx = Vertx.vertx();
        try {
            eddy = new EddyHttp(vertx, gateway, args.get("key"), inFlight + 1);
            final double loaded = load(events, InsightQuery.allEvents(events));
            EddyStreams.awaitIdle(eddy.client());
            if (args.containsKey("state-dir")) {
                StateDirSize.print(java.nio.file.Path.of(args.get("state-dir")), events.count);
            }
            bareForward(events.count, loaded);

            t0 = System.nanoTime();
            try (DuckDbInsights duck = new DuckDbInsights(events)) {
                System.out.printf(Locale.ROOT, "DuckDB %s (in process): loaded in %.1f s%n", duck.describe(), seconds(t0));
                final List<InsightQuery> queries = InsightQuery.standard(events, duck);
                boolean matched = true;
                for (final InsightQuery q : queries) {
                    matched &= q.crossCheck(eddy);
                }
                final List<String> rows = new ArrayList<>();
                for (final InsightQuery q : queries.subList(1, queries.size())) {
                    final Timing timing = time(q);
                    matched &= timing.mismatches() == 0;
                    rows.add(timing.row(q));
                }
                final Timing tiles = timeTiles(queries.subList(2, queries.size()));
                matched &= tiles.mismatches() == 0;
                rows.add(tiles.row("dashboard: the 2 above as tiles", null));
                System.out.printf(Locale.ROOT, "%nlatency over %d runs each after %d warm-ups, Eddy and DuckDB alternating, %d ms apart; ratio = Eddy p50 / DuckDB p50:%n",
                        repeats, warmups, pauseMillis);
                System.out.printf(Locale.ROOT, "%-30s %10s %10s %10s %10s %8s %8s%n", "query", "Eddy p50", "Eddy p90", "DuckDB p50",
                        "DuckDB p90", "ratio", "target");
                rows.forEach(System.out::println);
                freshness();
                dashboardUnderCapture(events, queries.subList(2, queries.size()));
                if (eddy.connectRetries() > 0) {
                    System.out.printf(Locale.ROOT, "%n%d requests got no connection within 10 s and were sent again%n", eddy.connectRetries());
                }
                System.out.println(matched ? "\nall of Eddy's answers equal DuckDB's" : "\nMISMATCH: Eddy's answers differ from DuckDB's (see above)");
                if (holdMinutes > 0) {
                    System.out.printf(Locale.ROOT, "%nEddy stays up %d minutes (process %s): %s%s with header 'Authorization: Bearer %s'%n",
                            holdMinutes, args.getOrDefault("eddy-pid", "?"), gateway, dashboardUrl, args.get("key"));
                    System.out.flush();
                    java.util.concurrent.TimeUnit.MINUTES.sleep(holdMinutes);
                }
                return matched;
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static double seconds(final long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /**
     * Sends the events as historical {@code /batch/}es, {@code --in-flight} at a time, then waits until Eddy's
     * all-events trend over the range counts every one of them.
     */
    private double load(final InsightsEvents events, final String allEvents) throws Exception {
        final long start = System.nanoTime();
        eddy.sendBatches(events, args.get("token"), batch, inFlight, true);
        final double accepted = seconds(start);
        System.out.printf(Locale.ROOT, "load: %,d events in /batch/es of %d, %d in flight: accepted in %.1f s (%,.0f events/s)%n",
                events.count, batch, inFlight, accepted, events.count / accepted);
        eddy.awaitCounted(events, allEvents, start, 1000, loadTimeoutSeconds);
        final double all = seconds(start);
        System.out.printf(Locale.ROOT, "load: all %,d in Eddy's trends after %.1f s (%,.0f events/s from first send to visible)%n",
                events.count, all, events.count / all);
        return events.count / all;
    }

    /**
     * The load's baseline, in the same run: a bare exactly-once consume-and-forward of the records the load wrote
     * (the run's historical topic), on the same broker with the stream threads Eddy's instance has, Eddy idle.
     */
    private void bareForward(final long records, final double eddyRate) throws Exception {
        final dev.eddy.config.EddyConfig config = dev.eddy.config.ConfigLoader.load(System.getenv(), java.util.Optional.empty());
        final String historical = dev.eddy.topology.EddyTopics.of(config.kafka()).historical().name();
        final double bare = BareForward.eventsPerSecond(config, historical, records);
        System.out.printf(Locale.ROOT, "load: a bare exactly-once consume-and-forward of the same %,d records, %d stream thread(s): "
                + "%,.0f events/s; Eddy end to end / bare = %.2f%n", records,
                config.streams().threadsFor(config.role(), Runtime.getRuntime().availableProcessors()), bare, eddyRate / bare);
    }


    /**
     * @param eddy       Eddy's latencies, milliseconds, sorted
     * @param duck       DuckDB's, the same
     * @param mismatches timed runs whose answer differed from the other engine's
     */
    private record Timing(double[] eddy, double[] duck, int mismatches) {
        String row(final InsightQuery q) {
            return row(q.name(), q.target());
        }

        String row(final String name, final Double goal) {
            final double ratio = percentile(eddy, 50) / percentile(duck, 50);
            final String target = goal == null ? "" : String.format(Locale.ROOT, "≤ %.1f %s", goal, ratio <= goal ? "PASS" : "MISS");
            return String.format(Locale.ROOT, "%-30s %7.1f ms %7.1f ms %7.1f ms %7.1f ms %8.2f  %s%s", name, percentile(eddy, 50),
                    percentile(eddy, 90), percentile(duck, 50), percentile(duck, 90), ratio, target,
                    mismatches == 0 ? "" : "  (" + mismatches + " runs MISMATCHED)");
        }
    }

    /** Nearest-rank percentile of sorted values. */
    private static double percentile(final double[] sorted, final double p) {
        return sorted[Math.max(0, (int) Math.ceil(p / 100 * sorted.length) - 1)];
    }

    /** Warm-ups, then {@code --repeats} runs on each engine in turn; every answer is checked after its clock stops. */
    private Timing time(final InsightQuery q) throws Exception {
        final String expected = q.expected();
        return timed(run -> eddy.post(q.url(), q.bodyForRun(run)), () -> q.duck().run(),
                (body, answer) -> q.eddyAnswer(body).equals(expected) && InsightQuery.duckAnswer(answer).equals(expected));
    }

    /** One timed request to Eddy ({@code run} counts from minus the warm-ups): its answer's body. */
    @FunctionalInterface
    private interface EddyRun {
        String ask(int run) throws Exception;
    }

    /** Whether both engines answered what they must. */
    @FunctionalInterface
    private interface Check {
        boolean test(String eddyBody, Object duckAnswer) throws Exception;
    }

    /** Warm-ups, then {@code --repeats} runs of each engine in turn; every pair of answers checked after the clocks stop. */
    private Timing timed(final EddyRun eddyRun, final InsightQuery.DuckQuery duckRun, final Check check) throws Exception {
        final double[] eddyMillis = new double[repeats];
        final double[] duck = new double[repeats];
        int mismatches = 0;
        for (int run = -warmups; run < repeats; run++) {
            Thread.sleep(pauseMillis);
            long t0 = System.nanoTime();
            final String body = eddyRun.ask(run);
            final double eddyMs = (System.nanoTime() - t0) / 1e6;
            Thread.sleep(pauseMillis);
            t0 = System.nanoTime();
            final Object answer = duckRun.run();
            final double duckMs = (System.nanoTime() - t0) / 1e6;
            if (!check.test(body, answer)) {
                mismatches++;
            }
            if (run >= 0) {
                eddyMillis[run] = eddyMs;
                duck[run] = duckMs;
            }
        }
        Arrays.sort(eddyMillis);
        Arrays.sort(duck);
        return new Timing(eddyMillis, duck, mismatches);
    }

    /**
     * A dashboard with {@code queries} as its tiles (saved insights), recalculated as a refresh does
     * ({@code refresh=force_blocking}, every tile calculated now), against DuckDB answering the same queries one after
     * the other: what a dashboard costs to refresh once its tiles were asked before. Every tile's answer is checked.
     */
    private Timing timeTiles(final List<InsightQuery> queries) throws Exception {
        final List<Long> insights = new ArrayList<>();
        final long dashboard = dashboardOf("bench tiles", queries, java.util.function.UnaryOperator.identity(), insights);
        final List<String> expected = new ArrayList<>();
        for (final InsightQuery q : queries) {
            expected.add(q.expected());
        }
        final String url = "/api/projects/1/dashboards/" + dashboard + "/?refresh=force_blocking";
        dashboardUrl = url;
        return timed(run -> eddy.request(io.vertx.core.http.HttpMethod.GET, url, null), () -> {
            final List<String> answers = new ArrayList<>();
            for (final InsightQuery q : queries) {
                answers.add(InsightQuery.duckAnswer(q.duck().run()));
            }
            return answers;
        }, (body, answers) -> {
            final JsonNode tiles = Json.mapper().readTree(body);
            for (int i = 0; i < queries.size(); i++) {
                if (!queries.get(i).eddyAnswer(tileOf(tiles, insights.get(i)).toString()).equals(expected.get(i))
                        || !((List<?>) answers).get(i).equals(expected.get(i))) {
                    return false;
                }
            }
            return true;
        });
    }

    /**
     * A new dashboard named {@code name} with each query as a saved insight on it, its body through {@code body} first;
     * the dashboard's id, the insights' ids added to {@code insights} in order.
     */
    private long dashboardOf(final String name, final List<InsightQuery> queries, final java.util.function.UnaryOperator<String> body,
                             final List<Long> insights) throws Exception {
        final long dashboard = Json.mapper().readTree(eddy.post("/api/projects/1/dashboards/", "{\"name\":\"" + name + "\"}")).path("id").asLong();
        for (final InsightQuery q : queries) {
            final String filters = body.apply(q.body())
                    .replaceFirst("^\\{", "{\"insight\":\"" + ("funnel".equals(q.path()) ? "FUNNELS" : "TRENDS") + "\",");
            insights.add(Json.mapper().readTree(eddy.post("/api/projects/1/insights/", "{\"name\":\"" + name + ": " + q.name()
                    + "\",\"dashboards\":[" + dashboard + "],\"filters\":" + filters + "}")).path("id").asLong());
        }
        return dashboard;
    }

    /** The saved insight {@code insight} as a dashboard's tile shows it. */
    private static JsonNode tileOf(final JsonNode dashboard, final long insight) {
        for (final JsonNode tile : dashboard.path("tiles")) {
            if (tile.path("insight").path("id").asLong() == insight) {
                return tile.path("insight");
            }
        }
        throw new IllegalStateException("the dashboard has no tile of insight " + insight);
    }

    /**
     * The tiles' dashboard again, over the last {@code --days} days up to now (so live events count), while live events
     * of the loaded persons arrive through {@code /batch/} at {@code --capture-rate} per second for {@code
     * --capture-seconds}: a dashboard left open on a live site. Every {@code --refresh-ms} in turn, a read as PostHog's
     * dashboard page does it (the cache: Eddy keeps a dashboard read lately fresh, recalculating it after events
     * arrive) with the age of its tiles' results, and a forced refresh ({@code refresh=force_blocking}, every tile
     * calculated now, from what its calculation kept). Also the background recalculations' time (Eddy's own timer:
     * the "live stream's recalculation"). Both loops are open (each request timed from when it was due);
     * requests start after the first quarter of the capture (at least 5 s: the live path's code compiled by the JIT,
     * which took a quarter of the CPU in the first half minute at 200k events). The first read of the dashboard (every tile calculated from the
     * stored events, then kept) is timed apart. The fixed-range dashboard is deleted first, so only this one is kept
     * fresh meanwhile. No DuckDB row: it has not the live events.
     */
    private void dashboardUnderCapture(final InsightsEvents events, final List<InsightQuery> queries) throws Exception {
        if (captureSeconds <= 5 || captureRate <= 0) {
            return;
        }
        eddy.request(io.vertx.core.http.HttpMethod.PATCH, dashboardUrl.replaceFirst("\\?.*", ""), "{\"deleted\":true}");
        final long dashboard = dashboardOf("bench live tiles", queries,
                body -> body.replaceFirst("\"date_from\":\"[^\"]*\",\"date_to\":\"[^\"]*\"", "\"date_from\":\"-" + days + "d\""), new ArrayList<>());
        final String read = "/api/projects/1/dashboards/" + dashboard + "/";
        final String forced = read + "?refresh=force_blocking";
        dashboardUrl = forced;
        long t0 = System.nanoTime();
        eddy.request(io.vertx.core.http.HttpMethod.GET, forced, null);
        final double firstMillis = (System.nanoTime() - t0) / 1e6;

        final int perBatch = Math.max(1, Math.min(100, captureRate / 20));
        final long start = System.nanoTime();
        final long end = start + captureSeconds * 1_000_000_000L;
        final java.util.concurrent.atomic.AtomicReference<Exception> failed = new java.util.concurrent.atomic.AtomicReference<>();
        final java.util.SplittableRandom random = new java.util.SplittableRandom(seed + 1);
        final OpenLoop sends = new OpenLoop(start, captureRate / (double) perBatch);
        final long[] batches = new long[1];
        final Thread sender = new Thread(() -> batches[0] = sends.run(end, () -> failed.get() != null, (n, due) -> {
            try {
                eddy.post("/batch/", events.liveBatch(args.get("token"), random, perBatch));
            } catch (final Exception e) {
                failed.compareAndSet(null, e);
            }
        }), "live-capture");
        sender.start();
        final List<Double> refreshes = new ArrayList<>();
        final List<Double> reads = new ArrayList<>();
        final List<Double> ages = new ArrayList<>();
        final long recalcStart = start + Math.max(5, captureSeconds / 4) * 1_000_000_000L;
        final double[] recalculations = new double[2];
        new OpenLoop(recalcStart, 1000.0 / refreshMillis).run(end, () -> failed.get() != null, (n, due) -> {
            try {
                if (n == 0) {
                    final double[] before = recalculationTimer();
                    recalculations[0] = -before[0];
                    recalculations[1] = -before[1];
                }
                final String body = eddy.request(io.vertx.core.http.HttpMethod.GET, n % 2 == 0 ? forced : read, null);
                final long answered = System.currentTimeMillis();
                (n % 2 == 0 ? refreshes : reads).add((System.nanoTime() - due) / 1e6);
                if (n % 2 == 1) {
                    long oldest = answered;
                    for (final JsonNode tile : Json.mapper().readTree(body).path("tiles")) {
                        oldest = Math.min(oldest, Instant.parse(tile.path("insight").path("last_refresh").asText()).toEpochMilli());
                    }
                    ages.add((double) (answered - oldest));
                }
            } catch (final Exception e) {
                failed.compareAndSet(null, e);
            }
        });
        sender.join();
        if (failed.get() != null) {
            throw failed.get();
        }
        final double[] after = recalculationTimer();
        final double recalcCount = recalculations[0] + after[0];
        final double recalcMeanMillis = (recalculations[1] + after[1]) / recalcCount * 1000;
        final double sent = batches[0] * perBatch / seconds(start);
        final double[] forcedMs = sorted(refreshes);
        final double[] readMs = sorted(reads);
        final double[] ageMs = sorted(ages);
        System.out.printf(Locale.ROOT, "%ndashboard while capturing: the 2 tiles over the last %d days (first read, every tile calculated: %.0f ms); "
                + "/batch/ sent %,.0f live events/s for %d s; every %d ms from %d s on, in turn:%n", days, firstMillis, sent, captureSeconds, refreshMillis,
                Math.max(5, captureSeconds / 4));
        System.out.printf(Locale.ROOT, "  read (GET, PostHog's default: the cache, kept fresh) p50 %.1f ms, p90 %.1f ms, p99 %.1f ms over %d; "
                + "its tiles' age p50 %.0f ms, max %.0f ms; target p50 ≤ 20 ms %s%n", percentile(readMs, 50), percentile(readMs, 90),
                percentile(readMs, 99), readMs.length, percentile(ageMs, 50), ageMs[ageMs.length - 1], percentile(readMs, 50) <= 20 ? "PASS" : "MISS");
        System.out.printf(Locale.ROOT, "  background recalculation (once a second after events arrived) mean %.1f ms over %.0f; target ≤ 20 ms %s%n",
                recalcMeanMillis, recalcCount, recalcMeanMillis <= 20 ? "PASS" : "MISS");
        System.out.printf(Locale.ROOT, "  forced refresh (refresh=force_blocking) p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms over %d%n",
                percentile(forcedMs, 50), percentile(forcedMs, 90), percentile(forcedMs, 99), forcedMs[forcedMs.length - 1], forcedMs.length);
        EddyStreams.awaitIdle(eddy.client());
        System.out.printf(Locale.ROOT, "  Eddy idle again %.1f s after the last live event was sent (seen idle: 3 s without a record processed)%n",
                seconds(end));
    }

    private static double[] sorted(final List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    /** Eddy's timer of dashboards kept fresh: its count and its total seconds. */
    private double[] recalculationTimer() throws Exception {
        return EddyHttp.keptFreshTimer(eddy.request(io.vertx.core.http.HttpMethod.GET, "/metrics", null));
    }

    /**
     * Single events through {@code /capture/} (realtime, timestamped now), one at a time: each is timed from the 200
     * (Kafka's ack) to the answer of the first trend query, sent back to back, that counts it; and to that query's
     * start, which bounds the delay from below.
     */
    private void freshness() throws Exception {
        if (freshnessSamples <= 0) {
            return;
        }
        final String query = "{\"events\":[{\"id\":\"" + FRESHNESS_EVENT + "\"}],\"date_from\":\"-1d\",\"interval\":\"day\"}";
        final double[] answered = new double[freshnessSamples];
        final double[] started = new double[freshnessSamples];
        int polls = 0;
        for (int k = 1; k <= freshnessSamples; k++) {
            eddy.post("/capture/", "{\"api_key\":\"" + args.get("token") + "\",\"event\":\"" + FRESHNESS_EVENT + "\",\"distinct_id\":\"freshness-probe\","
                    + "\"timestamp\":\"" + Instant.now() + "\",\"properties\":{\"sample\":" + k + "}}");
            final long acked = System.nanoTime();
            while (true) {
                final long queried = System.nanoTime();
                final long counted = EddyHttp.total(Json.mapper().readTree(eddy.post("/api/projects/1/insights/trend/", query)));
                polls++;
                if (counted >= k) {
                    answered[k - 1] = (System.nanoTime() - acked) / 1e6;
                    started[k - 1] = Math.max(0, queried - acked) / 1e6;
                    break;
                }
                if (System.nanoTime() - acked > EddyHttp.QUERY_TIMEOUT_MS * 1_000_000L) {
                    throw new IllegalStateException("captured event " + k + " not in a trend after " + EddyHttp.QUERY_TIMEOUT_MS + " ms");
                }
            }
        }
        Arrays.sort(answered);
        Arrays.sort(started);
        System.out.printf(Locale.ROOT, "%nfreshness, %d single /capture/ events (%d trend queries): ack → answer that counts it p50 %.0f ms, "
                + "p99 %.0f ms, max %.0f ms; ack → start of that query p50 %.0f ms, p99 %.0f ms%n", freshnessSamples, polls,
                percentile(answered, 50), percentile(answered, 99), answered[answered.length - 1], percentile(started, 50), percentile(started, 99));
    }
}
