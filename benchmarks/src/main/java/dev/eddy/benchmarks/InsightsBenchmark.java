package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Trend and funnel latency of a running Eddy against DuckDB in this process, over the same seeded events
 * ({@link InsightsEvents}) loaded into both, in one run: a daily {@code $pageview} trend, the same filtered on
 * {@code $browser} and broken down by {@code $current_url}, and an ordered 3-step funnel. Every answer of Eddy's must
 * equal DuckDB's (a MISMATCH fails the run); then warm-ups and {@code --repeats} alternating runs per query give p50
 * and p90 on both engines and their ratio against the targets. Also prints the load's rate and, after it,
 * the freshness of single captured events: from {@code /capture/}'s 200 until a trend query counts them.
 *
 * <p>Usage: {@code InsightsBenchmark --gateway URL --token phc_... --key phx_... [--events 1000000] [--persons 50000]
 * [--days 30] [--repeats 20] [--warmups 3] [--batch 1000] [--in-flight 4] [--seed 42] [--freshness-samples 100]}
 */
public final class InsightsBenchmark {
    private static final long QUERY_TIMEOUT_MS = 120_000;
    private static final long CONNECT_TIMEOUT_MS = 10_000;
    private static final int CONNECT_ATTEMPTS = 3;
    /** Requests sent again after they got no connection (see {@link #request}). */
    private int connectRetries;
    private static final String FRESHNESS_EVENT = "bench_freshness";

    private final Map<String, String> args;
    private final URI gateway;
    private final int eventCount;
    private final int persons;
    private final int days;
    private final int repeats;
    private final int warmups;
    private final int batch;
    private final int inFlight;
    private final long seed;
    private final int freshnessSamples;
    private final long loadTimeoutSeconds;
    private HttpClient http;

    private InsightsBenchmark(final Map<String, String> args) {
        this.args = args;
        this.gateway = URI.create(args.get("gateway"));
        this.eventCount = Integer.parseInt(args.getOrDefault("events", "1000000"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "50000"));
        this.days = Integer.parseInt(args.getOrDefault("days", "30"));
        this.repeats = Integer.parseInt(args.getOrDefault("repeats", "20"));
        this.warmups = Integer.parseInt(args.getOrDefault("warmups", "3"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "1000"));
        this.inFlight = Integer.parseInt(args.getOrDefault("in-flight", "4"));
        this.seed = Long.parseLong(args.getOrDefault("seed", "42"));
        this.freshnessSamples = Integer.parseInt(args.getOrDefault("freshness-samples", "100"));
        this.loadTimeoutSeconds = Long.parseLong(args.getOrDefault("load-timeout", "3600"));
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "gateway", "token", "key");
        if (!new InsightsBenchmark(args).run()) {
            System.exit(1);
        }
    }

    /**
     * One query on both engines: the request to Eddy, the same question to DuckDB, and each answer written the same
     * way (one line per series, or the step counts) so that equal answers are equal strings.
     *
     * @param target the ratio Eddy/DuckDB of the p50s the issue asks for, or {@code null}
     */
    private record Query(String name, String path, String body, DuckQuery duck, Double target) {
    }

    @FunctionalInterface
    private interface DuckQuery {
        Object run() throws Exception;
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
            http = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(gateway.getHost()).setDefaultPort(gateway.getPort())
                    .setKeepAlive(true), new PoolOptions().setHttp1MaxSize(inFlight + 1));
            final String range = "\"date_from\":\"" + events.firstDay + "\",\"date_to\":\"" + lastDay + "\"";
            final String allEvents = "{\"events\":[{\"id\":null}],\"interval\":\"day\"," + range + "}";
            load(events, allEvents);
            EddyStreams.awaitIdle(http);

            t0 = System.nanoTime();
            try (DuckDbInsights duck = new DuckDbInsights(events)) {
                System.out.printf(Locale.ROOT, "DuckDB %s (in process): loaded in %.1f s%n", duck.describe(), seconds(t0));
                final List<Query> queries = List.of(
                        new Query("trend all events, daily", "trend", allEvents, () -> duck.dailyCount(null), null),
                        new Query("trend $pageview, daily", "trend", "{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"day\"," + range + "}",
                                () -> duck.dailyCount("$pageview"), 0.2),
                        new Query("trend $browser!=Safari by URL", "trend", "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"$browser\","
                                + "\"value\":\"Safari\",\"operator\":\"is_not\",\"type\":\"event\"}],\"breakdown\":\"$current_url\","
                                + "\"breakdown_type\":\"event\",\"interval\":\"day\"," + range + "}", duck::pageviewsNotSafariByUrl, null),
                        new Query("funnel view>signup>buy 14d", "funnel", "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"$pageview\",\"order\":0},"
                                + "{\"id\":\"signup\",\"order\":1},{\"id\":\"purchase\",\"order\":2}],\"funnel_window_interval\":14,"
                                + "\"funnel_window_interval_unit\":\"day\"," + range + "}", duck::pageviewSignupPurchaseFunnel, 1.0));
                boolean matched = true;
                for (final Query q : queries) {
                    matched &= crossCheck(q);
                }
                final List<String> rows = new ArrayList<>();
                for (final Query q : queries.subList(1, queries.size())) {
                    final Timing timing = time(q);
                    matched &= timing.mismatches() == 0;
                    rows.add(timing.row(q));
                }
                System.out.printf(Locale.ROOT, "%nlatency over %d runs each after %d warm-ups, Eddy and DuckDB alternating; ratio = Eddy p50 / DuckDB p50:%n", repeats, warmups);
                System.out.printf(Locale.ROOT, "%-30s %10s %10s %10s %10s %8s %8s%n", "query", "Eddy p50", "Eddy p90", "DuckDB p50",
                        "DuckDB p90", "ratio", "target");
                rows.forEach(System.out::println);
                freshness();
                if (connectRetries > 0) {
                    System.out.printf(Locale.ROOT, "%n%d requests got no connection within %d ms and were sent again%n", connectRetries, CONNECT_TIMEOUT_MS);
                }
                System.out.println(matched ? "\nall of Eddy's answers equal DuckDB's" : "\nMISMATCH: Eddy's answers differ from DuckDB's (see above)");
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
    private void load(final InsightsEvents events, final String allEvents) throws Exception {
        final Semaphore slots = new Semaphore(inFlight);
        final AtomicReference<String> failure = new AtomicReference<>();
        final long start = System.nanoTime();
        for (int from = 0; from < events.count && failure.get() == null; from += batch) {
            final Buffer body = Buffer.buffer(events.batch(args.get("token"), from, Math.min(events.count, from + batch)));
            slots.acquire();
            http.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/batch/").setIdleTimeout(QUERY_TIMEOUT_MS))
                    .compose(req -> req.putHeader("Content-Type", "application/json").send(body))
                    .compose(resp -> resp.body().map(b -> resp.statusCode() == 200 ? null : "/batch/ answered " + resp.statusCode() + ": " + b))
                    .onComplete(r -> {
                        if (r.failed() || r.result() != null) {
                            failure.compareAndSet(null, r.failed() ? "/batch/ failed: " + r.cause() : r.result());
                        }
                        slots.release();
                    });
        }
        slots.acquire(inFlight);
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
        final double accepted = seconds(start);
        System.out.printf(Locale.ROOT, "load: %,d events in /batch/es of %d, %d in flight: accepted in %.1f s (%,.0f events/s)%n",
                events.count, batch, inFlight, accepted, events.count / accepted);
        // Progress from the hourly rollups, which cost Eddy little to read: a timeline scan every second would take
        // much of a core from the stream thread it waits for. Then the trend itself must count every event.
        final long deadline = System.nanoTime() + loadTimeoutSeconds * 1_000_000_000L;
        final String counts = "/api/projects/1/event_counts/?date_from=" + events.firstDay + "&date_to=" + events.firstDay.plusDays(days - 1L);
        long lastReport = System.nanoTime();
        long visible = 0;
        boolean inRollups = false;
        while (visible != events.count) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + visible + " of " + events.count + " events in Eddy's stores after " + loadTimeoutSeconds + " s");
            }
            Thread.sleep(1000);
            if (!inRollups) {
                visible = Json.mapper().readTree(request(HttpMethod.GET, counts, null)).path("total").asLong();
                inRollups = visible == events.count;
            }
            if (inRollups) {
                visible = total(Json.mapper().readTree(request(HttpMethod.POST, "/api/projects/1/insights/trend/", allEvents)));
            }
            if (System.nanoTime() - lastReport > 10_000_000_000L) {
                System.out.printf(Locale.ROOT, "  %,d of %,d events in Eddy's %s after %.0f s%n", visible, events.count,
                        inRollups ? "trends" : "hourly counts", seconds(start));
                lastReport = System.nanoTime();
            }
        }
        final double all = seconds(start);
        System.out.printf(Locale.ROOT, "load: all %,d in Eddy's trends after %.1f s (%,.0f events/s from first send to visible)%n",
                events.count, all, events.count / all);
    }

    private static long total(final JsonNode trend) {
        long total = 0;
        for (final JsonNode item : trend.path("result")) {
            for (final JsonNode v : item.path("data")) {
                total += v.asLong();
            }
        }
        return total;
    }

    /** Eddy's answer and DuckDB's, once, side by side; prints a MISMATCH with the differing lines. */
    private boolean crossCheck(final Query q) throws Exception {
        final String eddy = eddyAnswer(q, post(path(q), q.body()));
        final String duck = duckAnswer(q.duck().run());
        if (eddy.equals(duck)) {
            System.out.printf(Locale.ROOT, "check %-30s Eddy = DuckDB: %s%n", q.name(), summary(duck));
            return true;
        }
        System.out.printf(Locale.ROOT, "MISMATCH %s: Eddy (<) and DuckDB (>) differ:%n", q.name());
        final List<String> e = Arrays.asList(eddy.split("\n"));
        final List<String> d = Arrays.asList(duck.split("\n"));
        e.stream().filter(line -> !d.contains(line)).forEach(line -> System.out.println("  < " + line));
        d.stream().filter(line -> !e.contains(line)).forEach(line -> System.out.println("  > " + line));
        if (e.size() == d.size() && e.containsAll(d)) {
            System.out.println("  (same series in a different order)");
        }
        return false;
    }

    /** A short view of an answer: the steps, or the number of series and events. */
    private static String summary(final String answer) {
        if (!answer.contains("\t")) {
            return "steps " + answer;
        }
        long sum = 0;
        final String[] lines = answer.split("\n");
        for (final String line : lines) {
            for (final String v : line.substring(line.indexOf('[') + 1, line.length() - 1).split(", ")) {
                sum += Long.parseLong(v);
            }
        }
        return String.format(Locale.ROOT, "%d series, %,d events", lines.length, sum);
    }

    private static String path(final Query q) {
        return "/api/projects/1/insights/" + q.path() + "/";
    }

    /** Eddy's trend items (in its order) or funnel step counts, written as {@link #duckAnswer}. */
    private String eddyAnswer(final Query q, final String body) throws Exception {
        final JsonNode result = Json.mapper().readTree(body).path("result");
        if ("funnel".equals(q.path())) {
            final long[] counts = new long[result.size()];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = result.get(i).path("count").asLong(-1);
            }
            return Arrays.toString(counts);
        }
        final StringBuilder out = new StringBuilder();
        for (final JsonNode item : result) {
            final long[] data = new long[item.path("data").size()];
            for (int i = 0; i < data.length; i++) {
                data[i] = item.path("data").get(i).asLong();
            }
            out.append(out.length() == 0 ? "" : "\n").append(item.path("breakdown_value").asText("")).append('\t').append(Arrays.toString(data));
        }
        return out.toString();
    }

    /**
     * DuckDB's answer, trend series in PostHog's order: values by total descending then by value, the null value
     * last.
     */
    private static String duckAnswer(final Object answer) {
        if (answer instanceof long[] steps) {
            return Arrays.toString(steps);
        }
        final Map<String, long[]> series = ((DuckDbInsights.Trend) answer).series();
        final StringBuilder out = new StringBuilder();
        series.entrySet().stream()
                .sorted(Comparator.<Map.Entry<String, long[]>>comparingInt(e -> DuckDbInsights.NULL_BREAKDOWN.equals(e.getKey()) ? 1 : 0)
                        .thenComparing(e -> -Arrays.stream(e.getValue()).sum())
                        .thenComparing(Map.Entry::getKey))
                .forEach(e -> out.append(out.length() == 0 ? "" : "\n").append(e.getKey()).append('\t').append(Arrays.toString(e.getValue())));
        return out.toString();
    }

    /**
     * @param eddy       Eddy's latencies, milliseconds, sorted
     * @param duck       DuckDB's, the same
     * @param mismatches timed runs whose answer differed from the other engine's
     */
    private record Timing(double[] eddy, double[] duck, int mismatches) {
        String row(final Query q) {
            final double ratio = percentile(eddy, 50) / percentile(duck, 50);
            final String target = q.target() == null ? "" : String.format(Locale.ROOT, "≤ %.1f %s", q.target(), ratio <= q.target() ? "PASS" : "MISS");
            return String.format(Locale.ROOT, "%-30s %7.1f ms %7.1f ms %7.1f ms %7.1f ms %8.2f  %s%s", q.name(), percentile(eddy, 50),
                    percentile(eddy, 90), percentile(duck, 50), percentile(duck, 90), ratio, target,
                    mismatches == 0 ? "" : "  (" + mismatches + " runs MISMATCHED)");
        }
    }

    /** Nearest-rank percentile of sorted values. */
    private static double percentile(final double[] sorted, final double p) {
        return sorted[Math.max(0, (int) Math.ceil(p / 100 * sorted.length) - 1)];
    }

    /** Warm-ups, then {@code --repeats} runs on each engine in turn; every answer is checked after its clock stops. */
    private Timing time(final Query q) throws Exception {
        final double[] eddy = new double[repeats];
        final double[] duck = new double[repeats];
        final String expected = duckAnswer(q.duck().run());
        int mismatches = 0;
        for (int run = -warmups; run < repeats; run++) {
            long t0 = System.nanoTime();
            final String body = post(path(q), q.body());
            final double eddyMs = (System.nanoTime() - t0) / 1e6;
            t0 = System.nanoTime();
            final Object answer = q.duck().run();
            final double duckMs = (System.nanoTime() - t0) / 1e6;
            if (!eddyAnswer(q, body).equals(expected) || !duckAnswer(answer).equals(expected)) {
                mismatches++;
            }
            if (run >= 0) {
                eddy[run] = eddyMs;
                duck[run] = duckMs;
            }
        }
        Arrays.sort(eddy);
        Arrays.sort(duck);
        return new Timing(eddy, duck, mismatches);
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
            post("/capture/", "{\"api_key\":\"" + args.get("token") + "\",\"event\":\"" + FRESHNESS_EVENT + "\",\"distinct_id\":\"freshness-probe\","
                    + "\"timestamp\":\"" + Instant.now() + "\",\"properties\":{\"sample\":" + k + "}}");
            final long acked = System.nanoTime();
            while (true) {
                final long queried = System.nanoTime();
                final long counted = total(Json.mapper().readTree(post("/api/projects/1/insights/trend/", query)));
                polls++;
                if (counted >= k) {
                    answered[k - 1] = (System.nanoTime() - acked) / 1e6;
                    started[k - 1] = Math.max(0, queried - acked) / 1e6;
                    break;
                }
                if (System.nanoTime() - acked > QUERY_TIMEOUT_MS * 1_000_000L) {
                    throw new IllegalStateException("captured event " + k + " not in a trend after " + QUERY_TIMEOUT_MS + " ms");
                }
            }
        }
        Arrays.sort(answered);
        Arrays.sort(started);
        System.out.printf(Locale.ROOT, "%nfreshness, %d single /capture/ events (%d trend queries): ack → answer that counts it p50 %.0f ms, "
                + "p99 %.0f ms, max %.0f ms; ack → start of that query p50 %.0f ms, p99 %.0f ms%n", freshnessSamples, polls,
                percentile(answered, 50), percentile(answered, 99), answered[answered.length - 1], percentile(started, 50), percentile(started, 99));
    }

    private String post(final String path, final String body) throws Exception {
        return request(HttpMethod.POST, path, body);
    }

    /**
     * A request with the personal key (and a JSON body unless {@code null}), answered 200: its body. On this machine
     * the client's pool has been seen to leave a request waiting for a connection forever: a request that gets none
     * within {@value #CONNECT_TIMEOUT_MS} ms is sent again (at most {@value #CONNECT_ATTEMPTS} times, counted in the
     * report), so a stall costs that wait instead of the run.
     */
    private String request(final HttpMethod method, final String path, final String body) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return http.request(new RequestOptions().setMethod(method).setURI(path).setConnectTimeout(CONNECT_TIMEOUT_MS)
                                .setIdleTimeout(QUERY_TIMEOUT_MS))
                        .compose(req -> {
                            req.putHeader("Authorization", "Bearer " + args.get("key"));
                            return body == null ? req.send() : req.putHeader("Content-Type", "application/json").send(body);
                        })
                        .compose(resp -> resp.body().map(b -> {
                            if (resp.statusCode() != 200) {
                                throw new IllegalStateException(method + " " + path + " answered " + resp.statusCode() + ": " + b);
                            }
                            return b.toString();
                        }))
                        .toCompletionStage().toCompletableFuture().get();
            } catch (final java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof io.vertx.core.http.HttpClosedException || String.valueOf(e.getCause()).contains("onnect"))
                        || attempt == CONNECT_ATTEMPTS) {
                    throw e;
                }
                connectRetries++;
            }
        }
    }
}
