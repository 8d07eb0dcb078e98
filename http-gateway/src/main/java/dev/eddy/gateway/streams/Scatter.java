package dev.eddy.gateway.streams;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.query.InvalidQuery;
import dev.eddy.query.PartitionRead;
import dev.eddy.query.PartitionUnavailable;
import dev.eddy.serde.Json;
import dev.eddy.topology.Endpoint;
import dev.eddy.topology.StreamsApp;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads that need every partition of a store: each streams instance is asked for a partial over exactly the
 * partitions it runs as active in the current assignment (this one reads its own on worker threads, one per core, the others
 * answer {@value #ROUTE}, authenticated by the deployment's internal secret), and the partials are merged.
 *
 * <p>A gateway-only process runs no streams instance: it hands the whole gather to a streams instance from its
 * {@link Instances.Directory} ({@value #GATHER_ROUTE}), which scatters and merges it there. A global part (a store every
 * instance holds whole) is read on one instance.
 *
 * <p>Every partition is read exactly once or the attempt fails: the owners come from one assignment, and an instance
 * refuses a partition it no longer runs. A failed attempt (rebalance, restoring store, unreachable instance) is
 * retried every {@value #RETRY_DELAY_MS} ms until the {@link QueryControl}'s deadline, then answered 503: never a
 * partial sum.
 */
public final class Scatter {
    /** Where instances ask each other for partials. */
    public static final String ROUTE = "/_internal/scatter/:kind";
    /** Where a gateway-only process hands a whole gather to a streams instance. */
    public static final String GATHER_ROUTE = "/_internal/gather/:kind";
    private static final Logger LOG = LoggerFactory.getLogger(Scatter.class);
    private static final long RETRY_DELAY_MS = 200;
    private static final int RETRY_AFTER_SECONDS = 1;
    private static final int MAX_REQUEST_BYTES = 2 * 1024 * 1024;

    private final Vertx vertx;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<String> self;
    private final InternalSecret secret;
    private final Optional<Instances.Directory> directory;
    private final InstanceClient instances;
    private final MeterRegistry registry;
    private final Map<String, PartitionRead<?>> parts = new ConcurrentHashMap<>();
    /** Cores, asked once: the JVM reads the cgroup's files at each ask. */
    private final int cores = Runtime.getRuntime().availableProcessors();

    /**
     * @param streams   the streams instance in this process, once started, if its role runs one
     * @param self      this instance's advertised {@code host:port}
     * @param directory the streams instances to hand gathers to, for a process that runs none
     * @param instances how this instance calls the others' {@code /_internal} routes
     */
    public Scatter(final Vertx vertx, final Supplier<Optional<StreamsApp>> streams, final Supplier<String> self,
                   final InternalSecret secret, final Optional<Instances.Directory> directory, final InstanceClient instances,
                   final MeterRegistry registry) {
        this.vertx = vertx;
        this.streams = streams;
        this.self = self;
        this.secret = secret;
        this.directory = directory;
        this.registry = registry;
        this.instances = instances;
    }

    /** Makes a kind of partial known to this instance, both to ask for it and to answer it. */
    public void register(final String kind, final PartitionRead<?> part) {
        if (parts.putIfAbsent(kind, part) != null) {
            throw new IllegalStateException("partial kind " + kind + " is registered twice");
        }
    }

    /** The whole: every instance's partial of {@code kind} for {@code request}, merged. */
    @SuppressWarnings("unchecked")
    public <P> Future<P> gather(final String kind, final JsonNode request, final QueryControl control) {
        final PartitionRead<P> part = (PartitionRead<P>) parts.get(kind);
        if (part == null) {
            throw new IllegalArgumentException("unknown partial kind " + kind);
        }
        return attempt(kind, part, request, control).recover(e -> {
            if (!(e instanceof ApiError error) || error.status() != 503) {
                return Future.failedFuture(e);
            }
            if (control.remaining().toMillis() <= RETRY_DELAY_MS) {
                LOG.info("a {} read gave up within its deadline: {}", kind, error.getMessage());
                return Future.failedFuture(e);
            }
            final Promise<P> retried = Promise.promise();
            vertx.setTimer(RETRY_DELAY_MS, t -> this.<P>gather(kind, request, control).onComplete(retried));
            return retried.future();
        });
    }

    private <P> Future<P> attempt(final String kind, final PartitionRead<P> part, final JsonNode request, final QueryControl control) {
        final StreamsApp app;
        final Map<Endpoint, List<Integer>> owners;
        try {
            control.check();
            final Optional<StreamsApp> local = streams.get();
            if (local.isEmpty() && directory.isPresent()) {
                return handOver(directory.get(), kind, part, request, control);
            }
            app = local.orElseThrow(Scatter::noStreamsInstance);
            if (part.global()) {
                return vertx.executeBlocking(() -> readLocalNow(part, app, List.of(), request, control), false);
            }
            owners = app.routing().partitionsByOwner(part.store()).orElseThrow(Scatter::rebalancing);
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
        final List<Future<P>> partials = new ArrayList<>();
        owners.forEach((host, partitions) -> partials.add(host.address().equals(self.get())
                ? readLocal(part, app, partitions, request, control)
                : remote(kind, host, request, partitions, control).map(bytes -> decode(part, request, bytes))));
        return merged(part, partials);
    }

    private static <P> Future<P> merged(final PartitionRead<P> part, final List<Future<P>> partials) {
        return Future.all(partials).map(all -> {
            P whole = null;
            for (int i = 0; i < all.size(); i++) {
                final P partial = all.resultAt(i);
                // A thread that found every partition taken read none.
                if (partial != null) {
                    whole = whole == null ? partial : merge(part, whole, partial);
                }
            }
            return whole;
        });
    }

    /**
     * This instance's {@code partitions} read on worker threads, as many at once as there are cores, and merged: a
     * query uses the machine as DuckDB's threads do. Each thread takes the next partition not taken yet, so a thread
     * slowed by a large partition (or by the stream thread on its core) leaves the rest to the others instead of
     * holding a fixed share of them. The answer is ready when every partition is read, not when every thread has
     * returned: a read cheap enough for the first thread to take every partition does not wait for the others to be
     * scheduled only to find nothing left.
     */
    private <P> Future<P> readLocal(final PartitionRead<P> part, final StreamsApp app, final List<Integer> partitions, final JsonNode request,
                                    final QueryControl control) {
        final int threads = Math.min(partitions.size(), cores);
        if (threads <= 1) {
            return vertx.executeBlocking(() -> readLocalNow(part, app, partitions, request, control), false);
        }
        final SharedRead<P> shared = new SharedRead<>(part, partitions.size(), vertx.getOrCreateContext());
        for (int t = 0; t < threads; t++) {
            vertx.executeBlocking(() -> {
                shared.readWith(i -> readLocalNow(part, app, List.of(partitions.get(i)), request, control));
                return null;
            }, false).onFailure(shared::fail); // not run at all (the worker pool closing)
        }
        return shared.answer();
    }

    /** One read of many partitions shared by worker threads: who takes which, the threads' partials, the answer. */
    static final class SharedRead<P> {
        private final PartitionRead<P> part;
        private final int partitions;
        private final Context context;
        private final Promise<P> done = Promise.promise();
        private final AtomicInteger taken = new AtomicInteger();
        private final AtomicInteger read = new AtomicInteger();
        private final AtomicBoolean failed = new AtomicBoolean();
        private final Queue<P> partials = new ConcurrentLinkedQueue<>();

        SharedRead(final PartitionRead<P> part, final int partitions, final Context context) {
            this.part = part;
            this.partitions = partitions;
            this.context = context;
        }

        /** The merged partials of every partition, or the first failure (completed on the context given). */
        Future<P> answer() {
            return done.future();
        }

        /** Reads partitions not taken yet until none is left; the thread that reads the last one answers. */
        void readWith(final IntFunction<P> readOne) {
            try {
                P mine = null;
                int count = 0;
                for (int i = taken.getAndIncrement(); i < partitions && !failed.get(); i = taken.getAndIncrement()) {
                    final P one = readOne.apply(i);
                    mine = mine == null ? one : merge(part, mine, one);
                    count++;
                }
                if (count == 0) {
                    return;
                }
                // Handed over before counted: the thread whose count completes the read sees every partial.
                partials.add(mine);
                if (read.addAndGet(count) == partitions) {
                    P whole = null;
                    for (final P partial : partials) {
                        whole = whole == null ? partial : merge(part, whole, partial);
                    }
                    final P answer = whole;
                    context.runOnContext(v -> done.tryComplete(answer));
                }
            } catch (final RuntimeException | Error e) {
                fail(e);
            }
        }

        /** Fails the read with {@code e} unless it failed already; threads still reading take no more partitions. */
        void fail(final Throwable e) {
            if (failed.compareAndSet(false, true)) {
                context.runOnContext(v -> done.tryFail(e));
            }
        }
    }

    /** The whole gathered by a streams instance (this process runs none). */
    private <P> Future<P> handOver(final Instances.Directory instances, final String kind, final PartitionRead<P> part, final JsonNode request,
                                   final QueryControl control) {
        final Optional<String> address = instances.pick();
        if (address.isEmpty()) {
            return Future.failedFuture(noStreamsInstance());
        }
        final Endpoint host = Endpoint.of(address.get());
        return post(kind, host, "/_internal/gather/" + kind, InternalProtocol.PartialRequest.whole(request, control.remaining()), control)
                .onFailure(e -> {
                    if (e instanceof ApiError error && "instance_unreachable".equals(error.code())) {
                        instances.unreachable(address.get());
                    }
                })
                .map(bytes -> decode(part, request, bytes));
    }

    private static <P> P readLocalNow(final PartitionRead<P> part, final StreamsApp app, final List<Integer> partitions, final JsonNode request,
                                      final QueryControl control) {
        try {
            return PartitionRead.readOn(part, app, partitions, request, control::check);
        } catch (final PartitionUnavailable e) {
            // A partition moved away (rebalance) or is restoring.
            throw rebalancing();
        } catch (final InvalidQuery e) {
            throw refused(e);
        }
    }

    private static <P> P merge(final PartitionRead<P> part, final P into, final P other) {
        try {
            return part.merge(into, other);
        } catch (final InvalidQuery e) {
            throw refused(e);
        }
    }

    private static <P> P decode(final PartitionRead<P> part, final JsonNode request, final byte[] bytes) {
        try {
            return part.decode(request, bytes);
        } catch (final InvalidQuery e) {
            throw refused(e);
        } catch (final java.io.UncheckedIOException e) {
            throw ApiError.unavailable("instance_unreachable", "A streams instance answered unreadably.", RETRY_AFTER_SECONDS);
        }
    }

    /** A query the engine refused, as PostHog answers it. */
    public static ApiError refused(final InvalidQuery e) {
        return ApiError.badRequest("invalid_input", e.getMessage(), null);
    }

    /** Asks another instance for the partial of its partitions. */
    private Future<byte[]> remote(final String kind, final Endpoint host, final JsonNode request, final List<Integer> partitions,
                                  final QueryControl control) {
        return post(kind, host, "/_internal/scatter/" + kind, InternalProtocol.PartialRequest.of(request, partitions, control.remaining()),
                control);
    }

    /** One internal request carrying the query's remaining time; its answer's bytes, or the error to answer. */
    private Future<byte[]> post(final String kind, final Endpoint host, final String uri, final InternalProtocol.PartialRequest body,
                                final QueryControl control) {
        final Timer.Sample sample = Timer.start();
        return instances.post(host, uri, body.encode(), control.remaining()).map(answer -> {
                    if (answer.status() == 200) {
                        return answer.body().getBytes();
                    }
                    throw remoteError(host, answer.status(), answer.body());
                })
                .recover(e -> {
                    if (e instanceof ApiError) {
                        return Future.failedFuture(e);
                    }
                    if (control.remaining().isNegative()) {
                        return Future.failedFuture(ApiError.timeout("The query did not finish within its time limit."));
                    }
                    return Future.failedFuture(ApiError.unavailable("instance_unreachable",
                            "The instance holding part of the data (" + host.address() + ") did not answer; retry shortly.",
                            RETRY_AFTER_SECONDS));
                })
                .onComplete(done -> sample.stop(Timer.builder("eddy.scatter.partial").tag("kind", kind)
                        .description("Partials asked of other instances").publishPercentiles(0.5, 0.99).register(registry)));
    }

    /** What an answer other than 200 from another instance means here. */
    static ApiError remoteError(final Endpoint host, final int status, final Buffer answer) {
        return switch (status) {
            // Rebalancing, restoring, or no longer running those partitions: retried.
            case 503 -> rebalancing();
            case 504 -> ApiError.timeout("The query did not finish within its time limit.");
            case 409 -> ApiError.cancelled("The calculation was cancelled.");
            // The other instance refused the request itself (a query too large to hold): the same refusal here.
            case 400 -> ApiError.badRequest("invalid_input", detail(answer), null);
            // The other instance has no such partial, or speaks another version of the protocol: it runs another
            // release, as during a rolling upgrade. Retried like a rebalance, since the upgrade replaces it; past the
            // deadline the caller is told why.
            case 404, InternalProtocol.OTHER_VERSION -> ApiError.unavailable("instance_outdated", "The instance holding part of "
                    + "the data (" + host.address() + ") runs a version that cannot answer this query; retry once every instance is "
                    + "upgraded.", RETRY_AFTER_SECONDS);
            default -> {
                LOG.warn("instance {} answered a partial request with {}: {}", host, status, answer);
                yield ApiError.internal();
            }
        };
    }

    private static String detail(final Buffer answer) {
        try {
            return Json.mapper().readTree(answer.getBytes()).path("detail").asText("The request was refused.");
        } catch (final IOException e) {
            return "The request was refused.";
        }
    }

    /**
     * Mounts {@value #ROUTE}, where this instance answers partials of its own partitions for the others, and
     * {@value #GATHER_ROUTE}, where it gathers a whole for a gateway-only process.
     */
    public void mount(final Router router) {
        router.post(ROUTE).handler(BodyHandler.create(false).setBodyLimit(MAX_REQUEST_BYTES)).handler(ctx -> serve(ctx, false));
        router.post(GATHER_ROUTE).handler(BodyHandler.create(false).setBodyLimit(MAX_REQUEST_BYTES)).handler(ctx -> serve(ctx, true));
    }

    private void serve(final RoutingContext ctx, final boolean whole) {
        secret.require(ctx);
        InternalProtocol.require(ctx);
        final PartitionRead<?> part = parts.get(ctx.pathParam("kind"));
        if (part == null) {
            throw ApiError.notFound("No such partial.");
        }
        final InternalProtocol.PartialRequest asked = InternalProtocol.PartialRequest.decode(ctx.body().buffer().getBytes(), whole);
        final QueryControl control = QueryControl.within(asked.timeout());
        if (whole) {
            serveWhole(ctx, ctx.pathParam("kind"), part, asked.request(), control);
            return;
        }
        serve(ctx, part, streams.get().orElseThrow(Scatter::rebalancing), asked.request(), asked.partitions(), control);
    }

    private <P> void serveWhole(final RoutingContext ctx, final String kind, final PartitionRead<P> part, final JsonNode request,
                                final QueryControl control) {
        this.<P>gather(kind, request, control)
                .compose(whole -> vertx.executeBlocking(() -> part.encode(whole), false))
                .onSuccess(bytes -> ctx.response().putHeader("Content-Type", "application/octet-stream").end(Buffer.buffer(bytes)))
                .onFailure(ctx::fail);
    }

    private <P> void serve(final RoutingContext ctx, final PartitionRead<P> part, final StreamsApp app, final JsonNode request,
                           final List<Integer> partitions, final QueryControl control) {
        readLocal(part, app, partitions, request, control)
                .compose(whole -> vertx.executeBlocking(() -> part.encode(whole), false))
                .onSuccess(bytes -> ctx.response().putHeader("Content-Type", "application/octet-stream").end(Buffer.buffer(bytes)))
                .onFailure(ctx::fail);
    }

    private static ApiError noStreamsInstance() {
        return ApiError.unavailable("no_streams_instance", "No streams instance is answering queries yet; retry shortly.",
                RETRY_AFTER_SECONDS);
    }

    /** The answer while partitions move: retry. */
    public static ApiError rebalancing() {
        return ApiError.unavailable("store_not_ready", "The stores are being restored or rebalanced; retry shortly.", RETRY_AFTER_SECONDS);
    }
}
