package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.InsightsConfig;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.trends.InsightQueryService;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import dev.eddy.trends.DateRange;
import dev.eddy.trends.Interval;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The computed fields of saved insights ({@code result}, {@code last_refresh}, {@code is_cached},
 * {@code query_status}, ...): PostHog's query runner flow ({@code QueryRunner.run} and
 * {@code handle_cache_and_async_logic}) over Eddy's trend and funnel engine, with the result cache
 * ({@link ResultCache}), PostHog's freshness rules ({@link Freshness}) and background calculations whose status
 * the insight shows until they finish, and which {@link #cancel} stops.
 *
 * <p>Per {@code refresh} mode ({@link RefreshMode}): {@code force_cache} answers the cached result or nothing;
 * {@code blocking} calculates unless a fresh result is cached; {@code async} answers the cached result (or nothing)
 * and calculates in the background unless it is fresh; {@code lazy_async} likewise with the lazy thresholds, and on
 * a miss; {@code async_except_on_cache_miss} is {@code async} except that a miss calculates while the request waits;
 * {@code force_blocking} and {@code force_async} always calculate, the latter answering only the status.
 *
 * <p>The Query API ({@code POST /query/}) asks through {@link #results} with no insight: its results are cached
 * apart, and its statuses are read ({@link #status}) and cancelled ({@link #cancelAndForget}) by id.
 *
 * <p>Background calculations' statuses and calculated results are also kept for every gateway ({@link SharedResults}):
 * a status is read and cancelled wherever a request lands, and a result one gateway calculated answers another's miss.
 *
 * <p>Where Eddy differs: PostHog shows a background calculation's status on the insight only while it runs (its
 * failure is read from {@code /query/:id}), while here a failed or cancelled calculation's status also stays on the
 * insight until a newer result exists or {@code insights.async.status-retention} passes.
 */
public final class InsightCalculations {
    private static final Logger LOG = LoggerFactory.getLogger(InsightCalculations.class);
    private static final String CONCURRENCY_LIMIT = "concurrency_limit_exceeded";
    private static final String CANCELLED = CalculationStatuses.CANCELLED;

    /** The trend, funnel, stickiness and lifecycle engine: {@link InsightQueryService}'s calculations. */
    public interface Engine {
        /** A fresh control, with the configured time limit, for one calculation. */
        QueryControl control();

        /** The calculation of {@code kind} over {@code filter}, stopped when {@code control} is cancelled or runs out. */
        Future<? extends JsonNode> calculate(InsightEngine.Kind kind, Project project, JsonNode filter, QueryControl control);

        static Engine of(final InsightQueryService service) {
            return new Engine() {
                @Override
                public QueryControl control() {
                    return service.control();
                }

                @Override
                public Future<? extends JsonNode> calculate(final InsightEngine.Kind kind, final Project project, final JsonNode filter,
                                                            final QueryControl control) {
                    return service.calculate(kind, project, filter, control);
                }
            };
        }
    }

    /**
     * How one insight is read.
     *
     * @param mode          the {@code refresh} mode
     * @param dashboardId   the dashboard it is shown on (its filters already applied), or null
     * @param clientQueryId the client's id for the calculation ({@code client_query_id}), or null for a new one
     * @param failAsStatus  whether a calculation that fails shows as the insight's failed status (a dashboard's tile,
     *                      an insight of a list) instead of failing the request (one insight, as PostHog)
     */
    public record Read(RefreshMode mode, Long dashboardId, String clientQueryId, boolean failAsStatus) {
        public static Read of(final RefreshMode mode) {
            return new Read(mode, null, null, false);
        }

        /** A read as a request's {@code refresh} and {@code client_query_id} query parameters ask (either absent). */
        public static Read of(final String refresh, final String clientQueryId) {
            return new Read(RefreshMode.parse(refresh), null, clientQueryId == null || clientQueryId.isBlank() ? null : clientQueryId.trim(),
                    false);
        }

        public Read onDashboard(final long dashboard) {
            return new Read(mode, dashboard, clientQueryId, failAsStatus);
        }

        public Read failingAsStatus() {
            return new Read(mode, dashboardId, clientQueryId, true);
        }
    }

    private final Engine engine;
    private final Freshness freshness;
    private final ResultCache cache;
    private final Clock clock;
    private final InsightsConfig.Async async;
    private final InsightsConfig config;
    private final SharedResults shared;
    private final CalculationStatuses statuses;

    /** Calculations kept in this gateway's memory only. */
    public InsightCalculations(final Engine engine, final InsightsConfig config, final Clock clock) {
        this(engine, config, clock, SharedResults.NONE);
    }

    /**
     * Calculations whose statuses and results are also kept in PostgreSQL for every gateway ({@code pool}'s database;
     * cancellations heard on a connection of {@code connect}'s); close the returned closeable with the process.
     */
    public static InsightCalculations shared(final Engine engine, final InsightsConfig config, final Clock clock, final Vertx vertx,
                                             final Pool pool, final PgConnectOptions connect, final Consumer<AutoCloseable> closeables) {
        final PostgresSharedResults shared = PostgresSharedResults.of(vertx, pool, connect);
        closeables.accept(shared);
        return new InsightCalculations(engine, config, clock, shared);
    }

    InsightCalculations(final Engine engine, final InsightsConfig config, final Clock clock, final SharedResults shared) {
        this.engine = engine;
        this.freshness = new Freshness(config.cache());
        this.cache = new ResultCache(config.cache(), clock);
        this.clock = clock;
        this.async = config.async();
        this.config = config;
        this.shared = shared;
        this.statuses = new CalculationStatuses(clock, config.async().statusRetention(), config.queryTimeout(), shared);
    }

    /**
     * The insight with its computed fields for {@code read}; a dashboard's filters must already be applied
     * ({@link DashboardOverride}). Fails only where a calculation the request waits for fails and
     * {@link Read#failAsStatus} is false: with the engine's error (400 for a query it refuses, as PostHog answers a
     * saved insight it cannot calculate, 503, 504, 409 when cancelled).
     */
    public Future<Insight> withResults(final Project project, final Insight insight, final Read read) {
        return results(project, insight.id(), InsightCalculation.of(insight.filters(), insight.query()), read).map(insight::withResults);
    }

    /**
     * The computed fields of one calculation for {@code read}: of a saved insight ({@code insightId}), or of a query
     * asked of the Query API ({@code insightId} null), whose results are kept apart from any insight's. Fails as
     * {@link #withResults} does.
     */
    public Future<Insight.Results> results(final Project project, final Long insightId, final InsightCalculation calculation,
                                           final Read read) {
        statuses.purge();
        final String timezone = project.timezone();
        if (calculation.kind() == InsightCalculation.Kind.NOTHING) {
            return Future.succeededFuture(empty(timezone, null));
        }
        if (calculation.kind() == InsightCalculation.Kind.UNSUPPORTED) {
            return Future.succeededFuture(empty(timezone, QueryStatus.failed(id(read), project.id(), insightId,
                    read.dashboardId(), clock.instant(), async.statusRetention(), calculation.problem()).toJson()));
        }
        final ResultCache.Key key = key(project.id(), insightId, calculation);
        final Job job = new Job(project, insightId, calculation, key, read);
        final RefreshMode mode = read.mode();
        if (mode == RefreshMode.FORCE_ASYNC) {
            return Future.succeededFuture(empty(timezone, enqueue(job)));
        }
        if (mode == RefreshMode.FORCE_BLOCKING) {
            return calculateNow(job);
        }
        return lookup(key, settings(project)).compose(cached -> fromCache(job, cached));
    }

    /** What {@code job}'s mode answers with what the caches hold for it (a calculation when it must wait for one). */
    private Future<Insight.Results> fromCache(final Job job, final Optional<ResultCache.Entry> cached) {
        final String timezone = job.project().timezone();
        final ResultCache.Key key = job.key();
        final RefreshMode mode = job.read().mode();
        if (cached.isPresent()) {
            final ResultCache.Entry entry = cached.get();
            if (!stale(job, entry, false)) {
                return Future.succeededFuture(cachedResults(job, entry, statuses.shown(key, entry)));
            }
            switch (mode) {
                case FORCE_CACHE -> {
                    return Future.succeededFuture(cachedResults(job, entry, statuses.shown(key, entry)));
                }
                case ASYNC, ASYNC_EXCEPT_ON_CACHE_MISS -> {
                    return Future.succeededFuture(cachedResults(job, entry, enqueue(job)));
                }
                case LAZY_ASYNC -> {
                    final JsonNode status = stale(job, entry, true) ? enqueue(job) : statuses.shown(key, entry);
                    return Future.succeededFuture(cachedResults(job, entry, status));
                }
                default -> {
                    // blocking: a stale result is recalculated while the request waits
                }
            }
        } else {
            switch (mode) {
                case FORCE_CACHE -> {
                    return Future.succeededFuture(empty(timezone, statuses.shown(key, null)));
                }
                case ASYNC, LAZY_ASYNC -> {
                    return Future.succeededFuture(empty(timezone, enqueue(job)));
                }
                default -> {
                    // blocking and async_except_on_cache_miss calculate a miss while the request waits
                }
            }
        }
        return calculateNow(job);
    }

    /**
     * This gateway's cached result, else one another gateway (or this one before a restart) calculated with the same
     * project settings; a shared store that does not answer is a miss.
     */
    private Future<Optional<ResultCache.Entry>> lookup(final ResultCache.Key key, final String settings) {
        final Optional<ResultCache.Entry> local = cache.get(key, Optional.of(settings));
        if (local.isPresent()) {
            return Future.succeededFuture(local);
        }
        return shared.result(key, clock.instant())
                .map(found -> found.filter(entry -> settings.equals(entry.settings())).map(entry -> {
                    cache.put(key, entry);
                    return entry;
                }))
                .recover(e -> {
                    LOG.debug("the shared results did not answer; calculating as on a miss", e);
                    return Future.succeededFuture(Optional.empty());
                });
    }

    /**
     * PostHog's {@code cache_key} of a calculation: a name of what its result depends on (the project, the insight,
     * the query as calculated), the same for the same question.
     */
    public static String cacheKey(final long projectId, final Long insightId, final InsightCalculation calculation) {
        return "cache_" + key(projectId, insightId, calculation).digest().substring(0, 32);
    }

    private static ResultCache.Key key(final long projectId, final Long insightId, final InsightCalculation calculation) {
        return new ResultCache.Key(projectId, insightId, calculation.kind() + " " + calculation.filter());
    }

    /** What the cache holds for a publicly shared insight (its viewer never starts a calculation). */
    public Insight cachedOnly(final long projectId, final Insight insight) {
        final InsightCalculation calculation = InsightCalculation.of(insight.filters(), insight.query());
        if (!calculation.kind().calculated()) {
            return insight.withResults(empty(insight.timezone(), null));
        }
        final ResultCache.Key key = key(projectId, insight.id(), calculation);
        return cache.get(key, Optional.empty()).map(entry -> insight.withResults(new Insight.Results(entry.result(),
                        IsoInstants.format(entry.lastRefresh()), null, null, false, null, null, null, true, insight.timezone(), null)))
                .orElseGet(() -> insight.withResults(empty(insight.timezone(), null)));
    }

    /**
     * Cancels the project's calculation {@code clientQueryId} if it is running, here or on another gateway: its status
     * completes with an error at once, its scan stops at its next check, and whatever it would have produced is dropped.
     *
     * @return whether a running calculation was cancelled
     */
    public Future<Boolean> cancel(final long projectId, final String clientQueryId) {
        return statuses.cancel(projectId, clientQueryId).map(found -> found == Cancellation.CANCELLED);
    }

    /** What {@link #cancelAndForget} found. */
    public enum Cancellation { CANCELLED, ALREADY_COMPLETE, UNKNOWN }

    /**
     * The status of the project's calculation {@code id} (PostHog's {@code QueryStatus}) while it is known, on any
     * gateway: running, or finished within {@code insights.async.status-retention}.
     */
    public Future<Optional<ObjectNode>> status(final long projectId, final String id) {
        return statuses.status(projectId, id);
    }

    /**
     * The Query API's cancel ({@code DELETE /query/:id/}): a running calculation is cancelled as {@link #cancel}
     * does, wherever it runs, and its status is forgotten, as PostHog deletes it.
     */
    public Future<Cancellation> cancelAndForget(final long projectId, final String id) {
        return statuses.cancelAndForget(projectId, id);
    }

    /** One calculation to do: which insight, what it asks for, and under which key its result is kept. */
    private record Job(Project project, Long insightId, InsightCalculation calculation, ResultCache.Key key, Read read) {
    }

    private Future<Insight.Results> calculateNow(final Job job) {
        final QueryControl control = engine.control();
        final QueryStatus status = new QueryStatus(id(job.read()), job.project().id(), job.insightId(), job.read().dashboardId(),
                clock.instant(), async.statusRetention(), control);
        statuses.waitedFor(status);
        return run(job, control)
                .map(entry -> {
                    if (!status.succeed(null, entry.lastRefresh())) {
                        throw ApiError.cancelled(CANCELLED);
                    }
                    return fresh(job, entry);
                })
                .recover(e -> {
                    final String message = message(e);
                    status.fail(message, clock.instant());
                    if (!job.read().failAsStatus()) {
                        return Future.failedFuture(e);
                    }
                    return Future.succeededFuture(empty(job.project().timezone(), status.toJson()));
                })
                .onComplete(done -> statuses.done(status));
    }

    /**
     * Starts a background calculation (or joins the one running for the same result) and answers its status now.
     * Beyond {@code insights.async.max-running} it answers PostHog's {@code concurrency_limit_exceeded} status.
     */
    private JsonNode enqueue(final Job job) {
        final Optional<QueryStatus> running = statuses.running(job.key());
        if (running.isPresent()) {
            return running.get().toJson();
        }
        final Instant now = clock.instant();
        if (statuses.runningHere() >= async.maxRunning()) {
            return QueryStatus.failed(id(job.read()), job.project().id(), job.insightId(), job.read().dashboardId(), now,
                    async.statusRetention(), CONCURRENCY_LIMIT).toJson();
        }
        final QueryControl control = engine.control();
        final QueryStatus status = new QueryStatus(id(job.read()), job.project().id(), job.insightId(), job.read().dashboardId(), now,
                async.statusRetention(), control);
        final ObjectNode answer = status.toJson();
        // Shared before it runs, so that a poll on another gateway finds it.
        statuses.started(status, job.key()).compose(v -> run(job, control)).onComplete(done -> {
            final boolean completedHere = done.succeeded()
                    ? status.succeed(response(job, done.result()), done.result().lastRefresh())
                    : status.fail(message(done.cause()), clock.instant());
            if (completedHere) {
                statuses.finished(status, job.key());
            }
        });
        return answer;
    }

    /** Calculates and, unless the calculation was cancelled meanwhile, keeps the result. */
    private Future<ResultCache.Entry> run(final Job job, final QueryControl control) {
        final InsightCalculation c = job.calculation();
        final Future<? extends JsonNode> result;
        try {
            result = c.kind().calculated()
                    ? engine.calculate(InsightEngine.Kind.valueOf(c.kind().name()), job.project(), c.filter(), control)
                    : Future.failedFuture(ApiError.badRequest("invalid_input", c.problem(), null));
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
        return result.map(json -> {
            if (control.isCancelled()) {
                throw ApiError.cancelled(CANCELLED);
            }
            final ResultCache.Entry entry = new ResultCache.Entry(json, clock.instant(), settings(job.project()));
            cache.put(job.key(), entry);
            shared.keep(job.key(), entry, entry.lastRefresh().plus(config.cache().expireAfter()))
                    .onFailure(e -> LOG.warn("could not share a calculated result; other gateways will calculate it themselves", e));
            return entry;
        });
    }

    private boolean stale(final Job job, final ResultCache.Entry entry, final boolean lazy) {
        return freshness.isStale(job.calculation().interval(), range(job).map(r -> r.to().toInstant()), entry.lastRefresh(),
                clock.instant(), lazy);
    }

    /** The query's date range now, when it resolves (its end and length feed the freshness rules). */
    private Optional<DateRange> range(final Job job) {
        final JsonNode filter = job.calculation().filter();
        try {
            final Interval interval = job.calculation().kind() == InsightCalculation.Kind.FUNNEL ? Interval.DAY
                    : Interval.parse(filter.path("interval").asText(null));
            return Optional.of(DateRange.resolve(text(filter.get("date_from")), text(filter.get("date_to")), interval,
                    ZoneId.of(job.project().timezone()), job.project().weekStartDay() == 1 ? DayOfWeek.MONDAY : DayOfWeek.SUNDAY,
                    clock.instant(), Optional::empty));
        } catch (final IllegalArgumentException | DateTimeException e) {
            return Optional.empty();
        }
    }

    private Insight.Results fresh(final Job job, final ResultCache.Entry entry) {
        return results(job, entry, false, null);
    }

    private Insight.Results cachedResults(final Job job, final ResultCache.Entry entry, final JsonNode status) {
        return results(job, entry, true, status);
    }

    private Insight.Results results(final Job job, final ResultCache.Entry entry, final boolean cached, final JsonNode status) {
        final String interval = job.calculation().interval();
        final Optional<Duration> span = range(job).map(r -> Duration.between(r.from(), r.to()));
        return new Insight.Results(entry.result(), IsoInstants.format(entry.lastRefresh()),
                IsoInstants.format(freshness.cacheTargetAge(interval, entry.lastRefresh())),
                IsoInstants.format(freshness.nextAllowedClientRefresh(interval, span, entry.lastRefresh())),
                false, null, null, null, cached, job.project().timezone(), status);
    }

    /** A finished background calculation's {@code results}: the query response PostHog's status carries. */
    private ObjectNode response(final Job job, final ResultCache.Entry entry) {
        final Insight.Results r = fresh(job, entry);
        final ObjectNode response = Json.mapper().createObjectNode();
        response.set("results", r.result());
        response.put("is_cached", false);
        response.put("last_refresh", r.lastRefresh());
        response.put("cache_target_age", r.cacheTargetAge());
        response.put("next_allowed_client_refresh", r.nextAllowedClientRefresh());
        response.put("timezone", r.timezone());
        response.put("hasMore", false);
        response.putNull("columns");
        response.putNull("types");
        response.putNull("hogql");
        return response;
    }

    private static Insight.Results empty(final String timezone, final JsonNode status) {
        return new Insight.Results(null, null, null, null, null, null, null, null, false, timezone, status);
    }

    private static String id(final Read read) {
        return read.clientQueryId() != null ? read.clientQueryId() : UUID.randomUUID().toString();
    }

    /** What a result depends on in the project's settings. */
    private static String settings(final Project project) {
        return project.timezone() + "|" + project.weekStartDay() + "|" + project.testAccountFilters();
    }

    private static String message(final Throwable e) {
        if (e instanceof ApiError api) {
            return api.detail();
        }
        LOG.warn("an insight calculation failed", e);
        return "The calculation failed unexpectedly.";
    }

    private static Optional<String> text(final JsonNode node) {
        return node == null || node.isNull() || node.asText().isEmpty() ? Optional.empty() : Optional.of(node.asText());
    }
}
