package dev.eddy.gateway.streams;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Responses;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.query.PartitionUnavailable;
import dev.eddy.query.Stores;
import dev.eddy.topology.Endpoint;
import dev.eddy.topology.StreamsApp;
import dev.eddy.topology.StreamsRouting;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;

/**
 * Point reads of the partitioned stores, answered by the instance that owns the key. Kafka Streams' metadata names
 * the owner of the partition a key's routing key falls in: this instance reads that one partition itself, any other
 * is asked over its {@value #ROUTE} route, authenticated by the deployment's shared internal secret. An owner that
 * does not answer within the timeout, a rebalance, or a store still restoring is a 503 to retry, never a wrong
 * "not found".
 *
 * <p>Local reads run on the calling event loop: a point read of a bloom-filtered RocksDB store whose working set sits
 * in memory takes microseconds, less than handing the request to a worker thread and back (which, measured on this
 * machine, cost milliseconds of wake-up latency per request at low load). Scans stay on workers ({@link Scatter}).
 */
public final class KeyReads {
    /** The internal route: {@code GET /_internal/stores/<store>/get?routing_key=...&key=...}. */
    public static final String ROUTE = "/_internal/stores/:store/get";
    private static final int RETRY_AFTER_SECONDS = 1;

    /**
     * A key-value store readable by key.
     *
     * @param type   the class of its values, as its serde writes them
     * @param global whether every streams instance holds it whole
     */
    public record Readable<V>(String name, Class<V> type, boolean global) {
    }

    /** {@code project:distinct_id} to person uuid; routed by {@code token:distinct_id}, the ingest topics' key. */
    public static final Readable<String> DISTINCT_IDS = new Readable<>(StoreNames.DISTINCT_IDS, String.class, false);
    /** {@code project:person_uuid} to the person; routed by the same key. */
    public static final Readable<PersonState> PERSONS = new Readable<>(StoreNames.PERSONS, PersonState.class, false);
    /** {@code project:type_index:key} to the group; global. */
    public static final Readable<GroupState> GROUPS = new Readable<>(StoreNames.GROUPS_GLOBAL, GroupState.class, true);
    private static final Map<String, Readable<?>> READABLE = Map.of(DISTINCT_IDS.name(), DISTINCT_IDS, PERSONS.name(), PERSONS,
            GROUPS.name(), GROUPS);
    /** How a gateway-only process asks a streams instance to read a key wherever it lives. */
    private static final String ROUTED = "&route=1";
    private static final int HAND_OVER_TRIES = 3;
    private static final Duration HAND_OVER_PAUSE = Duration.ofMillis(100);

    private final Vertx vertx;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<String> self;
    private final InternalSecret secret;
    private final Optional<Instances.Directory> directory;
    private final Duration timeout;
    private final InstanceClient instances;
    private final Timer forwarded;
    private final io.micrometer.core.instrument.Counter standbyReads;

    /**
     * @param streams the streams instance in this process, once started, if its role runs one
     * @param self    this instance's advertised {@code host:port}
     * @param secret  the deployment's internal secret
     * @param directory the streams instances to ask, for a process that runs none
     * @param instances how this instance calls the others' {@code /_internal} routes
     */
    public KeyReads(final Vertx vertx, final Supplier<Optional<StreamsApp>> streams, final Supplier<String> self,
                    final InternalSecret secret, final Optional<Instances.Directory> directory, final Duration timeout,
                    final InstanceClient instances, final MeterRegistry registry) {
        this.vertx = vertx;
        this.streams = streams;
        this.self = self;
        this.secret = secret;
        this.directory = directory;
        this.timeout = timeout;
        this.instances = instances;
        this.standbyReads = io.micrometer.core.instrument.Counter.builder("eddy.iq.standby.reads")
                .description("Keyed reads answered by a standby copy while the active one could not answer").register(registry);
        this.forwarded = Timer.builder("eddy.iq.forward").description("Store reads forwarded to the instance that owns the key")
                .publishPercentiles(0.5, 0.99).register(registry);
    }

    /**
     * The value of {@code key} in {@code store}, read where it lives.
     *
     * @param routingKey the key the store's input topics are partitioned by (may differ from {@code key})
     */
    public <V> Future<Optional<V>> get(final Readable<V> store, final String routingKey, final String key) {
        if (streams.get().isEmpty() && directory.isPresent()) {
            return handOver(directory.get(), store, routingKey, key, HAND_OVER_TRIES);
        }
        final StreamsApp app;
        final StreamsRouting.Owner owner;
        try {
            app = running();
            owner = owner(app, store, routingKey);
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
        final String address = owner.host().address();
        final Future<Optional<V>> active;
        if (address.equals(self.get())) {
            Future<Optional<V>> local;
            try {
                local = Future.succeededFuture(readActive(app, store, OptionalInt.of(owner.partition()), key));
            } catch (final ApiError e) {
                local = Future.failedFuture(e);
            }
            active = local;
        } else {
            active = forward(owner.host(), store, routingKey, key, "");
        }
        // While the active copy cannot answer (its partition moving, its instance gone), a standby copy can.
        return active.recover(e -> e instanceof ApiError error && error.status() == 503 ? standby(app, store, routingKey, key, error)
                : Future.failedFuture(e));
    }

    /** The key from a standby copy of its partition (here, or on another instance), or the active copy's error. */
    private <V> Future<Optional<V>> standby(final StreamsApp app, final Readable<V> store, final String routingKey, final String key,
                                           final ApiError activeError) {
        final Optional<StreamsRouting.Standbys> standbys;
        try {
            standbys = app.routing().standbysOf(store.name(), routingKey);
        } catch (final RuntimeException e) {
            return Future.failedFuture(activeError);
        }
        if (standbys.isEmpty()) {
            return Future.failedFuture(activeError);
        }
        for (final Endpoint host : standbys.get().hosts()) {
            if (host.address().equals(self.get())) {
                try {
                    return Future.succeededFuture(readStale(app, store, standbys.get().partition(), key));
                } catch (final ApiError e) {
                    return Future.failedFuture(activeError);
                }
            }
        }
        final Endpoint other = standbys.get().hosts().iterator().next();
        standbyReads.increment();
        return forward(other, store, routingKey, key, "&stale_partition=" + standbys.get().partition())
                .recover(e -> Future.failedFuture(activeError));
    }

    /** The key from this instance's copy of the partition, active or standby. */
    private static <V> Optional<V> readStale(final StreamsApp app, final Readable<V> store, final int partition, final String key) {
        try {
            return Stores.getStale(app, store.name(), partition, key);
        } catch (final PartitionUnavailable e) {
            throw notReady();
        }
    }

    /**
     * The value of {@code key} in a global store, which every streams instance holds whole: read here, on the
     * calling thread, or on a streams instance when this process runs none.
     */
    public <V> Future<Optional<V>> getGlobal(final Readable<V> store, final String key) {
        if (streams.get().isEmpty() && directory.isPresent()) {
            return handOver(directory.get(), store, key, key, HAND_OVER_TRIES);
        }
        try {
            return Future.succeededFuture(readActive(running(), store, OptionalInt.empty(), key));
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
    }

    /**
     * The key read by a streams instance from the directory, wherever it lives (one more hop to its owner), tried
     * {@code tries} times in all: an instance that does not answer is dropped from the directory and the next one
     * asked at once; one that cannot read the key now (its partition moving) is followed by the next one after
     * {@link #HAND_OVER_PAUSE}, which may already see the partition's new owner.
     */
    private <V> Future<Optional<V>> handOver(final Instances.Directory instances, final Readable<V> store, final String routingKey,
                                            final String key, final int tries) {
        final Optional<String> address = instances.pick();
        if (address.isEmpty()) {
            return Future.failedFuture(ApiError.unavailable("no_streams_instance",
                    "No streams instance is answering queries yet; retry shortly.", RETRY_AFTER_SECONDS));
        }
        return forward(Endpoint.of(address.get()), store, routingKey, key, ROUTED).recover(e -> {
            if (!(e instanceof ApiError error) || error.status() != 503 || tries <= 1) {
                return Future.failedFuture(e);
            }
            if ("owner_unreachable".equals(error.code())) {
                instances.unreachable(address.get());
                return handOver(instances, store, routingKey, key, tries - 1);
            }
            final Promise<Optional<V>> again = Promise.promise();
            vertx.setTimer(HAND_OVER_PAUSE.toMillis(), t -> handOver(instances, store, routingKey, key, tries - 1).onComplete(again));
            return again.future();
        });
    }

    private StreamsApp running() {
        final StreamsApp app = streams.get().orElseThrow(() -> ApiError.unavailable("no_streams_instance",
                "This process runs no streams instance to answer queries.", RETRY_AFTER_SECONDS));
        if (!app.isQueryable()) {
            throw notReady();
        }
        return app;
    }

    private static StreamsRouting.Owner owner(final StreamsApp app, final Readable<?> store, final String routingKey) {
        return app.routing().ownerOf(store.name(), routingKey).orElseThrow(KeyReads::notReady);
    }

    /** The key from this instance's active copy of the partition ({@code partition} empty: of a global store). */
    private static <V> Optional<V> readActive(final StreamsApp app, final Readable<V> store, final OptionalInt partition, final String key) {
        try {
            return Stores.get(app, store.name(), partition, key);
        } catch (final PartitionUnavailable e) {
            throw notReady();
        }
    }

    /**
     * @param how empty to read the owner's active copy, {@code &stale_partition=p} to read a standby copy of
     *            partition {@code p}, or {@link #ROUTED} to have the instance read it wherever it lives
     */
    private <V> Future<Optional<V>> forward(final Endpoint host, final Readable<V> store, final String routingKey,
                                            final String key, final String how) {
        final Timer.Sample sample = Timer.start();
        final String uri = "/_internal/stores/" + store.name() + "/get?routing_key=" + encode(routingKey) + "&key=" + encode(key) + how;
        return instances.get(host, uri, timeout).map(answer -> decode(answer, store))
                .recover(e -> Future.failedFuture(e instanceof ApiError ? e : ApiError.unavailable("owner_unreachable",
                        "The instance holding this data (" + host + ") did not answer; retry shortly.",
                        RETRY_AFTER_SECONDS)))
                .onComplete(done -> sample.stop(forwarded));
    }

    private static <V> Optional<V> decode(final InstanceClient.Answer answer, final Readable<V> store) {
        try {
            return switch (answer.status()) {
                case 200 -> Optional.of(Json.mapper().readValue(answer.body().getBytes(), store.type()));
                case 404 -> Optional.empty();
                // The owner is itself rebalancing or restoring, or is no longer the owner: retry later.
                default -> throw notReady();
            };
        } catch (final IOException e) {
            throw ApiError.unavailable("owner_unreachable", "The instance holding this data answered unreadably.", RETRY_AFTER_SECONDS);
        }
    }

    /** Mounts {@value #ROUTE}: reads of this instance's own partitions for the other instances. */
    public void mount(final Router router) {
        router.get(ROUTE).handler(this::serve);
    }

    private void serve(final RoutingContext ctx) {
        secret.require(ctx);
        InternalProtocol.require(ctx);
        final Readable<?> store = READABLE.get(ctx.pathParam("store"));
        if (store == null) {
            throw ApiError.notFound("No such store.");
        }
        final String routingKey = required(ctx, "routing_key");
        final String key = required(ctx, "key");
        if (ctx.queryParams().contains("route")) {
            // Asked by a gateway-only process: read it wherever it lives.
            (store.global() ? getGlobal(store, key) : get(store, routingKey, key)).onSuccess(value -> {
                if (value.isEmpty()) {
                    ctx.fail(ApiError.notFound("No such key."));
                } else {
                    Responses.json(ctx, 200, value.get());
                }
            }).onFailure(ctx::fail);
            return;
        }
        if (store.global()) {
            throw ApiError.badRequest("invalid_input", "A global store is read with route.", "route");
        }
        final StreamsApp app = running();
        final String stalePartition = ctx.queryParams().get("stale_partition");
        if (stalePartition != null) {
            // Asked as a standby: this instance's copy of the partition, active or standby.
            final int partition;
            try {
                partition = Integer.parseInt(stalePartition);
            } catch (final NumberFormatException e) {
                throw ApiError.badRequest("invalid_input", "stale_partition must be a partition number.", "stale_partition");
            }
            final Optional<?> value = readStale(app, store, partition, key);
            if (value.isEmpty()) {
                throw ApiError.notFound("No such key.");
            }
            Responses.json(ctx, 200, value.get());
            return;
        }
        final StreamsRouting.Owner owner = owner(app, store, routingKey);
        // Never forwarded a second time: two instances with different views of a rebalance could bounce a read.
        if (!owner.host().address().equals(self.get())) {
            throw ApiError.unavailable("not_owner", "This instance no longer holds that key; retry.", RETRY_AFTER_SECONDS);
        }
        final Optional<?> value = readActive(app, store, OptionalInt.of(owner.partition()), key);
        if (value.isEmpty()) {
            throw ApiError.notFound("No such key.");
        }
        Responses.json(ctx, 200, value.get());
    }

    private static String required(final RoutingContext ctx, final String name) {
        final String value = ctx.queryParams().get(name);
        if (value == null || value.isEmpty()) {
            throw ApiError.badRequest("required", "The query parameter " + name + " is required.", name);
        }
        return value;
    }

    private static String encode(final String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static ApiError notReady() {
        return Scatter.rebalancing();
    }
}
