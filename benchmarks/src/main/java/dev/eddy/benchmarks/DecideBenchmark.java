package dev.eddy.benchmarks;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * {@code /flags?v=2} of a running Eddy with 50 flags (rollouts, person-property conditions, multivariate) and
 * {@code --persons} persons in its stores, under {@code --clients} concurrent keep-alive clients, beside the same
 * server's constant {@code /_health/live} route (the HTTP ceiling) in the same run. Prints both rates and the
 * latency percentiles.
 *
 * <p>Usage: {@code DecideBenchmark --gateway URL --token phc_... --key phx_... [--persons 100000] [--clients 32]
 * [--seconds 20]}
 */
public final class DecideBenchmark {
    private static final long REQUEST_TIMEOUT_MS = 10_000;

    private final Map<String, String> args;
    private final URI gateway;
    private final int persons;
    private final int clients;
    private final int seconds;
    private Vertx vertx;

    private DecideBenchmark(final Map<String, String> args) {
        this.args = args;
        this.gateway = URI.create(args.get("gateway"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "100000"));
        this.clients = Integer.parseInt(args.getOrDefault("clients", "32"));
        this.seconds = Integer.parseInt(args.getOrDefault("seconds", "20"));
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "gateway", "token", "key");
        new DecideBenchmark(args).run();
    }

    private void run() throws Exception {
        vertx = Vertx.vertx();
        try {
            final HttpClient http = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(gateway.getHost())
                    .setDefaultPort(gateway.getPort()).setKeepAlive(true), new PoolOptions().setHttp1MaxSize(clients));
            createFlags(http);
            loadPersons(http);
            EddyStreams.awaitIdle(http);
            System.out.printf(Locale.ROOT, "50 flags, %,d persons, %d concurrent clients, %d s per route%n", persons, clients, seconds);
            measure(http, "warm-up /flags", this::decideBody, "/flags/?v=2", HttpMethod.POST, seconds / 2);
            measure(http, "warm-up /_health/live", i -> null, "/_health/live", HttpMethod.GET, seconds / 2);
            final Result ceiling = measure(http, "/_health/live", i -> null, "/_health/live", HttpMethod.GET, seconds);
            final Result decide = measure(http, "/flags?v=2", this::decideBody, "/flags/?v=2", HttpMethod.POST, seconds);
            System.out.printf(Locale.ROOT, "ratio /flags over /_health/live: %.2f%n", decide.perSecond() / ceiling.perSecond());
            // Latency at a given load, not at saturation: requests sent on a fixed schedule, each timed from when it
            // was due (so a stall counts against every request it delays).
            for (final double share : new double[] {0.25, 0.5}) {
                final int rate = (int) (decide.perSecond() * share);
                paced(http, String.format(Locale.ROOT, "/flags?v=2 at %.0f%% (%,d/s)", share * 100, rate), rate, seconds);
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private record Result(double perSecond, Histogram latency, long failures) {
    }

    private String decideBody(final int i) {
        final int person = new SplittableRandom(i).nextInt(persons);
        return "{\"token\":\"" + args.get("token") + "\",\"distinct_id\":\"bench-person-" + person + "\"}";
    }

    private Result measure(final HttpClient http, final String name, final java.util.function.IntFunction<String> body,
                           final String path, final HttpMethod method, final int duration) throws InterruptedException {
        final Recorder recorder = new Recorder(3);
        final AtomicLong done = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final long end = System.nanoTime() + duration * 1_000_000_000L;
        final CountDownLatch finished = new CountDownLatch(clients);
        final long start = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            next(http, body, path, method, end, recorder, done, failures, finished, c * 1_000_000);
        }
        if (!finished.await(duration + REQUEST_TIMEOUT_MS / 1000 + 5, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException(finished.getCount() + " of " + clients + " clients of " + name + " stalled");
        }
        final double elapsed = (System.nanoTime() - start) / 1e9;
        final Histogram h = recorder.getIntervalHistogram();
        final Result r = new Result(done.get() / elapsed, h, failures.get());
        System.out.printf(Locale.ROOT, "%-22s %,9.0f req/s  p50 %.2f ms  p99 %.2f ms  max %.1f ms  (%d failed)%n", name, r.perSecond(),
                h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, h.getMaxValue() / 1e6, r.failures());
        return r;
    }

    /** {@code /flags} requests at {@code rate} per second for {@code duration} seconds, open loop. */
    private void paced(final HttpClient http, final String name, final int rate, final int duration) throws InterruptedException {
        final Recorder recorder = new Recorder(3);
        final AtomicLong done = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final long total = (long) rate * duration;
        final CountDownLatch finished = new CountDownLatch(1);
        final long start = System.nanoTime();
        final long interval = 1_000_000_000L / rate;
        final AtomicLong sent = new AtomicLong();
        final long timer = vertx.setPeriodic(1, id -> {
            // Sends every request due by now; each is timed from its due time.
            final long now = System.nanoTime();
            while (sent.get() < total && start + sent.get() * interval <= now) {
                final long due = start + sent.get() * interval;
                final String payload = decideBody((int) sent.getAndIncrement());
                http.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/flags/?v=2").setConnectTimeout(REQUEST_TIMEOUT_MS).setIdleTimeout(REQUEST_TIMEOUT_MS))
                        .compose(req -> req.putHeader("Content-Type", "application/json").send(payload)
                                .compose(resp -> resp.body().map(resp.statusCode())))
                        .onComplete(result -> {
                            recorder.recordValue(System.nanoTime() - due);
                            if (result.failed() || result.result() != 200) {
                                failures.incrementAndGet();
                            }
                            if (done.incrementAndGet() == total) {
                                finished.countDown();
                            }
                        });
            }
        });
        final boolean completed = finished.await(duration + REQUEST_TIMEOUT_MS / 1000 + 5, java.util.concurrent.TimeUnit.SECONDS);
        vertx.cancelTimer(timer);
        if (!completed) {
            throw new IllegalStateException(name + ": " + (total - done.get()) + " requests unanswered");
        }
        final double elapsed = (System.nanoTime() - start) / 1e9;
        final Histogram h = recorder.getIntervalHistogram();
        System.out.printf(Locale.ROOT, "%-30s %,9.0f req/s  p50 %.2f ms  p99 %.2f ms  max %.1f ms  (%d failed)%n", name, done.get() / elapsed,
                h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, h.getMaxValue() / 1e6, failures.get());
    }

    private void next(final HttpClient http, final java.util.function.IntFunction<String> body, final String path,
                      final HttpMethod method, final long end, final Recorder recorder, final AtomicLong done,
                      final AtomicLong failures, final CountDownLatch finished, final int sequence) {
        if (System.nanoTime() > end) {
            finished.countDown();
            return;
        }
        final long t0 = System.nanoTime();
        final String payload = body.apply(sequence);
        // A request that gets no connection or no answer within the timeout counts as failed instead of stalling its client.
        http.request(new RequestOptions().setMethod(method).setURI(path).setConnectTimeout(REQUEST_TIMEOUT_MS).setIdleTimeout(REQUEST_TIMEOUT_MS))
                .compose(req -> (payload == null ? req.send() : req.putHeader("Content-Type", "application/json").send(payload))
                        .compose(resp -> resp.body().map(resp.statusCode())))
                .onComplete(result -> {
                    recorder.recordValue(System.nanoTime() - t0);
                    done.incrementAndGet();
                    if (result.failed() || result.result() != 200) {
                        failures.incrementAndGet();
                    }
                    // From the event loop's queue, not this stack: a run of immediate failures must not overflow it.
                    vertx.runOnContext(v -> next(http, body, path, method, end, recorder, done, failures, finished, sequence + 1));
                });
    }

    /** 50 flags: 20 rollouts, 20 person-property conditions, 10 multivariate. */
    private void createFlags(final HttpClient http) throws Exception {
        final List<Future<Integer>> created = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            final String filters;
            if (i < 20) {
                filters = "{\"groups\":[{\"properties\":[],\"rollout_percentage\":" + (5 * (i % 20) + 5) + "}]}";
            } else if (i < 40) {
                filters = "{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":[\"pro\",\"team\"],\"type\":\"person\"},"
                        + "{\"key\":\"age\",\"value\":" + (i % 50) + ",\"operator\":\"gt\",\"type\":\"person\"}],\"rollout_percentage\":80},"
                        + "{\"properties\":[{\"key\":\"email\",\"value\":\"@corp.test\",\"operator\":\"icontains\",\"type\":\"person\"}]}]}";
            } else {
                filters = "{\"groups\":[{\"properties\":[],\"rollout_percentage\":90}],\"multivariate\":{\"variants\":["
                        + "{\"key\":\"control\",\"rollout_percentage\":50},{\"key\":\"test\",\"rollout_percentage\":50}]},"
                        + "\"payloads\":{\"test\":\"{\\\"x\\\":1}\"}}";
            }
            final String body = "{\"key\":\"bench-flag-" + i + "-" + System.nanoTime() + "\",\"filters\":" + filters + "}";
            created.add(http.request(HttpMethod.POST, "/api/projects/1/feature_flags/")
                    .compose(req -> req.putHeader("Authorization", "Bearer " + args.get("key"))
                            .putHeader("Content-Type", "application/json")
                            .send(body))
                    .map(resp -> resp.statusCode()));
        }
        Future.all(created).toCompletionStage().toCompletableFuture().get();
    }

    /** One $identify per person with plan, age and email, in batches; waits until the last person is in the stores. */
    private void loadPersons(final HttpClient http) throws Exception {
        final SplittableRandom random = new SplittableRandom(7);
        final int batch = 500;
        for (int from = 0; from < persons; from += batch) {
            final StringBuilder events = new StringBuilder();
            for (int i = from; i < Math.min(persons, from + batch); i++) {
                events.append(i == from ? "" : ",").append("{\"event\":\"$identify\",\"distinct_id\":\"bench-person-").append(i)
                        .append("\",\"properties\":{\"$set\":{\"plan\":\"").append(random.nextBoolean() ? "pro" : "free")
                        .append("\",\"age\":").append(random.nextInt(80)).append(",\"email\":\"p").append(i)
                        .append(random.nextInt(10) == 0 ? "@corp.test" : "@mail.test").append("\"}}}");
            }
            final String body = "{\"api_key\":\"" + args.get("token") + "\",\"batch\":[" + events + "]}";
            final int status = http.request(HttpMethod.POST, "/batch/").compose(req -> req.putHeader("Content-Type", "application/json")
                    .send(Buffer.buffer(body))).map(resp -> resp.statusCode()).toCompletionStage().toCompletableFuture().get();
            if (status != 200) {
                throw new IllegalStateException("/batch/ answered " + status);
            }
        }
        final long deadline = System.nanoTime() + 600_000_000_000L;
        final String last = "bench-person-" + (persons - 1);
        while (System.nanoTime() < deadline) {
            final String found = http.request(HttpMethod.GET, "/api/projects/1/persons/?distinct_id=" + last)
                    .compose(req -> req.putHeader("Authorization", "Bearer " + args.get("key")).send().compose(resp -> resp.body()))
                    .map(Buffer::toString).toCompletionStage().toCompletableFuture().get();
            if (found.contains("\"count\":1")) {
                return;
            }
            Thread.sleep(1000);
        }
        throw new IllegalStateException("the persons did not reach the stores within 10 minutes");
    }
}
