package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.flags.FlagHash;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * The soak run of {@code scripts/soak} against one running Eddy (role {@code all}):
 * <ol>
 *   <li>calibration: {@code /batch/}es of {@code --batch} from {@code --clients} closed-loop clients for {@code
 *       --calibrate-seconds} after {@code --calibrate-warmup-seconds}: the maximum accepted rate; the raw {@code
 *       KafkaProducer} with the gateway's settings on the same broker (the ratio's baseline); and how fast those
 *       events went through the topology (until a trend counted them all);</li>
 *   <li>soak: for {@code --minutes}, capture at {@code --load-percent} of the maximum rate Eddy processes end to
 *       end ({@code --basis processing}, the default: what it can sustain), or of the capture maximum
 *       ({@code --basis capture}), on a fixed schedule (open loop: each request timed from when it was due), events of {@code --persons} persons, {@code --identify-percent} of them anonymous
 *       first and then {@code $identify}ing, every event of a person's own id carrying {@code $set} of its plan;
 *       beside it {@code /flags?v=2} for random persons at {@code --decide-rate} per second against two flags (a
 *       person-property condition, a multivariate one) and a dashboard with a trend tile and a funnel tile refreshed
 *       ({@code refresh=force_blocking}) {@code --query-rate} times per second, both open loop as well. Every {@code
 *       --sample-seconds}: a row of acked events/s, latencies, errors, Eddy's heap, RSS and consumer lag;</li>
 *   <li>reconciliation: once Eddy has counted every acked event (within {@code --drain-timeout}, by default three
 *       times the backlog at the measured processing rate and at least 10 minutes), exactly: each event name's
 *       count, each person's count by a person property (which holds only when the anonymous events joined their
 *       person), the number of persons and of unique users against what the acked events make, and {@code /flags}
 *       of {@code --decide-samples} persons against their {@code $set} plan and PostHog's variant hash;</li>
 *   <li>report: the rows and a summary, as markdown, to stdout and {@code --out}.</li>
 * </ol>
 *
 * <p>Usage: {@code SoakBenchmark --gateway URL --token phc_... --key phx_... --bootstrap HOST:PORT --raw-topic NAME
 * --pid EDDY_PID --out FILE [--minutes 10] [--load-percent 70 | --rate EVENTS_PER_S] [--basis processing] [--calibrate-seconds 30]
 * [--calibrate-warmup-seconds 10] [--clients 16] [--batch 100] [--persons 20000] [--identify-percent 20]
 * [--decide-rate 200] [--query-rate 0.2] [--sample-seconds 10] [--decide-samples 200] [--raw-events 200000]
 * [--raw-rounds 3] [--partitions 12] [--seed 42] [--drain-timeout SECONDS]}. Exits 1 when anything does not
 * reconcile.
 */
public final class SoakBenchmark {
    static final String PAGEVIEW = "soak_pageview";
    static final String SIGNUP = "soak_signup";
    static final String IDENTIFY = "$identify";
    static final String CALIBRATION = "soak_calibration";
    static final String PRO_FLAG = "soak-pro";
    static final String VARIANT_FLAG = "soak-variant";
    /** Calibration events come from this many distinct ids (persons of their own). */
    private static final int CALIBRATION_IDS = 100;
    private static final long SOAK_UUIDS = 0x50a4_0000_0000_4000L;
    private static final long CALIBRATION_UUIDS = 0x50a4_0001_0000_4000L;
    private static final long REQUEST_TIMEOUT_MS = 60_000;
    private static final long FLAGS_TIMEOUT_MS = 10_000;
    private static final Pattern PERSON_VALUE = Pattern.compile("p\\d+");

    private final Map<String, String> args;
    private final URI gateway;
    private final String token;
    private final double minutes;
    /** Events/s of the soak when set ({@code --rate}): the same load for runs that compare configurations. */
    private final double fixedRate;
    private final double loadPercent;
    private final String basis;
    private final int calibrateSeconds;
    private final int calibrateWarmupSeconds;
    /** Most calibration events sent: the topology must count them all before the soak starts. */
    private final long calibrateEvents;
    private double calibrationSeconds;
    private final int clients;
    private final int batch;
    private final int persons;
    private final int identifyPercent;
    private final double decideRate;
    private final double queryRate;
    private final int sampleSeconds;
    private final int decideSamples;
    private final long seed;
    private final long eddyPid;

    /**
     * Every request of the run. The JDK's client opens a connection whenever none is free, so no request waits in a
     * pool: Vert.x 5.0's pool was seen to leave requests waiting forever under this load.
     */
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(java.time.Duration.ofSeconds(10)).build();
    private Vertx vertx;
    /** For {@link EddyStreams}' waits only. */
    private EddyHttp api;
    private long dashboardId;

    private final SoakLedger ledger;
    /** Events sent so far per person (identifying persons only): which id and kind the next one gets. */
    private final int[] sent;
    private final AtomicLong uuids = new AtomicLong();
    private final Map<String, AtomicLong> ackedByName = Map.of(PAGEVIEW, new AtomicLong(), SIGNUP, new AtomicLong(), IDENTIFY, new AtomicLong());
    private final AtomicLong calibrationAcked = new AtomicLong();
    private final AtomicIntegerArray calibrationIds = new AtomicIntegerArray(CALIBRATION_IDS);

    private final Route captureRoute = new Route("capture /batch/");
    private final Route flagsRoute = new Route("/flags?v=2");
    private final Route queryRoute = new Route("dashboard refresh");
    private final List<Sample> samples = new ArrayList<>();
    private final List<String> report = new ArrayList<>();

    private SoakBenchmark(final Map<String, String> args) {
        this.args = args;
        this.gateway = URI.create(args.get("gateway"));
        this.token = args.get("token");
        this.minutes = Double.parseDouble(args.getOrDefault("minutes", "10"));
        this.loadPercent = Double.parseDouble(args.getOrDefault("load-percent", "70"));
        this.fixedRate = Double.parseDouble(args.getOrDefault("rate", "0"));
        this.basis = args.getOrDefault("basis", "processing");
        if (!List.of("capture", "processing").contains(basis)) {
            throw new IllegalArgumentException("--basis must be capture or processing, not " + basis);
        }
        this.calibrateSeconds = Integer.parseInt(args.getOrDefault("calibrate-seconds", "30"));
        this.calibrateWarmupSeconds = Integer.parseInt(args.getOrDefault("calibrate-warmup-seconds", "10"));
        // A gateway taking 120k events/s sent 4M in 40 s, which the topology then took 12 minutes to count.
        this.calibrateEvents = Long.parseLong(args.getOrDefault("calibrate-events", "1000000"));
        this.clients = Integer.parseInt(args.getOrDefault("clients", "16"));
        this.batch = Integer.parseInt(args.getOrDefault("batch", "100"));
        this.persons = Integer.parseInt(args.getOrDefault("persons", "20000"));
        this.identifyPercent = Integer.parseInt(args.getOrDefault("identify-percent", "20"));
        this.decideRate = Double.parseDouble(args.getOrDefault("decide-rate", "200"));
        this.queryRate = Double.parseDouble(args.getOrDefault("query-rate", "0.2"));
        this.sampleSeconds = Integer.parseInt(args.getOrDefault("sample-seconds", "10"));
        this.decideSamples = Integer.parseInt(args.getOrDefault("decide-samples", "200"));
        this.seed = Long.parseLong(args.getOrDefault("seed", "42"));
        this.eddyPid = Long.parseLong(args.get("pid"));
        this.ledger = new SoakLedger(persons);
        this.sent = new int[persons];
    }

    public static void main(final String[] argv) throws Exception {
        final Map<String, String> args = BenchArgs.parse(argv, "gateway", "token", "key", "bootstrap", "raw-topic", "pid", "out");
        if (!new SoakBenchmark(args).run()) {
            System.exit(1);
        }
    }

    /** @return whether everything reconciled */
    private boolean run() throws Exception {
        vertx = Vertx.vertx();
        try {
            api = new EddyHttp(vertx, gateway, args.get("key"), 2);
            EddyStreams.awaitBalanced(List.of(api.client()));
            setUp();

            final double captureMax = calibrate();
            final double raw = baseline();
            final double processing = processingRate();
            final double target = fixedRate > 0 ? fixedRate : loadPercent / 100 * ("capture".equals(basis) ? captureMax : processing);
            System.out.println("target: " + load(target, processing));
            if (target > processing) {
                System.out.printf(Locale.ROOT, "NOTE: the target outruns the processing rate measured in calibration (%,.0f events/s): "
                        + "the lag may grow by up to %,.0f events/s, all to be processed before the reconciliation%n", processing, target - processing);
            }

            final Instant soakStart = Instant.now();
            final double[] keptBefore = keptFreshTimer();
            final double seconds = soak(target);
            final Instant soakEnd = Instant.now();
            final double[] keptAfter = keptFreshTimer();
            keptFreshCount = keptAfter[0] - keptBefore[0];
            keptFreshMeanMillis = (keptAfter[1] - keptBefore[1]) / keptFreshCount * 1000;
            final double drained = drain(soakStart, soakEnd, processing);
            final List<String> mismatches = reconcile(soakStart, soakEnd);

            summary(captureMax, raw, processing, target, seconds, drained, mismatches);
            final String text = String.join("\n", report) + "\n";
            System.out.print("\n" + text);
            Files.writeString(Path.of(args.get("out")), text);
            return mismatches.isEmpty();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private HttpRequest.Builder request(final String path, final long timeoutMs) {
        return HttpRequest.newBuilder(gateway.resolve(path)).timeout(java.time.Duration.ofMillis(timeoutMs));
    }

    private java.util.concurrent.CompletableFuture<HttpResponse<String>> postAsync(final String path, final String body, final long timeoutMs) {
        return http.sendAsync(request(path, timeoutMs).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A request with the personal key (a JSON body unless {@code null}), answered 200 or 201: its body. */
    private String apiCall(final String method, final String path, final String body) throws Exception {
        final HttpRequest.Builder b = request(path, EddyHttp.QUERY_TIMEOUT_MS).header("Authorization", "Bearer " + args.get("key"));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        final HttpResponse<String> r = http.send(b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200 && r.statusCode() != 201) {
            throw new IllegalStateException(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    // ---------------------------------------------------------------------------------------------------- set-up

    /** The two flags and the dashboard with a trend tile and a funnel tile over the soak's events. */
    private void setUp() throws Exception {
        apiCall("POST", "/api/projects/1/feature_flags/", "{\"key\":\"" + PRO_FLAG + "\",\"name\":\"soak: pro plan\",\"filters\":{\"groups\":[{"
                + "\"properties\":[{\"key\":\"plan\",\"value\":[\"pro\"],\"operator\":\"exact\",\"type\":\"person\"}],\"rollout_percentage\":100}]}}");
        apiCall("POST", "/api/projects/1/feature_flags/", "{\"key\":\"" + VARIANT_FLAG + "\",\"name\":\"soak: variants\",\"filters\":{\"groups\":[{"
                + "\"properties\":[],\"rollout_percentage\":100}],\"multivariate\":{\"variants\":[{\"key\":\"control\",\"rollout_percentage\":50},"
                + "{\"key\":\"test\",\"rollout_percentage\":50}]}}}");
        dashboardId = Json.mapper().readTree(apiCall("POST", "/api/projects/1/dashboards/", "{\"name\":\"soak\"}")).path("id").asLong();
        apiCall("POST", "/api/projects/1/insights/", "{\"name\":\"soak events per hour\",\"dashboards\":[" + dashboardId + "],\"filters\":{"
                + "\"insight\":\"TRENDS\",\"events\":[{\"id\":\"" + PAGEVIEW + "\"},{\"id\":\"" + SIGNUP + "\"}],\"interval\":\"hour\",\"date_from\":\"-24h\"}}");
        apiCall("POST", "/api/projects/1/insights/", "{\"name\":\"soak pageview to signup\",\"dashboards\":[" + dashboardId + "],\"filters\":{"
                + "\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"" + PAGEVIEW + "\",\"order\":0},{\"id\":\"" + SIGNUP + "\",\"order\":1}],"
                + "\"funnel_window_interval\":1,\"funnel_window_interval_unit\":\"hour\",\"date_from\":\"-24h\"}}");
        System.out.printf(Locale.ROOT, "flags %s and %s, dashboard %d with a trend tile and a funnel tile%n", PRO_FLAG, VARIANT_FLAG, dashboardId);
    }

    // ----------------------------------------------------------------------------------------------- calibration

    private long calibrationStart;

    /** The closed-loop maximum of accepted events/s, after a warm-up. */
    private double calibrate() throws Exception {
        calibrationStart = System.nanoTime();
        closedLoop(calibrateWarmupSeconds, calibrateEvents / 4);
        final long before = calibrationAcked.get();
        final long start = System.nanoTime();
        final long refused = closedLoop(calibrateSeconds, calibrateEvents);
        final double seconds = (System.nanoTime() - start) / 1e9;
        calibrationSeconds = seconds;
        final double max = (calibrationAcked.get() - before) / seconds;
        System.out.printf(Locale.ROOT, "calibration: /batch/es of %d from %d clients, closed loop: %,.0f events/s accepted over %.1f s "
                + "(after %d s of warm-up, at most %,d events; %d requests refused)%n", batch, clients, max, seconds, calibrateWarmupSeconds,
                calibrateEvents, refused);
        return max;
    }

    /**
     * {@code clients} threads each sending a calibration batch when its last is answered, for {@code seconds} or until
     * {@code limit} calibration events in all were acknowledged; refusals.
     */
    private long closedLoop(final int seconds, final long limit) throws Exception {
        final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        final AtomicLong refused = new AtomicLong();
        final java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(clients);
        try {
            final List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                done.add(pool.submit(() -> {
                    final int[] ids = new int[batch];
                    while (System.nanoTime() < deadline && calibrationAcked.get() < limit) {
                        final String body = calibrationBatch(ids);
                        final HttpResponse<String> r = http.send(request("/batch/", REQUEST_TIMEOUT_MS).header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200) {
                            calibrationAcked.addAndGet(batch);
                            for (final int id : ids) {
                                calibrationIds.set(id, 1);
                            }
                        } else {
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (final java.util.concurrent.Future<?> d : done) {
                d.get();
            }
            return refused.get();
        } finally {
            pool.shutdownNow();
        }
    }

    private String calibrationBatch(final int[] ids) {
        final StringBuilder json = new StringBuilder(220 * batch + 60).append("{\"api_key\":\"").append(token).append("\",\"batch\":[");
        final String now = Instant.now().toString();
        for (int i = 0; i < batch; i++) {
            final long n = uuids.getAndIncrement();
            ids[i] = (int) (n % CALIBRATION_IDS);
            json.append(i == 0 ? "" : ",").append("{\"event\":\"").append(CALIBRATION).append("\",\"distinct_id\":\"soak-calib-").append(ids[i])
                    .append("\",\"timestamp\":\"").append(now).append("\",\"uuid\":\"").append(new UUID(CALIBRATION_UUIDS, n))
                    .append("\",\"properties\":{\"soak_person\":\"calib\",\"$current_url\":\"https://shop.example/pricing\"}}");
        }
        return json.append("]}").toString();
    }

    /** The raw producer's events/s with calibration-like envelopes on the same broker: the median of the rounds after one warm-up. */
    private double baseline() throws Exception {
        final int events = Integer.parseInt(args.getOrDefault("raw-events", "200000"));
        final int rounds = Integer.parseInt(args.getOrDefault("raw-rounds", "3"));
        final Instant now = Instant.now();
        final List<CapturedEvent> envelopes = new ArrayList<>(events);
        for (int i = 0; i < events; i++) {
            envelopes.add(new CapturedEvent(CapturedEvent.VERSION, new UUID(CALIBRATION_UUIDS ^ 1, i).toString(), 1, token, "soak-calib-" + i % CALIBRATION_IDS,
                    CALIBRATION, Json.mapper().createObjectNode().put("soak_person", "calib").put("$current_url", "https://shop.example/pricing"),
                    now, now, null, "127.0.0.1", null, "benchmark"));
        }
        final double[] rates = BenchKafka.rawProducerRounds(args.get("bootstrap"), args.get("raw-topic"),
                Integer.parseInt(args.getOrDefault("partitions", "12")), envelopes, rounds);
        System.out.printf(Locale.ROOT, "baseline: raw KafkaProducer %,.0f events/s (median of %d rounds of %,d after a warm-up)%n",
                rates[rounds / 2], rounds, events);
        return rates[rounds / 2];
    }

    /** Waits until a trend counts every calibration event: their number over the time from the first send, then until the stream threads idle. */
    private double processingRate() throws Exception {
        final String body = trend("\"events\":[{\"id\":\"" + CALIBRATION + "\"}]", LocalDate.now(ZoneOffset.UTC).minusDays(1), LocalDate.now(ZoneOffset.UTC));
        final long deadline = System.nanoTime() + 1_800_000_000_000L;
        long counted = 0;
        long lastPrint = System.nanoTime();
        // At least: a calibration request that got no answer may have been written all the same.
        while (counted < calibrationAcked.get()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + counted + " of " + calibrationAcked.get() + " calibration events counted after 30 minutes");
            }
            Thread.sleep(250);
            counted = EddyHttp.total(Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", body)));
            if (System.nanoTime() - lastPrint > 10_000_000_000L) {
                System.out.printf(Locale.ROOT, "  %,d of %,d calibration events counted%n", counted, calibrationAcked.get());
                lastPrint = System.nanoTime();
            }
        }
        final double seconds = (System.nanoTime() - calibrationStart) / 1e9;
        final double rate = counted / seconds;
        System.out.printf(Locale.ROOT, "calibration: all %,d events counted in a trend %.1f s after the first send: %,.0f events/s end to end%n",
                counted, seconds, rate);
        EddyStreams.awaitIdle(api.client());
        return rate;
    }

    // ------------------------------------------------------------------------------------------------------- soak

    /** The soak at {@code target} events/s for {@code --minutes}, with its samples; the seconds it ran. */
    private double soak(final double target) throws Exception {
        final long start = System.nanoTime() + 200_000_000L;
        final long end = start + (long) (minutes * 60e9);
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> crashed = new AtomicReference<>();
        final SplittableRandom decideRandom = new SplittableRandom(seed + 1);
        final SplittableRandom eventRandom = new SplittableRandom(seed);
        final List<Thread> loops = List.of(
                loop("soak-capture", crashed, () -> new OpenLoop(start, target / batch).run(end, stop::get, (n, due) -> sendCapture(eventRandom, due))),
                loop("soak-flags", crashed, () -> new OpenLoop(start, decideRate).run(end, stop::get, (n, due) -> sendFlags(decideRandom, due))),
                loop("soak-queries", crashed, () -> new OpenLoop(start, queryRate).run(end, stop::get, (n, due) -> sendQuery(due))));
        System.out.printf(Locale.ROOT, "soak: %.1f min of /batch/ at %,.0f events/s (%,.1f requests/s of %d), /flags at %.0f/s, a dashboard refresh "
                + "every %.1f s; a row every %d s%n", minutes, target, target / batch, batch, decideRate, 1 / queryRate, sampleSeconds);
        System.out.println(Sample.HEADER);
        samples.add(sample(0, 0));
        try {
            long previous = start;
            for (long at = start + sampleSeconds * 1_000_000_000L; at <= end; at += sampleSeconds * 1_000_000_000L) {
                sleepUntil(at);
                if (crashed.get() != null) {
                    throw new IllegalStateException("a load thread failed", crashed.get());
                }
                samples.add(sample((at - start) / 1e9, (at - previous) / 1e9));
                previous = at;
            }
            for (final Thread t : loops) {
                t.join();
            }
            // The requests still in flight: a last row with them, so every acked event is in some row.
            final long deadline = System.nanoTime() + (EddyHttp.QUERY_TIMEOUT_MS + 5_000) * 1_000_000L;
            while (captureRoute.inFlight.get() + flagsRoute.inFlight.get() + queryRoute.inFlight.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            final long last = System.nanoTime();
            if (last - previous > 500_000_000L) {
                samples.add(sample((last - start) / 1e9, (last - previous) / 1e9));
            }
            return (end - start) / 1e9;
        } finally {
            stop.set(true);
        }
    }

    private static Thread loop(final String name, final AtomicReference<Throwable> crashed, final Runnable body) {
        final Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (final Throwable e) {
                crashed.compareAndSet(null, e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void sleepUntil(final long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    static String mainId(final int person) {
        return "soak-p" + person;
    }

    static String anonymousId(final int person) {
        return "soak-anon-p" + person;
    }

    static String plan(final int person) {
        return person % 3 == 0 ? "pro" : "free";
    }

    /** The kind of person {@code p}'s next event: identifying persons send two anonymous events, then {@code $identify}. */
    private int nextKind(final int p) {
        if (p % 100 >= identifyPercent) {
            return SoakLedger.MAIN;
        }
        final int s = sent[p]++;
        return s < 2 ? SoakLedger.ANONYMOUS : s == 2 ? SoakLedger.IDENTIFY : SoakLedger.MAIN;
    }

    private void sendCapture(final SplittableRandom random, final long due) {
        final int[] who = new int[batch];
        final int[] kinds = new int[batch];
        final String[] names = new String[batch];
        final StringBuilder json = new StringBuilder(260 * batch + 60).append("{\"api_key\":\"").append(token).append("\",\"batch\":[");
        final String now = Instant.now().toString();
        for (int i = 0; i < batch; i++) {
            final int p = random.nextInt(persons);
            final int kind = nextKind(p);
            who[i] = p;
            kinds[i] = kind;
            names[i] = kind == SoakLedger.IDENTIFY ? IDENTIFY : random.nextInt(10) == 0 ? SIGNUP : PAGEVIEW;
            json.append(i == 0 ? "" : ",").append("{\"event\":\"").append(names[i]).append("\",\"distinct_id\":\"")
                    .append(kind == SoakLedger.ANONYMOUS ? anonymousId(p) : mainId(p)).append("\",\"timestamp\":\"").append(now)
                    .append("\",\"uuid\":\"").append(new UUID(SOAK_UUIDS, uuids.getAndIncrement()))
                    .append("\",\"properties\":{\"soak_person\":\"p").append(p).append("\",\"$current_url\":\"https://shop.example/pricing\"");
            if (kind == SoakLedger.IDENTIFY) {
                json.append(",\"$anon_distinct_id\":\"").append(anonymousId(p)).append('"');
            }
            if (kind != SoakLedger.ANONYMOUS) {
                json.append(",\"$set\":{\"plan\":\"").append(plan(p)).append("\",\"soak_person\":\"p").append(p).append("\"}");
            }
            json.append("}}");
        }
        final String body = json.append("]}").toString();
        track(captureRoute, due, postAsync("/batch/", body, REQUEST_TIMEOUT_MS).thenApply(HttpResponse::statusCode), () -> {
            for (int i = 0; i < batch; i++) {
                ledger.acked(who[i], kinds[i]);
                ackedByName.get(names[i]).incrementAndGet();
            }
        });
    }

    private void sendFlags(final SplittableRandom random, final long due) {
        final int p = random.nextInt(persons);
        final String id = p % 100 < identifyPercent && random.nextBoolean() ? anonymousId(p) : mainId(p);
        final String body = "{\"token\":\"" + token + "\",\"distinct_id\":\"" + id + "\"}";
        track(flagsRoute, due, postAsync("/flags/?v=2", body, FLAGS_TIMEOUT_MS)
                .thenApply(r -> r.statusCode() == 200 && r.body().contains("\"errorsWhileComputingFlags\":true") ? 299 : r.statusCode()), () -> { });
    }

    private void sendQuery(final long due) {
        track(queryRoute, due, http.sendAsync(request("/api/projects/1/dashboards/" + dashboardId + "/?refresh=force_blocking", EddyHttp.QUERY_TIMEOUT_MS)
                        .header("Authorization", "Bearer " + args.get("key")).GET().build(), HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> r.statusCode() == 200 && !tilesAnswered(r.body()) ? 298 : r.statusCode()), () -> { });
    }

    /**
     * Counts a request of {@code route} when it is answered (its status; {@code onOk} first when 200) or fails (no
     * answer within its timeout, or no connection).
     */
    private static void track(final Route route, final long due, final java.util.concurrent.CompletableFuture<Integer> request,
                              final Runnable onOk) {
        route.inFlight.incrementAndGet();
        request.whenComplete((status, failure) -> {
            final int s = failure == null ? status : -1;
            if (s == 200) {
                onOk.run();
            }
            route.done(due, s, failure);
        });
    }

    /** Whether both tiles of the refreshed dashboard carry a result. */
    private static boolean tilesAnswered(final String dashboard) {
        try {
            final JsonNode tiles = Json.mapper().readTree(dashboard).path("tiles");
            int answered = 0;
            for (final JsonNode tile : tiles) {
                answered += tile.path("insight").path("result").isArray() ? 1 : 0;
            }
            return answered == 2;
        } catch (final Exception e) {
            return false;
        }
    }

    /**
     * One route's requests: latency from the due time (microseconds), answers 200 (ok), other answers (refused: a
     * status other than 200, or a 200 whose content is wrong, recorded as 298/299), no answer (failed).
     */
    private static final class Route {
        final String name;
        final Recorder recorder = new Recorder(3);
        final Histogram all = new Histogram(3);
        final AtomicLong inFlight = new AtomicLong();
        final AtomicLong ok = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final Map<String, AtomicLong> reasons = new java.util.concurrent.ConcurrentHashMap<>();

        Route(final String name) {
            this.name = name;
        }

        void done(final long due, final int status, final Throwable cause) {
            recorder.recordValue(Math.max(0, (System.nanoTime() - due) / 1000));
            if (status == 200) {
                ok.incrementAndGet();
            } else {
                (status < 0 ? failed : refused).incrementAndGet();
                final String reason = status < 0 ? String.valueOf(cause) : status == 298 ? "200 without both tile results"
                        : status == 299 ? "200 with errorsWhileComputingFlags" : "status " + status;
                reasons.computeIfAbsent(reason.length() > 120 ? reason.substring(0, 120) : reason, k -> new AtomicLong()).incrementAndGet();
            }
            inFlight.decrementAndGet();
        }

        long errors() {
            return refused.get() + failed.get();
        }

        /** The latencies since the last call, also added to {@link #all}. */
        Histogram interval() {
            final Histogram h = recorder.getIntervalHistogram();
            all.add(h);
            return h;
        }
    }

    // ---------------------------------------------------------------------------------------------------- samples

    /** One row of the time series. Latencies in ms (NaN when the interval had no request of the route). */
    record Sample(double t, double ackedPerSecond, double captureP50, double captureP99, double flagsP99, double queryP50, double queryP99,
                  long errors, double heapMb, double rssMb, double lag, long backlog) {
        static final String HEADER = "| t (s) | acked events/s | capture p50 ms | capture p99 ms | /flags p99 ms | dashboard p50 ms | dashboard p99 ms "
                + "| errors | heap MB | RSS MB | lag (records) | not yet counted |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

        String row() {
            return String.format(Locale.ROOT, "| %.0f | %s | %s | %s | %s | %s | %s | %d | %.0f | %.0f | %s | %,d |", t, fmt(ackedPerSecond, "%,.0f"),
                    fmt(captureP50, "%.1f"), fmt(captureP99, "%.1f"), fmt(flagsP99, "%.1f"), fmt(queryP50, "%,.0f"), fmt(queryP99, "%,.0f"), errors, heapMb,
                    rssMb, fmt(lag, "%,.0f"), backlog);
        }
    }

    static String fmt(final double v, final String format) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, format, v);
    }

    private long ackedAtLastSample;
    private long errorsAtLastSample;

    private Sample sample(final double t, final double seconds) throws Exception {
        final long acked = ledger.total();
        final long errors = captureRoute.errors() + flagsRoute.errors() + queryRoute.errors();
        final Histogram c = captureRoute.interval();
        final Histogram f = flagsRoute.interval();
        final Histogram q = queryRoute.interval();
        final Map<String, Double> metrics = metrics();
        final Sample s = new Sample(t, seconds == 0 ? Double.NaN : (acked - ackedAtLastSample) / seconds, ms(c, 50), ms(c, 99), ms(f, 99), ms(q, 50), ms(q, 99),
                errors - errorsAtLastSample, metrics.get("heap") / 1e6, rssBytes() / 1e6, metrics.get("lag"), acked - soakCounted());
        ackedAtLastSample = acked;
        errorsAtLastSample = errors;
        System.out.println(s.row());
        return s;
    }

    /** The soak events a trend counts so far (unfiltered: from the hourly counts, cheap to ask). */
    private long soakCounted() throws Exception {
        final LocalDate today = LocalDate.now(ZoneOffset.UTC);
        return EddyHttp.total(Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", trend(soakSeries(""), today.minusDays(1), today))));
    }

    private static double ms(final Histogram h, final double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** Eddy's heap in use (every heap pool) and its stream threads' consumer lag (NaN when not exposed), from /metrics. */
    private Map<String, Double> metrics() throws Exception {
        final String text = apiCall("GET", "/metrics", null);
        return Map.of("heap", EddyHttp.metricSum(text, "jvm_memory_used_bytes", "area=\"heap\""), "lag", EddyHttp.metricSum(text, "eddy_streams_lag_records", ""));
    }

    /** Eddy's timer of the dashboards it keeps fresh (recalculated after reads, no one watching): count and seconds. */
    private double[] keptFreshTimer() throws Exception {
        return EddyHttp.keptFreshTimer(apiCall("GET", "/metrics", null));
    }

    /** Eddy's resident set (VmRSS), bytes. */
    private double rssBytes() throws Exception {
        for (final String line : Files.readAllLines(Path.of("/proc/" + eddyPid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Double.parseDouble(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return Double.NaN;
    }

    // --------------------------------------------------------------------------------------------- reconciliation

    private double lagAtEnd;
    /** The dashboard's recalculations in the background during the soak, and their mean time. */
    private double keptFreshCount;
    private double keptFreshMeanMillis;

    /** Waits until a trend counts every acked soak event; the seconds it took. */
    private double drain(final Instant from, final Instant to, final double processing) throws Exception {
        final String body = trend(soakSeries(""), day(from), day(to));
        long counted = EddyHttp.total(Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", body)));
        lagAtEnd = ledger.total() - counted;
        final long timeout = args.containsKey("drain-timeout") ? Long.parseLong(args.get("drain-timeout"))
                : (long) Math.max(600, 3 * lagAtEnd / processing);
        System.out.printf(Locale.ROOT, "drain: %,d of %,d acked events counted when the load stopped; waiting up to %d s for the rest%n",
                counted, ledger.total(), timeout);
        final long start = System.nanoTime();
        final long deadline = start + timeout * 1_000_000_000L;
        long lastPrint = start;
        while (counted < ledger.total() && System.nanoTime() < deadline) {
            Thread.sleep(500);
            counted = EddyHttp.total(Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", body)));
            if (System.nanoTime() - lastPrint > 10_000_000_000L) {
                final Map<String, Double> m = metrics();
                System.out.printf(Locale.ROOT, "  %,d of %,d counted after %.0f s (lag %,.0f records, heap %.0f MB, RSS %.0f MB)%n", counted,
                        ledger.total(), (System.nanoTime() - start) / 1e9, m.get("lag"), m.get("heap") / 1e6, rssBytes() / 1e6);
                lastPrint = System.nanoTime();
            }
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        // Merges move events between person timelines after the rollups have them: wait for the threads to settle.
        EddyStreams.awaitIdle(api.client());
        System.out.printf(Locale.ROOT, "drain: %,d counted %.1f s after the load stopped; stream threads idle%n", counted, seconds);
        return seconds;
    }

    /** Every check; the mismatches (empty when everything reconciles). */
    private List<String> reconcile(final Instant from, final Instant to) throws Exception {
        final List<String> mismatches = new ArrayList<>();
        final LocalDate first = day(from);
        final LocalDate last = day(to);

        // Each event name's count.
        final JsonNode byName = Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", trend(soakSeries(""), first, last)));
        long total = 0;
        for (final JsonNode item : byName.path("result")) {
            final String name = item.path("action").path("id").asText(item.path("label").asText());
            final long n = sum(item.path("data"));
            total += n;
            final long acked = ackedByName.get(name).get();
            check(mismatches, n == acked, String.format(Locale.ROOT, "events %s: Eddy %,d, acked %,d", name, n, acked));
        }
        check(mismatches, total == ledger.total(), String.format(Locale.ROOT, "all soak events: Eddy %,d, acked %,d", total, ledger.total()));

        // Each person's count, by the person property only their own id's events set: anonymous events count under it
        // only once merged into their person.
        final JsonNode byPerson = Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/", trend(soakSeries("")
                + ",\"breakdown\":\"soak_person\",\"breakdown_type\":\"person\",\"breakdown_limit\":" + (persons + 1), first, last)));
        final Map<String, Long> actual = new HashMap<>();
        long unattributed = 0;
        for (final JsonNode item : byPerson.path("result")) {
            final String value = item.path("breakdown_value").asText("");
            final long n = sum(item.path("data"));
            if (PERSON_VALUE.matcher(value).matches()) {
                actual.merge(value, n, Long::sum);
            } else {
                unattributed += n;
            }
        }
        final Map<String, Long> expected = ledger.expectedByPerson(p -> "p" + p);
        final List<String> differences = SoakLedger.differences(expected, actual, 10);
        check(mismatches, differences.isEmpty(), String.format(Locale.ROOT, "events per person (breakdown by the person property, %,d persons)%s",
                expected.size(), differences.isEmpty() ? ": Eddy = acked" : " differ: " + String.join("; ", differences)));
        check(mismatches, unattributed == ledger.expectedUnattributed(), String.format(Locale.ROOT,
                "events under no person's property (never identified anonymous ids): Eddy %,d, acked %,d", unattributed, ledger.expectedUnattributed()));

        // The persons the acked events make (an identified person's two ids are one), and the unique users over the run.
        long calibrationPersons = 0;
        for (int i = 0; i < CALIBRATION_IDS; i++) {
            calibrationPersons += calibrationIds.get(i);
        }
        final long expectedPersons = ledger.expectedPersons() + calibrationPersons;
        final long listed = Json.mapper().readTree(apiCall("GET", "/api/projects/1/persons/?limit=1", null)).path("count").asLong(-1);
        check(mismatches, listed == expectedPersons, String.format(Locale.ROOT, "persons listed: Eddy %,d, expected %,d (%,d soak + %d calibration)",
                listed, expectedPersons, ledger.expectedPersons(), calibrationPersons));
        final JsonNode dau = Json.mapper().readTree(apiCall("POST", "/api/projects/1/insights/trend/",
                trend("\"events\":[{\"id\":null,\"math\":\"dau\"}],\"display\":\"ActionsTable\"", first, last)));
        final long unique = dau.path("result").path(0).path("aggregated_value").asLong(-1);
        check(mismatches, unique == expectedPersons, String.format(Locale.ROOT, "unique users over the run (dau, total value): Eddy %,d, expected %,d",
                unique, expectedPersons));

        // /flags of sampled persons: their plan from $set, their variant from PostHog's hash of the id asked with.
        final SplittableRandom random = new SplittableRandom(seed + 2);
        int asked = 0;
        int wrong = 0;
        for (int tries = 0; asked < decideSamples && tries < decideSamples * 20; tries++) {
            final int p = random.nextInt(persons);
            if (ledger.mainEvents(p) == 0) {
                continue;
            }
            final List<String> ids = ledger.identified(p) ? List.of(mainId(p), anonymousId(p)) : List.of(mainId(p));
            for (final String id : ids) {
                asked++;
                final String problem = flagsProblem(p, id);
                if (problem != null && wrong++ < 10) {
                    System.out.println("MISMATCH " + problem);
                }
            }
        }
        check(mismatches, wrong == 0, String.format(Locale.ROOT, "/flags of %d distinct ids of sampled persons against their plan and variant: %d wrong",
                asked, wrong));
        flagsChecked = asked;
        flagsWrong = wrong;
        return mismatches;
    }

    private int flagsChecked;
    private int flagsWrong;

    /** What is wrong with the /flags answer for {@code id} of person {@code p}, or null. */
    private String flagsProblem(final int p, final String id) throws Exception {
        final String answer = apiCall("POST", "/flags/?v=2", "{\"token\":\"" + token + "\",\"distinct_id\":\"" + id + "\"}");
        final JsonNode f = Json.mapper().readTree(answer).path("flags");
        final boolean pro = f.path(PRO_FLAG).path("enabled").asBoolean(false);
        final String variant = f.path(VARIANT_FLAG).path("variant").asText(null);
        final String expectedVariant = expectedVariant(id);
        if (pro != "pro".equals(plan(p)) || !expectedVariant.equals(variant)) {
            return String.format(Locale.ROOT, "/flags for %s (person %d, plan %s): %s=%s, %s=%s; expected %s, %s", id, p, plan(p), PRO_FLAG, pro,
                    VARIANT_FLAG, variant, "pro".equals(plan(p)), expectedVariant);
        }
        return null;
    }

    /** The variant of {@link #VARIANT_FLAG} (control 50%, then test 50%) PostHog gives {@code distinctId}. */
    static String expectedVariant(final String distinctId) {
        return FlagHash.of(VARIANT_FLAG, distinctId, "variant") < 0.5 ? "control" : "test";
    }

    private static void check(final List<String> mismatches, final boolean ok, final String what) {
        if (ok) {
            System.out.println("check " + what);
        } else {
            mismatches.add(what);
            System.out.println("MISMATCH " + what);
        }
    }

    private static long sum(final JsonNode data) {
        long n = 0;
        for (final JsonNode v : data) {
            n += v.asLong();
        }
        return n;
    }

    private static String soakSeries(final String math) {
        return "\"events\":[{\"id\":\"" + PAGEVIEW + "\"" + math + "},{\"id\":\"" + SIGNUP + "\"" + math + "},{\"id\":\"" + IDENTIFY + "\"" + math + "}]";
    }

    private static String trend(final String fields, final LocalDate from, final LocalDate to) {
        return "{" + fields + ",\"interval\":\"day\",\"date_from\":\"" + from + "\",\"date_to\":\"" + to + "\"}";
    }

    private static LocalDate day(final Instant instant) {
        return instant.atZone(ZoneOffset.UTC).toLocalDate();
    }

    // ----------------------------------------------------------------------------------------------------- report

    /** The soak's load, and where it came from. */
    private String load(final double target, final double processing) {
        return fixedRate > 0
                ? String.format(Locale.ROOT, "%,.0f events/s (--rate; %.0f%% of the processing rate)", target, 100 * target / processing)
                : String.format(Locale.ROOT, "%,.0f events/s (%.0f%% of the %s rate)", target, loadPercent, basis);
    }

    private void summary(final double captureMax, final double raw, final double processing, final double target, final double seconds,
                         final double drained, final List<String> mismatches) {
        final String load = load(target, processing);
        report.add(String.format(Locale.ROOT, "## Soak %s: %.1f min at %s", DateTimeFormatter.ISO_LOCAL_DATE.format(LocalDate.now(ZoneOffset.UTC)),
                minutes, load));
        report.add("");
        report.add(Sample.HEADER);
        samples.forEach(s -> report.add(s.row()));
        report.add("");
        report.add("| | |");
        report.add("|---|---|");
        row("machine", "%d cores, load average %s at the end", Runtime.getRuntime().availableProcessors(), loadavg());
        row("max `/batch/` capture (closed loop)", "%,.0f events/s (%d clients, batches of %d, %.1f s after %d s of warm-up, at most %,d events)",
                captureMax, clients, batch, calibrationSeconds, calibrateWarmupSeconds, calibrateEvents);
        row("raw `KafkaProducer`, same broker", "%,.0f events/s; capture / raw = %.2f", raw, captureMax / raw);
        row("processing (calibration events counted in a trend)", "%,.0f events/s end to end", processing);
        row("target", "%s", load);
        row("achieved", "%,.0f events/s acked (%,d events in %.0f s; %,d persons, %d%% identifying)", ledger.total() / seconds, ledger.total(), seconds,
                persons, identifyPercent);
        for (final Route r : List.of(captureRoute, flagsRoute, queryRoute)) {
            final Histogram h = r.all;
            row(r.name + " latency (from due time)", "p50 %s ms, p99 %s ms, max %s ms; %,d ok, %,d refused, %,d failed%s", fmt(ms(h, 50), "%.1f"),
                    fmt(ms(h, 99), "%.1f"), fmt(h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1000.0, "%.1f"), r.ok.get(), r.refused.get(),
                    r.failed.get(), r.reasons.isEmpty() ? "" : " " + r.reasons);
        }
        row("rates", "`/flags?v=2` %.0f/s for random persons (2 flags); dashboard (trend + funnel tile, `refresh=force_blocking`) every %.1f s",
                decideRate, 1 / queryRate);
        row("dashboard kept fresh (recalculated in the background after reads, once a second after events)", "%,.0f recalculations, mean %.1f ms",
                keptFreshCount, keptFreshMeanMillis);
        final double[] heap = samples.stream().mapToDouble(Sample::heapMb).filter(v -> !Double.isNaN(v)).toArray();
        final double[] rss = samples.stream().mapToDouble(Sample::rssMb).toArray();
        row("Eddy heap used (samples)", "min %.0f MB, max %.0f MB", Arrays.stream(heap).min().orElse(Double.NaN), Arrays.stream(heap).max().orElse(Double.NaN));
        row("Eddy RSS", "start %.0f MB, end %.0f MB, max %.0f MB", rss[0], rss[rss.length - 1], Arrays.stream(rss).max().orElse(Double.NaN));
        row("backlog when the load stopped", "%,.0f events not yet counted; all counted %.0f s later", lagAtEnd, drained);
        row("`/flags` checked after the drain", "%d distinct ids of sampled persons, %d wrong", flagsChecked, flagsWrong);
        row("reconciliation", mismatches.isEmpty() ? "exact: every event name's count, every person's count, the persons and unique users, the sampled flags"
                : "MISMATCH: " + String.join("; ", mismatches));
    }

    private void row(final String name, final String format, final Object... values) {
        report.add("| " + name + " | " + String.format(Locale.ROOT, format, values) + " |");
    }

    private static String loadavg() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (final Exception e) {
            return "?";
        }
    }
}
