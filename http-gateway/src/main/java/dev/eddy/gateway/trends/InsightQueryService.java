package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.funnels.FunnelQuery;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.InternalSecret;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.TimelineEventSource;
import dev.eddy.trends.TrendQuery;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BinaryOperator;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Trend and funnel calculations over the event timelines of every streams instance. The query is parsed (and
 * refused with a 400) here; then each instance that runs partitions of the timelines is asked for exactly those
 * partitions: this instance reads its own on a worker thread, the others over {@value #ROUTE}, authenticated by the
 * deployment's internal secret. Each answers a mergeable partial (a person and its timeline live on one
 * partition, with the person's properties: see the topology); the partials merge into PostHog's result here.
 *
 * <p>Every partition is read exactly once or the attempt fails: the owners come from one assignment, and an instance
 * refuses a partition it no longer runs. A failed attempt (rebalance, restoring store, unreachable instance) is
 * retried until the query's deadline, then answered 503: never a silent partial. The same {@link QueryControl}
 * bounds the scans, so a query stops within its time limit or when cancelled.
 *
 * <p>Trends that only count events or distinct persons, unfiltered and not broken down, read each partition's
 * rollups instead of its events: hourly counts ({@link StoreNames#HOURLY_COUNTS}) and unique-person markers
 * ({@link StoreNames#UNIQUE_MARKERS}), which the topology keeps equal to the timelines. A 30-day daily count reads
 * 720 cells per event name; daily actives one marker per person and day active.
 */
public final class InsightQueryService {
    /** Where instances ask each other for partials: {@code POST /_internal/insights/{trend,funnel,earliest}}. */
    public static final String ROUTE = "/_internal/insights/:kind";
    private static final Logger LOG = LoggerFactory.getLogger(InsightQueryService.class);
    /** Scans check their {@link QueryControl} once per this many timeline entries. */
    private static final int CHECK_EVERY = 4096;
    private static final long RETRY_DELAY_MS = 200;
    private static final int RETRY_AFTER_SECONDS = 1;
    private static final int MAX_REQUEST_BYTES = 2 * 1024 * 1024;
    private static final String OCTETS = "application/octet-stream";

    private final Vertx vertx;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<String> self;
    private final InternalSecret secret;
    private final Duration timeout;
    private final HttpClient client;
    private final Timer forwarded;
    private final MeterRegistry registry;

    /**
     * @param streams the streams instance in this process, once started, if its role runs one
     * @param self    this instance's advertised {@code host:port}
     * @param timeout how long a calculation may run before it is abandoned ({@code insights.query-timeout})
     */
    public InsightQueryService(final Vertx vertx, final Supplier<Optional<StreamsApp>> streams, final Supplier<String> self,
                               final InternalSecret secret, final Duration timeout, final MeterRegistry registry) {
        this.vertx = vertx;
        this.streams = streams;
        this.self = self;
        this.secret = secret;
        this.timeout = timeout;
        this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true), new PoolOptions().setHttp1MaxSize(8));
        this.registry = registry;
        this.forwarded = Timer.builder("eddy.insights.partial").description("Trend and funnel partials asked of other instances")
                .publishPercentiles(0.5, 0.99).register(registry);
    }

    /** A fresh control for one calculation, with the configured time limit. */
    public QueryControl control() {
        return QueryControl.within(timeout);
    }

    /** A trend: PostHog's result items. */
    public Future<JsonNode> trend(final Project project, final JsonNode query) {
        return trend(project, query, control());
    }

    /** A trend, stopped when {@code control} is cancelled or runs out of time. */
    public Future<JsonNode> trend(final Project project, final JsonNode query, final QueryControl control) {
        return calculate(Kind.TREND, project, query, control);
    }

    /** A funnel: PostHog's steps, or its time-to-convert histogram. */
    public Future<JsonNode> funnel(final Project project, final JsonNode query) {
        return funnel(project, query, control());
    }

    /** A funnel, stopped when {@code control} is cancelled or runs out of time. */
    public Future<JsonNode> funnel(final Project project, final JsonNode query, final QueryControl control) {
        return calculate(Kind.FUNNEL, project, query, control);
    }

    /** What a calculation is over: the project, in the terms another instance needs to parse the query alike. */
    record Scope(long projectId, String timezone, int weekStartDay, JsonNode testAccountFilters) {
        ZoneId zone() {
            return ZoneId.of(timezone);
        }

        DayOfWeek weekStart() {
            return weekStartDay == 1 ? DayOfWeek.MONDAY : DayOfWeek.SUNDAY;
        }
    }

    /**
     * One calculation as sent to every instance: the query with the moment it is "now" for, and the project's
     * earliest event when {@code date_from: all} needs it, so every instance resolves the same date range.
     */
    record Request(Scope scope, JsonNode query, long nowMicros, Optional<Long> earliestMicros) {
        Instant now() {
            return TimelineEvent.instant(nowMicros);
        }

        Supplier<Optional<Instant>> earliest() {
            return () -> earliestMicros.map(TimelineEvent::instant);
        }
    }

    /** What differs between trends and funnels: parsing, scanning one partition, and the partial's life. */
    private interface Engine<Q, P> {
        Q parse(Request request, Supplier<Optional<Instant>> earliest);

        P partial(Q query);

        void scan(Q query, P partial, KeyValueIterator<Bytes, byte[]> events, PropertyLookup properties, Instant now, QueryControl control);

        /**
         * Answers the query for one partition from its hourly counts instead of its events, if they answer it
         * exactly; false to scan the events.
         */
        default boolean count(final Q query, final P partial, final ReadOnlyKeyValueStore<HourlyEventKey, Long> hourly,
                              final ReadOnlyKeyValueStore<Bytes, byte[]> markers, final long projectId) {
            return false;
        }

        P merge(P into, P other);

        byte[] encode(P partial);

        P decode(Q query, byte[] bytes);

        JsonNode result(Q query, P whole);
    }

    private enum Kind {
        TREND(new TrendEngine()),
        FUNNEL(new FunnelEngine());

        final Engine<?, ?> engine;

        Kind(final Engine<?, ?> engine) {
            this.engine = engine;
        }

        String path() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private static final class TrendEngine implements Engine<TrendQuery, TrendQuery.Partial> {
        @Override
        public TrendQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return TrendQuery.parse(r.query(), r.scope().zone(), r.scope().weekStart(), r.scope().testAccountFilters(), r.now(), earliest);
        }

        @Override
        public TrendQuery.Partial partial(final TrendQuery query) {
            return query.partial();
        }

        @Override
        public void scan(final TrendQuery query, final TrendQuery.Partial partial, final KeyValueIterator<Bytes, byte[]> events,
                         final PropertyLookup properties, final Instant now, final QueryControl control) {
            int seen = 0;
            while (events.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = events.next();
                if (++seen % CHECK_EVERY == 0) {
                    control.check();
                }
                if (query.relevant(TimelineEvent.timeOf(entry.value))) {
                    query.add(partial, TimelineKeys.person(entry.key).toString(), TimelineEvent.decode(entry.value), properties, now);
                }
            }
        }

        @Override
        public boolean count(final TrendQuery query, final TrendQuery.Partial partial, final ReadOnlyKeyValueStore<HourlyEventKey, Long> hourly,
                             final ReadOnlyKeyValueStore<Bytes, byte[]> markers, final long projectId) {
            return query.countInto(partial, hourly, markers, projectId);
        }

        @Override
        public TrendQuery.Partial merge(final TrendQuery.Partial into, final TrendQuery.Partial other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final TrendQuery.Partial partial) {
            return partial.encode();
        }

        @Override
        public TrendQuery.Partial decode(final TrendQuery query, final byte[] bytes) {
            return query.decode(bytes);
        }

        @Override
        public JsonNode result(final TrendQuery query, final TrendQuery.Partial whole) {
            return query.result(whole);
        }
    }

    /** Funnels read the timelines person by person (the store's key order), each in time order. */
    private static final class FunnelEngine implements Engine<FunnelQuery, FunnelQuery.Partial> {
        @Override
        public FunnelQuery parse(final Request r, final Supplier<Optional<Instant>> earliest) {
            return FunnelQuery.parse(r.query(), r.scope().zone(), r.scope().weekStart(), r.scope().testAccountFilters(), r.now(), earliest);
        }

        @Override
        public FunnelQuery.Partial partial(final FunnelQuery query) {
            return query.partial();
        }

        @Override
        public void scan(final FunnelQuery query, final FunnelQuery.Partial partial, final KeyValueIterator<Bytes, byte[]> events,
                         final PropertyLookup properties, final Instant now, final QueryControl control) {
            UUID current = null;
            final List<TimelineEvent> timeline = new ArrayList<>();
            int seen = 0;
            while (events.hasNext()) {
                final KeyValue<Bytes, byte[]> entry = events.next();
                if (++seen % CHECK_EVERY == 0) {
                    control.check();
                }
                final UUID person = TimelineKeys.person(entry.key);
                if (!person.equals(current)) {
                    evaluate(query, partial, current, timeline, properties, now);
                    current = person;
                    timeline.clear();
                }
                if (query.relevant(TimelineEvent.timeOf(entry.value))) {
                    timeline.add(TimelineEvent.decode(entry.value));
                }
            }
            evaluate(query, partial, current, timeline, properties, now);
        }

        private static void evaluate(final FunnelQuery query, final FunnelQuery.Partial partial, final UUID person,
                                     final List<TimelineEvent> timeline, final PropertyLookup properties, final Instant now) {
            if (person == null || timeline.isEmpty()) {
                return;
            }
            final String id = person.toString();
            query.add(partial, timeline, e -> new TimelineEventSource(id, e, properties), now);
        }

        @Override
        public FunnelQuery.Partial merge(final FunnelQuery.Partial into, final FunnelQuery.Partial other) {
            return into.merge(other);
        }

        @Override
        public byte[] encode(final FunnelQuery.Partial partial) {
            return partial.encode();
        }

        @Override
        public FunnelQuery.Partial decode(final FunnelQuery query, final byte[] bytes) {
            return query.decode(bytes);
        }

        @Override
        public JsonNode result(final FunnelQuery query, final FunnelQuery.Partial whole) {
            return query.result(whole);
        }
    }

    private Future<JsonNode> calculate(final Kind kind, final Project project, final JsonNode query, final QueryControl control) {
        final Timer.Sample sample = Timer.start();
        return this.<Object, Object>calculateUntimed(kind, project, query, control).onComplete(done -> sample.stop(Timer.builder("eddy.insights.query")
                .description("Trend and funnel calculations, from parsing to the merged answer").tag("kind", kind.path())
                .tag("outcome", done.succeeded() ? "ok" : done.cause() instanceof ApiError e ? Integer.toString(e.status()) : "error")
                .publishPercentiles(0.5, 0.99).register(registry)));
    }

    @SuppressWarnings("unchecked")
    private <Q, P> Future<JsonNode> calculateUntimed(final Kind kind, final Project project, final JsonNode query, final QueryControl control) {
        final Engine<Q, P> engine = (Engine<Q, P>) kind.engine;
        final Scope scope = new Scope(project.id(), project.timezone(), project.weekStartDay(), project.testAccountFilters());
        try {
            scope.zone();
        } catch (final java.time.DateTimeException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", "The project's timezone '" + project.timezone() + "' is not valid.", null));
        }
        final long now = TimelineEvent.micros(Instant.now());
        final AtomicBoolean needsEarliest = new AtomicBoolean();
        final Request draft = new Request(scope, query, now, Optional.empty());
        final Q parsed;
        try {
            parsed = parsed(() -> engine.parse(draft, () -> {
                needsEarliest.set(true);
                return Optional.empty();
            }));
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
        if (!needsEarliest.get()) {
            return gather(kind, draft, engine, parsed, control);
        }
        // date_from "all": the range starts at the project's earliest event, wherever it is.
        return scatter("earliest", draft, (app, partitions) -> earliest(app, scope.projectId(), partitions, control),
                InsightQueryService::decodeEarliest, InsightQueryService::min, control)
                .compose(earliest -> {
                    final Request request = new Request(scope, query, now, earliest);
                    return gather(kind, request, engine, parsed(() -> engine.parse(request, request.earliest())), control);
                });
    }

    private <Q, P> Future<JsonNode> gather(final Kind kind, final Request request, final Engine<Q, P> engine, final Q query,
                                           final QueryControl control) {
        return scatter(kind.path(), request, (app, partitions) -> read(engine, query, request, app, partitions, control),
                bytes -> engine.decode(query, bytes), engine::merge, control)
                .map(whole -> engine.result(query, whole));
    }

    /** How one instance reads its partitions into a partial (on a worker thread). */
    @FunctionalInterface
    private interface PartitionReader<P> {
        P read(StreamsApp app, List<Integer> partitions);
    }

    /**
     * Asks every instance for its partitions' partial and merges them; retries a failed attempt after a short pause
     * while the deadline allows.
     *
     * @param kind the {@value #ROUTE} kind other instances answer with the same reader
     */
    private <P> Future<P> scatter(final String kind, final Request request, final PartitionReader<P> local,
                                  final Function<byte[], P> decode, final BinaryOperator<P> merge, final QueryControl control) {
        return attempt(kind, request, local, decode, merge, control).recover(e -> {
            if (!(e instanceof ApiError error) || error.status() != 503) {
                return Future.failedFuture(e);
            }
            if (control.remaining().toMillis() <= RETRY_DELAY_MS) {
                LOG.info("a {} query gave up within its deadline: {}", kind, error.getMessage());
                return Future.failedFuture(e);
            }
            final Promise<P> retried = Promise.promise();
            vertx.setTimer(RETRY_DELAY_MS, t -> scatter(kind, request, local, decode, merge, control).onComplete(retried));
            return retried.future();
        });
    }

    private <P> Future<P> attempt(final String kind, final Request request, final PartitionReader<P> local,
                                  final Function<byte[], P> decode, final BinaryOperator<P> merge, final QueryControl control) {
        final StreamsApp app;
        final Map<HostInfo, List<Integer>> owners;
        try {
            control.check();
            app = streams.get().orElseThrow(() -> ApiError.unavailable("no_streams_instance",
                    "This process runs no streams instance to answer queries.", RETRY_AFTER_SECONDS));
            owners = app.partitionsByOwner(StoreNames.EVENT_TIMELINES).orElseThrow(InsightQueryService::rebalancing);
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
        final List<Future<P>> parts = new ArrayList<>();
        owners.forEach((host, partitions) -> parts.add((host.host() + ":" + host.port()).equals(self.get())
                ? vertx.executeBlocking(() -> readLocal(local, app, partitions), false)
                : remote(kind, host, request, partitions, control).map(decode)));
        return Future.all(parts).map(all -> {
            P whole = null;
            for (int i = 0; i < all.size(); i++) {
                final P part = all.resultAt(i);
                whole = whole == null ? part : merge.apply(whole, part);
            }
            return whole;
        });
    }

    private static <P> P readLocal(final PartitionReader<P> reader, final StreamsApp app, final List<Integer> partitions) {
        try {
            return reader.read(app, partitions);
        } catch (final InvalidStateStoreException e) {
            // A partition moved away (rebalance) or is restoring.
            throw rebalancing();
        }
    }

    /** One instance's partitions of the timelines (and persons), as one partial. */
    private <Q, P> P read(final Engine<Q, P> engine, final Q query, final Request request, final StreamsApp app,
                          final List<Integer> partitions, final QueryControl control) {
        final P partial = engine.partial(query);
        final long project = request.scope().projectId();
        final ReadOnlyKeyValueStore<String, GroupState> groups = app.<ReadOnlyKeyValueStore<String, GroupState>>localStore(
                StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.keyValueStore()).orElseThrow(InsightQueryService::rebalancing);
        for (final int p : partitions) {
            control.check();
            if (engine.count(query, partial, partition(app, StoreNames.HOURLY_COUNTS, p), partition(app, StoreNames.UNIQUE_MARKERS, p), project)) {
                continue;
            }
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = partition(app, StoreNames.EVENT_TIMELINES, p);
            final ReadOnlyKeyValueStore<String, PersonState> persons = partition(app, StoreNames.PERSONS, p);
            try (KeyValueIterator<Bytes, byte[]> events = timelines.range(TimelineKeys.projectStart(project), TimelineKeys.projectEnd(project))) {
                engine.scan(query, partial, events, TimelineScans.properties(project, persons, groups), request.now(), control);
            }
        }
        return partial;
    }

    private static Optional<Long> earliest(final StreamsApp app, final long projectId, final List<Integer> partitions,
                                           final QueryControl control) {
        Optional<Long> min = Optional.empty();
        for (final int p : partitions) {
            control.check();
            final Optional<Long> here = TimelineScans.earliest(partition(app, StoreNames.EVENT_TIMELINES, p), projectId)
                    .map(TimelineEvent::micros);
            min = min(min, here);
        }
        return min;
    }

    private static Optional<Long> min(final Optional<Long> a, final Optional<Long> b) {
        return a.isEmpty() ? b : b.isEmpty() ? a : Optional.of(Math.min(a.get(), b.get()));
    }

    private static byte[] encodeEarliest(final Optional<Long> earliest) {
        return earliest.map(micros -> java.nio.ByteBuffer.allocate(Long.BYTES).putLong(micros).array()).orElse(new byte[0]);
    }

    private static Optional<Long> decodeEarliest(final byte[] bytes) {
        return bytes.length == Long.BYTES ? Optional.of(java.nio.ByteBuffer.wrap(bytes).getLong()) : Optional.empty();
    }

    /** One partition of a store, if this instance runs it as active. */
    private static <K, V> ReadOnlyKeyValueStore<K, V> partition(final StreamsApp app, final String store, final int partition) {
        return app.<ReadOnlyKeyValueStore<K, V>>partitionStore(store, QueryableStoreTypes.keyValueStore(), partition)
                .orElseThrow(InsightQueryService::rebalancing);
    }

    /** Asks another instance for the partial of its partitions. */
    private Future<byte[]> remote(final String kind, final HostInfo host, final Request request, final List<Integer> partitions,
                                  final QueryControl control) {
        final ObjectNode body = requestJson(request, partitions, control.remaining());
        final Timer.Sample sample = Timer.start();
        return client.request(secret.sign(new RequestOptions().setMethod(HttpMethod.POST).setHost(host.host()).setPort(host.port())
                        .setURI("/_internal/insights/" + kind).setIdleTimeout(Math.max(1, control.remaining().toMillis()))
                        .putHeader("Content-Type", "application/json")))
                .compose(req -> req.send(Buffer.buffer(body.toString())))
                .compose(response -> response.body().map(answer -> {
                    if (response.statusCode() == 200) {
                        return answer.getBytes();
                    }
                    throw remoteError(host, response.statusCode(), answer);
                }))
                .recover(e -> {
                    if (e instanceof ApiError) {
                        return Future.failedFuture(e);
                    }
                    if (control.remaining().isNegative()) {
                        return Future.failedFuture(ApiError.timeout("The query did not finish within its time limit."));
                    }
                    return Future.failedFuture(ApiError.unavailable("instance_unreachable",
                            "The instance holding part of the data (" + host + ") did not answer; retry shortly.", RETRY_AFTER_SECONDS));
                })
                .onComplete(done -> sample.stop(forwarded));
    }

    private static ApiError remoteError(final HostInfo host, final int status, final Buffer answer) {
        return switch (status) {
            // Rebalancing, restoring, or no longer running those partitions: retried.
            case 503 -> rebalancing();
            case 504 -> ApiError.timeout("The query did not finish within its time limit.");
            case 409 -> ApiError.cancelled("The calculation was cancelled.");
            default -> {
                LOG.warn("instance {} answered a partial request with {}: {}", host, status, answer);
                yield ApiError.internal();
            }
        };
    }

    private static ObjectNode requestJson(final Request request, final List<Integer> partitions, final Duration remaining) {
        final ObjectNode body = Json.mapper().createObjectNode();
        final ObjectNode scope = body.putObject("scope");
        scope.put("project_id", request.scope().projectId());
        scope.put("timezone", request.scope().timezone());
        scope.put("week_start_day", request.scope().weekStartDay());
        scope.set("test_account_filters", request.scope().testAccountFilters());
        body.set("query", request.query());
        body.put("now_micros", request.nowMicros());
        request.earliestMicros().ifPresent(e -> body.put("earliest_micros", e));
        partitions.forEach(body.putArray("partitions")::add);
        body.put("timeout_ms", Math.max(1, remaining.toMillis()));
        return body;
    }

    /** Mounts {@value #ROUTE}, where this instance answers partials of its own partitions for the others. */
    public void mount(final Router router) {
        router.post(ROUTE).handler(BodyHandler.create(false).setBodyLimit(MAX_REQUEST_BYTES)).handler(this::serve);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void serve(final RoutingContext ctx) {
        secret.require(ctx);
        final String kind = ctx.pathParam("kind");
        final JsonNode body;
        try {
            body = Json.mapper().readTree(ctx.body().buffer().getBytes());
        } catch (final IOException | RuntimeException e) {
            throw ApiError.badRequest("invalid_input", "The body must be a partial request.", null);
        }
        final JsonNode scopeJson = body.path("scope");
        final Scope scope = new Scope(scopeJson.path("project_id").asLong(), scopeJson.path("timezone").asText("UTC"),
                scopeJson.path("week_start_day").asInt(0), scopeJson.get("test_account_filters"));
        final Request request = new Request(scope, body.path("query"), body.path("now_micros").asLong(),
                body.hasNonNull("earliest_micros") ? Optional.of(body.get("earliest_micros").asLong()) : Optional.empty());
        final List<Integer> partitions = new ArrayList<>();
        body.path("partitions").forEach(p -> partitions.add(p.asInt()));
        final QueryControl control = QueryControl.within(Duration.ofMillis(Math.max(1, body.path("timeout_ms").asLong(timeout.toMillis()))));
        final StreamsApp app = streams.get().orElseThrow(InsightQueryService::rebalancing);
        final Future<byte[]> answer;
        if ("earliest".equals(kind)) {
            answer = vertx.executeBlocking(() -> encodeEarliest(readLocal((a, ps) -> earliest(a, scope.projectId(), ps, control), app, partitions)), false);
        } else {
            final Kind k = switch (kind) {
                case "trend" -> Kind.TREND;
                case "funnel" -> Kind.FUNNEL;
                default -> throw ApiError.notFound("No such partial.");
            };
            final Engine engine = k.engine;
            final Object query = parsed(() -> engine.parse(request, request.earliest()));
            answer = vertx.executeBlocking(() -> engine.encode(readLocal((a, ps) -> read(engine, query, request, a, ps, control), app, partitions)), false);
        }
        answer.onSuccess(bytes -> ctx.response().putHeader("Content-Type", OCTETS).end(Buffer.buffer(bytes))).onFailure(ctx::fail);
    }

    private static ApiError rebalancing() {
        return ApiError.unavailable("store_not_ready", "The stores are being restored or rebalanced; retry shortly.", RETRY_AFTER_SECONDS);
    }

    /** A query as parsed, or the reason PostHog would refuse it as a 400. */
    private static <Q> Q parsed(final Supplier<Q> parse) {
        try {
            return parse.get();
        } catch (final IllegalArgumentException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage(), null);
        }
    }
}
