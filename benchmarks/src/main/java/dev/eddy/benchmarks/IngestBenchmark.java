package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Events per second that Eddy's {@code /batch/} accepts (each request answered only after Kafka's ack), side
 * by side with a raw {@code KafkaProducer} writing the same envelopes to the same broker with the same
 * producer settings. Prints both rates, their ratio and the gateway's request latency percentiles.
 *
 * <p>Usage: {@code IngestBenchmark --bootstrap HOST:PORT --gateway URL --token phc_... [--events N]
 * [--batch 100] [--clients 32] [--event-bytes 500] [--partitions 12] [--rounds 5] [--warmups 8]}
 */
public final class IngestBenchmark {
    private static final int USERS = 10_000;

    private final Map<String, String> args;
    private final int events;
    private final int batch;
    private final int clients;
    private final int eventBytes;
    private final int rounds;
    private final int warmups;
    /** Built once: rounds must not measure the load generator's allocation. */
    private final List<CapturedEvent> envelopes = new ArrayList<>();

    private IngestBenchmark(final Map<String, String> args) {
        this.args = args;
        this.events = Integer.parseInt(args.getOrDefault("events", "200000"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "100"));
        // Enough requests in flight that the gateway, not the load generator's concurrency, sets the rate.
        this.clients = Integer.parseInt(args.getOrDefault("clients", "32"));
        this.eventBytes = Integer.parseInt(args.getOrDefault("event-bytes", "500"));
        this.rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
        this.warmups = Integer.parseInt(args.getOrDefault("warmups", "8"));
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "bootstrap", "gateway", "token");
        new IngestBenchmark(args).run();
    }

    private void run() throws Exception {
        final String topic = "bench.raw." + UUID.randomUUID().toString().substring(0, 8);
        BenchKafka.createTopic(args.get("bootstrap"), topic, Integer.parseInt(args.getOrDefault("partitions", "12")));
        final List<String> bodies = requestBodies();
        final Instant now = Instant.now();
        for (int i = 0; i < events; i++) {
            envelopes.add(new CapturedEvent(1, UUID.randomUUID().toString(), 1, args.get("token"), "user-" + (i % USERS),
                    "bench event", properties(i), now, now, null, "127.0.0.1", null, "benchmark"));
        }

        System.out.printf(Locale.ROOT, "%d events of ~%d bytes, batches of %d, %d concurrent clients, %d warm-up and %d measured rounds%n",
                events, eventBytes, batch, clients, warmups, rounds);
        // Warm both paths (JIT on both sides, connections, metadata) until steady before measuring either.
        for (int round = 1; round <= warmups; round++) {
            System.out.printf(Locale.ROOT, "warm-up %d: raw %,.0f events/s, gateway %,.0f events/s%n",
                    round, rawProducer(topic, events), gateway(bodies).eventsPerSecond());
        }

        // Alternate the two so drift on the shared machine (page cache, GC, other load) hits both alike.
        final List<Double> raws = new ArrayList<>();
        final List<Result> gateways = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            raws.add(rawProducer(topic, events));
            gateways.add(gateway(bodies));
            System.out.printf(Locale.ROOT, "round %d: raw %,.0f events/s, gateway %,.0f events/s%n",
                    round, raws.get(round - 1), gateways.get(round - 1).eventsPerSecond());
        }
        // The machine's speed drifts between rounds: the ratio is taken within each round, then the median.
        final List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            ratios.add(gateways.get(i).eventsPerSecond() / raws.get(i));
        }
        final double raw = median(raws);
        final Result gw = gateways.stream()
                .sorted(java.util.Comparator.comparingDouble(Result::eventsPerSecond)).toList().get(rounds / 2);
        final Histogram latency = gw.latency();
        System.out.printf(Locale.ROOT, "raw KafkaProducer : %,10.0f events/s (median of %d)%n", raw, rounds);
        System.out.printf(Locale.ROOT, "gateway /batch/   : %,10.0f events/s (median of %d; %d requests, %d failed)%n",
                gw.eventsPerSecond(), rounds, latency.getTotalCount(), gw.failures());
        System.out.printf(Locale.ROOT, "ratio             : %.2f (median of per-round gateway / raw; rounds %s)%n", median(ratios),
                ratios.stream().map(r -> String.format(Locale.ROOT, "%.2f", r)).toList());
        System.out.printf(Locale.ROOT, "request latency   : p50 %.1f ms, p99 %.1f ms, max %.1f ms (median gateway round)%n",
                latency.getValueAtPercentile(50) / 1e6, latency.getValueAtPercentile(99) / 1e6, latency.getMaxValue() / 1e6);
    }

    private static double median(final List<Double> values) {
        return values.stream().sorted().toList().get(values.size() / 2);
    }

    private double rawProducer(final String topic, final int count) throws Exception {
        return BenchKafka.rawProducer(args.get("bootstrap"), topic, envelopes.subList(0, count));
    }

    /**
     * @param eventsPerSecond accepted events per second
     * @param latency         request latency in nanoseconds
     * @param failures        requests not answered 200
     */
    private record Result(double eventsPerSecond, Histogram latency, long failures) {
    }

    private Result gateway(final List<String> bodies) throws Exception {
        final URI uri = URI.create(args.get("gateway"));
        final List<Buffer> payloads = bodies.stream().map(Buffer::buffer).toList();
        final Vertx vertx = Vertx.vertx();
        try {
            final HttpClient http = vertx.createHttpClient(new HttpClientOptions()
                    .setDefaultHost(uri.getHost()).setDefaultPort(uri.getPort()).setKeepAlive(true),
                    new PoolOptions().setHttp1MaxSize(clients));
            final Recorder recorder = new Recorder(3);
            final AtomicInteger next = new AtomicInteger();
            final AtomicLong failures = new AtomicLong();
            final CountDownLatch done = new CountDownLatch(clients);
            final long start = System.nanoTime();
            // Each client sends its next request when the previous one is answered: `clients` requests in flight.
            for (int c = 0; c < clients; c++) {
                sendNext(http, payloads, next, recorder, failures, done);
            }
            done.await();
            final double seconds = (System.nanoTime() - start) / 1e9;
            final long accepted = (long) bodies.size() * batch - failures.get() * batch;
            return new Result(accepted / seconds, recorder.getIntervalHistogram(), failures.get());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private void sendNext(final HttpClient http, final List<Buffer> payloads, final AtomicInteger next,
                          final Recorder recorder, final AtomicLong failures, final CountDownLatch done) {
        final int i = next.getAndIncrement();
        if (i >= payloads.size()) {
            done.countDown();
            return;
        }
        final long t0 = System.nanoTime();
        http.request(HttpMethod.POST, "/batch/")
                .compose(request -> request.putHeader("Content-Type", "application/json").send(payloads.get(i))
                        .compose(response -> response.body().map(response.statusCode())))
                .onComplete(result -> {
                    recorder.recordValue(System.nanoTime() - t0);
                    if (result.failed() || result.result() != 200) {
                        failures.incrementAndGet();
                    }
                    sendNext(http, payloads, next, recorder, failures, done);
                });
    }

    private List<String> requestBodies() {
        final List<String> bodies = new ArrayList<>(events / batch);
        for (int b = 0; b < events / batch; b++) {
            final ObjectNode body = Json.mapper().createObjectNode().put("api_key", args.get("token"));
            final ArrayNode items = body.putArray("batch");
            for (int i = 0; i < batch; i++) {
                final int n = b * batch + i;
                items.addObject().put("event", "bench event").put("distinct_id", "user-" + (n % USERS))
                        .put("timestamp", Instant.now().toString()).set("properties", properties(n));
            }
            bodies.add(body.toString());
        }
        return bodies;
    }

    /** Properties padded so one event's JSON is about {@code eventBytes} long. */
    private ObjectNode properties(final int n) {
        final ObjectNode props = Json.mapper().createObjectNode()
                .put("$current_url", "https://example.com/products/" + (n % 500))
                .put("$browser", "Firefox").put("$os", "Linux").put("$lib", "benchmark").put("seq", n);
        props.put("padding", "x".repeat(Math.max(0, eventBytes - 230)));
        return props;
    }
}
