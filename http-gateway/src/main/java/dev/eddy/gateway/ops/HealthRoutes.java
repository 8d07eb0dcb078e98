package dev.eddy.gateway.ops;

import dev.eddy.gateway.db.Database;
import dev.eddy.gateway.http.Responses;
import dev.eddy.topology.StreamsApp;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * {@code GET /_health/live}: 200 while the process serves HTTP. {@code GET /_health} and {@code /_health/ready}: 503 while
 * this process's Kafka Streams instance is not RUNNING (naming its state and, after a fatal failure, the reason), else
 * 200; {@code status} is {@code degraded} while PostgreSQL does not answer (management routes answer 503 meanwhile,
 * capture and flags keep working). {@code GET /_health/gateway}: the same without the Streams instance (what a load
 * balancer in front of an {@code all} process asks: its routes serve during a rebalance or a restore).
 * {@code GET /metrics}: Prometheus exposition of HTTP, JVM, producer and streams metrics. Once the process is stopping
 * ({@link #drain}) both readiness answers are 503 {@code draining} while it still serves, so load balancers take it out
 * before it stops accepting connections.
 */
public final class HealthRoutes {
    private static final Duration PING_TIMEOUT = Duration.ofSeconds(2);
    private static final String LIVE = "{\"status\":\"live\"}";

    private final Optional<Pool> pool;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<Optional<String>> streamsFailure;
    private final Optional<Supplier<java.util.List<String>>> instances;
    private final PrometheusMeterRegistry registry;
    private final AtomicBoolean draining = new AtomicBoolean();

    /**
     * @param streamsFailure why this process's streams instance stopped processing for good, or could not start
     * @param instances the streams instances a gateway-only process hands its reads to: reported, not required
     *                  (capture and the flags that need no person work without them)
     */
    public HealthRoutes(final Optional<Pool> pool, final Supplier<Optional<StreamsApp>> streams,
                        final Supplier<Optional<String>> streamsFailure,
                        final Optional<Supplier<java.util.List<String>>> instances, final PrometheusMeterRegistry registry) {
        this.pool = pool;
        this.streamsFailure = streamsFailure;
        this.streams = streams;
        this.instances = instances;
        this.registry = registry;
    }

    /** From now on readiness answers 503 {@code draining}: the process is stopping. */
    public void drain() {
        draining.set(true);
    }

    /** The probes: liveness, readiness and the gateway's readiness. */
    public void mountProbes(final Router router, final boolean runsStreams) {
        // Liveness: the process serves HTTP. Constant and free, so an orchestrator's probe costs nothing (and it is
        // the HTTP ceiling the /decide benchmark compares against).
        router.get("/_health/live").handler(ctx -> ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, Responses.JSON)
                .end(LIVE));
        // Readiness: every part this process runs can serve (the same answer at both paths).
        router.get("/_health").handler(ctx -> health(ctx, runsStreams));
        router.get("/_health/ready").handler(ctx -> health(ctx, runsStreams));
        // The gateway's own readiness, for a load balancer in front of an `all` process: capture, flags and the
        // management API serve whatever Streams is doing (a rebalance, a restore), so they stay in the balancer.
        if (pool.isPresent()) {
            router.get("/_health/gateway").handler(ctx -> health(ctx, false));
        }
    }

    public void mountMetrics(final Router router) {
        router.get("/metrics").handler(this::metrics);
    }

    private void health(final RoutingContext ctx, final boolean runsStreams) {
        final Map<String, Object> checks = new LinkedHashMap<>();
        final Future<Boolean> postgres = pool
                .map(p -> Database.ping(p).timeout(PING_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                        .map(true).otherwise(false))
                .orElse(Future.succeededFuture(true));
        postgres.onComplete(result -> {
            // PostgreSQL holds the management data only: capture and /decide keep serving without it, so an outage
            // degrades this process (management routes answer 503) but does not take it out of a load balancer.
            final boolean postgresUp = result.result();
            boolean ready = true;
            if (pool.isPresent()) {
                checks.put("postgres", postgresUp ? "up" : "down");
            }
            if (runsStreams) {
                final Optional<String> failure = streamsFailure.get();
                final String state = streams.get().map(StreamsApp::stateName).orElse(failure.isPresent() ? "FAILED" : "NOT_STARTED");
                checks.put("streams", state);
                failure.ifPresent(reason -> checks.put("streams_failure", reason));
                ready = "RUNNING".equals(state);
            }
            instances.ifPresent(live -> checks.put("streams_instances", live.get()));
            final Map<String, Object> body = new LinkedHashMap<>();
            final boolean stopping = draining.get();
            ready &= !stopping;
            body.put("status", stopping ? "draining" : !ready ? "unavailable" : postgresUp ? "ok" : "degraded");
            body.put("checks", checks);
            Responses.json(ctx, ready ? 200 : 503, body);
        });
    }

    private void metrics(final RoutingContext ctx) {
        final String scrape = registry.scrape();
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8").end(scrape);
    }
}
