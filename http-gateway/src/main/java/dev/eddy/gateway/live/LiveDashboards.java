package dev.eddy.gateway.live;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.DashboardsConfig;
import dev.eddy.serde.Json;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes the tiles of watched dashboards to their watchers as new events change them. One poller per project that has
 * a watcher reads the project's change version ({@link ProjectChanges}) every {@code dashboards.live-debounce}; when it
 * moved since the last recalculation, every watched dashboard of the project is read again (tiles added, removed or
 * refiltered follow) and its tiles recalculated, and each watcher gets the tiles whose result differs from what it was
 * last sent. So a burst of events costs one recalculation per interval, and a recalculation still running when the
 * next tick comes is not started twice (that tick is skipped). A watcher gets the whole dashboard first (event
 * {@code dashboard}), then single tiles (event {@code tile}); a new watcher's snapshot is calculated as it joins, for it
 * alone. A recalculation that fails (a rebalance answering 503) pushes nothing and is retried at the next tick.
 *
 * <p>A dashboard read through the API ({@link #viewed}) is kept fresh the same way for {@code dashboards.keep-fresh-for}
 * after its last read, with no one to push to: its tiles are recalculated once per interval after events changed, as
 * PostHog refreshes recently viewed dashboards in the background. What each tile's calculation keeps between reads
 * makes such a recalculation cost the events that arrived since the last, so the cache the API reads by default
 * follows the events within about an interval, and a {@code refresh=force_blocking} finds the calculations nearly up
 * to date and adds only what arrived since. A dashboard whose recalculation is slow (a tile nothing is kept for, over
 * many events) waits nine times its last recalculation's time before the next, so keeping it fresh takes at most a
 * tenth of the time. At most {@code dashboards.keep-fresh-max} are kept; one more lets go the one read longest ago.
 *
 * <p>All of the pollers' state lives on one Vert.x context; watchers' connections are written on their own.
 */
public final class LiveDashboards {
    /** How often a comment keeps idle connections (and proxies) open, and watchers' access is checked again. */
    public static final Duration KEEP_ALIVE = Duration.ofSeconds(15);
    private static final Logger LOG = LoggerFactory.getLogger(LiveDashboards.class);
    /** A dashboard kept fresh waits this many times its last recalculation's time before the next (but its first). */
    private static final int KEPT_FRESH_PAUSE = 9;

    /** Where the pollers read versions and dashboards. */
    public interface Source {
        /** The project's change version now; any number, compared for equality only. */
        Future<Long> version(long projectId);

        /** The dashboard with its tiles freshly calculated; empty once it is gone (deleted). */
        Future<Optional<View>> view(long projectId, long dashboardId);
    }

    /** One watcher's connection. Called on the pollers' context; implementations write on the connection's own. */
    public interface Sink {
        /** Sends an event whose data is one line of JSON. */
        void event(String name, String data);

        /** Sends a comment line (ignored by clients; keeps the connection busy). */
        void comment(String text);

        /** Whether the connection is not taking what was written: a watcher that slow is dropped (it reconnects). */
        boolean congested();

        /** Ends the stream; the connection's close then cancels the subscription. */
        void close();
    }

    /** A watcher's subscription. */
    public interface Subscription {
        /** Stops pushing to the watcher; idempotent. */
        void cancel();
    }

    /**
     * A dashboard as pushed: its tiles in order.
     *
     * @param name the dashboard's name
     */
    public record View(long dashboardId, String name, List<Tile> tiles) {
        List<Long> tileIds() {
            return tiles.stream().map(Tile::tileId).toList();
        }

        String json() {
            final ObjectNode body = Json.mapper().createObjectNode();
            body.put("dashboard_id", dashboardId);
            body.put("name", name);
            tiles.forEach(t -> body.withArray("tiles").add(t.data()));
            return write(body);
        }
    }

    /** One tile as pushed: its data ({@code tile_id}, {@code insight_id}, {@code result}, {@code last_refresh}, ...). */
    public static final class Tile {
        private final long tileId;
        private final ObjectNode data;
        /** Made on first use, on the pollers' context. */
        private String comparable;

        private Tile(final long tileId, final ObjectNode data) {
            this.tileId = tileId;
            this.data = data;
        }

        public static Tile of(final long tileId, final ObjectNode data) {
            return new Tile(tileId, data);
        }

        public long tileId() {
            return tileId;
        }

        public ObjectNode data() {
            return data;
        }

        /**
         * The data without {@code last_refresh}, serialized: what must differ for the tile to be pushed. Made once, and
         * only when a watcher compares it (a dashboard kept fresh with no watcher pushes nothing).
         */
        String comparable() {
            if (comparable == null) {
                final ObjectNode withoutTime = data.deepCopy();
                withoutTime.remove("last_refresh");
                comparable = write(withoutTime);
            }
            return comparable;
        }
    }

    private final Vertx vertx;
    private final Context context;
    private final Source source;
    private final Duration debounce;
    private final Duration keepAlive;
    private final int maxSubscribers;
    private final Duration keepFreshFor;
    private final int keepFreshMax;
    /** Milliseconds of a monotonic clock: when dashboards kept fresh expire. */
    private final LongSupplier clock;
    private final AtomicInteger open = new AtomicInteger();
    /** Dashboards kept fresh now, across pollers. */
    private final AtomicInteger keptFresh = new AtomicInteger();
    private final Counter tileUpdates;
    private final Counter recalculations;
    private final Counter keptFreshRecalculations;
    private final Timer watchedTimer;
    private final Timer keptFreshTimer;
    /** By project; only touched on {@link #context}, as everything below. */
    private final Map<Long, Poller> pollers = new HashMap<>();
    private final Set<Subscriber> subscribers = new HashSet<>();
    private long keepAliveTimer = -1;

    public LiveDashboards(final Vertx vertx, final Source source, final DashboardsConfig config, final MeterRegistry registry) {
        this(vertx, source, config.liveDebounce(), KEEP_ALIVE, config.liveMaxSubscribers(), config.keepFreshFor(), config.keepFreshMax(),
                () -> System.nanoTime() / 1_000_000, registry);
    }

    LiveDashboards(final Vertx vertx, final Source source, final Duration debounce, final Duration keepAlive, final int maxSubscribers,
                   final Duration keepFreshFor, final int keepFreshMax, final LongSupplier clock, final MeterRegistry registry) {
        this.vertx = vertx;
        // Created outside any Vert.x thread (at start-up, in tests): a context of the service's own.
        this.context = vertx.getOrCreateContext();
        this.source = source;
        this.debounce = debounce;
        this.keepAlive = keepAlive;
        this.maxSubscribers = maxSubscribers;
        this.keepFreshFor = keepFreshFor;
        this.keepFreshMax = keepFreshMax;
        this.clock = clock;
        Gauge.builder("eddy.dashboards.kept.fresh", keptFresh, AtomicInteger::get)
                .description("Dashboards read lately that this instance keeps recalculating as events arrive").register(registry);
        Gauge.builder("eddy.live.subscribers", open, AtomicInteger::get).description("Open live dashboard streams on this instance")
                .register(registry);
        this.tileUpdates = Counter.builder("eddy.live.tile.updates").description("Tiles pushed to live dashboard watchers after a change")
                .register(registry);
        this.recalculations = Counter.builder("eddy.live.recalculations")
                .description("Recalculations of a project's watched dashboards after its events changed").register(registry);
        this.keptFreshRecalculations = Counter.builder("eddy.dashboards.kept.fresh.recalculations")
                .description("Recalculations of a project's dashboards kept fresh (none watched) after its events changed").register(registry);
        this.watchedTimer = recalculationTimer("watched", registry);
        this.keptFreshTimer = recalculationTimer("kept_fresh", registry);
    }

    private static Timer recalculationTimer(final String dashboards, final MeterRegistry registry) {
        return Timer.builder("eddy.live.recalculation").tag("dashboards", dashboards)
                .description("One dashboard's recalculation by its project's poller: every tile calculated, tiles side by side")
                .publishPercentiles(0.5, 0.99).register(registry);
    }

    /**
     * Starts pushing dashboard {@code dashboardId} of project {@code projectId} to {@code sink}; empty when this instance
     * already serves as many watchers as it may (answer 503).
     *
     * @param allowed checked every {@link #KEEP_ALIVE}: false ends the stream (a revoked key, a link no longer shared)
     */
    public Optional<Subscription> subscribe(final long projectId, final long dashboardId, final Sink sink,
                                            final Supplier<Future<Boolean>> allowed) {
        if (open.incrementAndGet() > maxSubscribers) {
            open.decrementAndGet();
            return Optional.empty();
        }
        final Subscriber subscriber = new Subscriber(projectId, dashboardId, sink, allowed);
        context.runOnContext(v -> add(subscriber));
        return Optional.of(subscriber::cancel);
    }

    /** Watchers on this instance now. */
    public int subscribers() {
        return open.get();
    }

    /**
     * Keeps dashboard {@code dashboardId} of project {@code projectId} fresh for {@code dashboards.keep-fresh-for} from
     * now (see the class): call when the API read it. Its next recalculation is at the next interval, which also takes
     * the events that arrived while this read calculated.
     */
    public void viewed(final long projectId, final long dashboardId) {
        if (!keepFreshFor.isZero()) {
            final long until = clock.getAsLong() + keepFreshFor.toMillis();
            context.runOnContext(v -> keepFresh(projectId, dashboardId, until));
        }
    }

    /** Dashboards kept fresh on this instance now. */
    int keptFresh() {
        return keptFresh.get();
    }

    private void keepFresh(final long projectId, final long dashboardId, final long until) {
        final Poller poller = pollers.computeIfAbsent(projectId, this::start);
        final KeptFresh kept = poller.keptFresh.get(dashboardId);
        if (kept != null) {
            kept.until = Math.max(kept.until, until);
        } else {
            poller.keptFresh.put(dashboardId, new KeptFresh(until));
        }
        if (kept == null && keptFresh.incrementAndGet() > keepFreshMax) {
            letGoOldest();
        }
    }

    /** Stops keeping fresh the dashboard read longest ago, of any project. */
    private void letGoOldest() {
        Poller oldestIn = null;
        Map.Entry<Long, KeptFresh> oldest = null;
        for (final Poller poller : pollers.values()) {
            for (final Map.Entry<Long, KeptFresh> kept : poller.keptFresh.entrySet()) {
                if (oldest == null || kept.getValue().until < oldest.getValue().until) {
                    oldest = kept;
                    oldestIn = poller;
                }
            }
        }
        if (oldestIn != null) {
            letGo(oldestIn, oldest.getKey());
            if (oldestIn.idle()) {
                stop(oldestIn);
            }
        }
    }

    private void letGo(final Poller poller, final long dashboardId) {
        if (poller.keptFresh.remove(dashboardId) != null) {
            keptFresh.decrementAndGet();
        }
    }

    /** A project's poller, ticking every interval from now on. */
    private Poller start(final long projectId) {
        final Poller poller = new Poller(projectId);
        poller.timer = vertx.setPeriodic(debounce.toMillis(), id -> tick(poller, true));
        return poller;
    }

    private void stop(final Poller poller) {
        vertx.cancelTimer(poller.timer);
        poller.stopped = true;
        pollers.remove(poller.projectId);
    }

    private void add(final Subscriber s) {
        if (s.cancelled.get()) {
            return;
        }
        subscribers.add(s);
        if (keepAliveTimer < 0) {
            keepAliveTimer = vertx.setPeriodic(keepAlive.toMillis(), id -> keepAlive());
        }
        final Poller existing = pollers.get(s.projectId);
        if (existing != null) {
            existing.add(s);
            tick(existing, false);
            return;
        }
        final Poller poller = start(s.projectId);
        pollers.put(s.projectId, poller);
        poller.add(s);
        tick(poller, true);
    }

    private void remove(final Subscriber s) {
        subscribers.remove(s);
        final Poller poller = pollers.get(s.projectId);
        if (poller != null && poller.remove(s) && poller.idle()) {
            stop(poller);
        }
        if (subscribers.isEmpty() && keepAliveTimer >= 0) {
            vertx.cancelTimer(keepAliveTimer);
            keepAliveTimer = -1;
        }
    }

    /**
     * One round of a project's poller. {@code whole}: a periodic tick, which recalculates every watched dashboard if
     * the version moved (and snapshots for new watchers regardless); otherwise only the snapshots new watchers wait for.
     */
    private Future<Void> tick(final Poller poller, final boolean whole) {
        if (poller.running || poller.stopped) {
            return Future.succeededFuture();
        }
        if (whole) {
            final long now = clock.getAsLong();
            List.copyOf(poller.keptFresh.entrySet()).stream().filter(kept -> kept.getValue().until <= now)
                    .forEach(kept -> letGo(poller, kept.getKey()));
            if (poller.idle()) {
                stop(poller);
                return Future.succeededFuture();
            }
        }
        poller.running = true;
        final Future<Long> version = whole ? here(() -> source.version(poller.projectId)) : Future.succeededFuture(null);
        return version.compose(v -> recalculate(poller, v, whole)).onComplete(done -> {
            poller.running = false;
            poller.failed(done.failed() ? done.cause() : null);
        }).otherwiseEmpty();
    }

    /** A periodic tick of every poller now, done when they are (a poller still busy skips it); for tests. */
    Future<Void> tickNow() {
        final Promise<Void> done = Promise.promise();
        context.runOnContext(v -> Future.all(List.copyOf(pollers.values()).stream().map(p -> tick(p, true)).toList())
                .<Void>mapEmpty().onComplete(done));
        return done.future();
    }

    private Future<Void> recalculate(final Poller poller, final Long version, final boolean whole) {
        final boolean changed = whole && !Objects.equals(version, poller.version);
        final List<Long> targets = new ArrayList<>();
        poller.byDashboard.forEach((dashboard, watchers) -> {
            if (changed || watchers.stream().anyMatch(Subscriber::waiting)) {
                targets.add(dashboard);
            }
        });
        if (changed && !targets.isEmpty()) {
            recalculations.increment();
        }
        // Dashboards kept fresh, not watched, whose last recalculation was at another version, when their pause is over.
        final long now = clock.getAsLong();
        final Set<Long> kept = new HashSet<>();
        if (whole) {
            poller.keptFresh.forEach((dashboard, k) -> {
                if (!poller.byDashboard.containsKey(dashboard) && !Objects.equals(version, k.version) && now >= k.notBefore) {
                    kept.add(dashboard);
                    targets.add(dashboard);
                }
            });
        }
        if (targets.isEmpty()) {
            return Future.succeededFuture();
        }
        // One dashboard after the other, as a dashboard's tiles are: a project's recalculation never floods the engine.
        Future<Boolean> all = Future.succeededFuture(true);
        for (final long dashboard : targets) {
            final boolean keptOnly = kept.contains(dashboard);
            all = all.compose(ok -> {
                final long started = clock.getAsLong();
                return timed(keptOnly ? keptFreshTimer : watchedTimer, () -> source.view(poller.projectId, dashboard)).map(view -> {
                    if (keptOnly) {
                        keptFreshRecalculations.increment();
                        final KeptFresh k = poller.keptFresh.get(dashboard);
                        if (k != null) {
                            // No pause after its first: that one builds what is kept for the next (a funnel's
                            // progress over every person), so its time says nothing of theirs. At 10M events it took
                            // seconds, and its pause left the dashboard a minute behind.
                            final long ended = clock.getAsLong();
                            k.notBefore = k.version == null ? ended : ended + KEPT_FRESH_PAUSE * (ended - started);
                            k.version = version;
                        }
                    }
                    deliver(poller, dashboard, view, changed);
                    return ok;
                }).otherwise(e -> {
                    poller.failed(e);
                    return false;
                });
            });
        }
        return all.compose(ok -> {
            if (!ok) {
                return Future.failedFuture(poller.lastFailure);
            }
            if (changed) {
                poller.version = version;
            }
            return Future.succeededFuture();
        });
    }

    private void deliver(final Poller poller, final long dashboard, final Optional<View> view, final boolean everyone) {
        if (view.isEmpty()) {
            letGo(poller, dashboard);
        }
        for (final Subscriber s : List.copyOf(poller.byDashboard.getOrDefault(dashboard, Set.of()))) {
            if (s.cancelled.get() || !everyone && !s.waiting()) {
                continue;
            }
            if (view.isEmpty()) {
                s.end("The dashboard was deleted.");
            } else {
                s.push(view.get());
            }
        }
    }

    private void keepAlive() {
        for (final Subscriber s : List.copyOf(subscribers)) {
            s.sink.comment("keep-alive");
            here(s.allowed).onComplete(allowed -> {
                if (allowed.succeeded() && !allowed.result()) {
                    s.end("This dashboard can no longer be watched with these credentials.");
                }
            });
        }
    }

    /** {@link #here} timed by {@code timer}, from the call to its completion (failed ones too). */
    private <T> Future<T> timed(final Timer timer, final Supplier<Future<T>> call) {
        final Timer.Sample sample = Timer.start();
        return here(call).onComplete(done -> sample.stop(timer));
    }

    /** {@code call}'s future, completing on the pollers' context (a synchronous throw is a failure). */
    private <T> Future<T> here(final Supplier<Future<T>> call) {
        final Promise<T> promise = Promise.promise();
        Future<T> future;
        try {
            future = call.get();
        } catch (final RuntimeException e) {
            future = Future.failedFuture(e);
        }
        future.onComplete(done -> context.runOnContext(v -> promise.handle(done)));
        return promise.future();
    }

    private static String write(final JsonNode node) {
        try {
            return Json.mapper().writeValueAsString(node);
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree writes as JSON", e);
        }
    }

    /** A project's watched and kept fresh dashboards and its poller's state. */
    private static final class Poller {
        final long projectId;
        final Map<Long, Set<Subscriber>> byDashboard = new LinkedHashMap<>();
        /** Dashboards kept fresh. */
        final Map<Long, KeptFresh> keptFresh = new LinkedHashMap<>();
        /** The version the watchers were last recalculated at; null before the first. */
        Long version;
        boolean running;
        boolean stopped;
        long timer;
        /** Why the last round failed; null after one that succeeded. */
        Throwable lastFailure;

        Poller(final long projectId) {
            this.projectId = projectId;
        }

        /**
         * Notes how a round ended ({@code cause} null: it succeeded). While the stores cannot answer (a rebalance) every
         * tick fails: the first failure and the recovery are logged, not each retry.
         */
        void failed(final Throwable cause) {
            if (cause != null && lastFailure == null) {
                LOG.info("live dashboards of project {} cannot be recalculated now ({}); retrying every tick", projectId, cause.toString());
            } else if (cause == null && lastFailure != null) {
                LOG.info("live dashboards of project {} are recalculated again", projectId);
            }
            lastFailure = cause;
        }

        void add(final Subscriber s) {
            byDashboard.computeIfAbsent(s.dashboardId, d -> new HashSet<>()).add(s);
        }

        /** Whether it has nothing to recalculate: no watcher, no dashboard kept fresh. */
        boolean idle() {
            return byDashboard.isEmpty() && keptFresh.isEmpty();
        }

        /** @return whether no watcher is left */
        boolean remove(final Subscriber s) {
            final Set<Subscriber> watchers = byDashboard.get(s.dashboardId);
            if (watchers != null && watchers.remove(s) && watchers.isEmpty()) {
                byDashboard.remove(s.dashboardId);
            }
            return byDashboard.isEmpty();
        }
    }

    /** A dashboard kept fresh: times in the {@link #clock}'s milliseconds. */
    private static final class KeptFresh {
        /** When it stops being kept fresh (its last read and {@code dashboards.keep-fresh-for}). */
        long until;
        /** The version it was last recalculated at; null before. */
        Long version;
        /** Its next recalculation not before this: its last one's time, nine times over, after it (none after the first). */
        long notBefore;

        KeptFresh(final long until) {
            this.until = until;
        }
    }

    /** One watcher: what it was sent, so that only differences follow. */
    private final class Subscriber {
        final long projectId;
        final long dashboardId;
        final Sink sink;
        final Supplier<Future<Boolean>> allowed;
        final AtomicBoolean cancelled = new AtomicBoolean();
        /** The tiles of the last snapshot sent, in order; null until the first. */
        List<Long> order;
        final Map<Long, String> sent = new HashMap<>();

        Subscriber(final long projectId, final long dashboardId, final Sink sink, final Supplier<Future<Boolean>> allowed) {
            this.projectId = projectId;
            this.dashboardId = dashboardId;
            this.sink = sink;
            this.allowed = allowed;
        }

        /** Whether it still waits for its first snapshot. */
        boolean waiting() {
            return order == null;
        }

        /** The whole dashboard when it is new or its tiles changed; otherwise the tiles whose result did. */
        void push(final View view) {
            final List<Long> ids = view.tileIds();
            if (!ids.equals(order)) {
                sink.event("dashboard", view.json());
                order = ids;
                sent.clear();
                view.tiles().forEach(t -> sent.put(t.tileId(), t.comparable()));
            } else {
                for (final Tile t : view.tiles()) {
                    if (!t.comparable().equals(sent.get(t.tileId()))) {
                        sink.event("tile", write(t.data()));
                        sent.put(t.tileId(), t.comparable());
                        tileUpdates.increment();
                    }
                }
            }
            if (sink.congested()) {
                LOG.info("a live dashboard watcher of project {} reads too slowly: its stream is closed", projectId);
                sink.close();
            }
        }

        /** Tells the watcher why, and ends its stream. */
        void end(final String detail) {
            sink.event("gone", write(Json.mapper().createObjectNode().put("dashboard_id", dashboardId).put("detail", detail)));
            sink.close();
        }

        void cancel() {
            if (cancelled.compareAndSet(false, true)) {
                open.decrementAndGet();
                context.runOnContext(v -> remove(this));
            }
        }
    }
}
