package dev.eddy.gateway.live;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.serde.Json;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pollers of live dashboards over a scripted source: snapshots first, then only changed tiles, recalculations only
 * when the version moved, one at a time, retried after a failure; dashboards read lately kept fresh the same way until
 * their time runs out. The periodic tick is driven by the test ({@code tickNow}); the configured interval is too long
 * to fire on its own, and the clock of the dashboards kept fresh is the test's.
 */
class LiveDashboardsTest {
    private static final long PROJECT = 7;
    private static final long DASHBOARD = 70;
    private static final Duration NEVER = Duration.ofHours(1);
    private static final Duration KEEP_FRESH = Duration.ofMinutes(10);
    private static final int KEEP_FRESH_MAX = 2;

    private Vertx vertx;
    private SimpleMeterRegistry registry;
    private FakeSource source;
    private LiveDashboards live;
    private final AtomicLong clock = new AtomicLong();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        registry = new SimpleMeterRegistry();
        source = new FakeSource();
        live = live(NEVER);
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aNewWatcherGetsTheWholeDashboardAtOnce() throws Exception {
        source.tiles(DASHBOARD, tile(1, 10), tile(2, 20));

        final FakeSink sink = subscribe(DASHBOARD);

        final JsonNode snapshot = sink.awaitEvent("dashboard");
        assertThat(snapshot.get("dashboard_id").asLong()).isEqualTo(DASHBOARD);
        assertThat(snapshot.get("name").asText()).isEqualTo("board 70");
        assertThat(snapshot.get("tiles")).hasSize(2);
        assertThat(snapshot.get("tiles").get(1).get("result").asInt()).isEqualTo(20);
        assertThat(live.subscribers()).isEqualTo(1);
        assertThat(registry.get("eddy.live.subscribers").gauge().value()).isEqualTo(1.0);
    }

    @Test
    void onlyTilesWhoseResultChangedArePushedOnceTheVersionMoves() throws Exception {
        final FakeSink sink = watching(tile(1, 10), tile(2, 20));

        // A new result for tile 2; tile 1 only recalculated later (another last_refresh): not news.
        source.tiles(DASHBOARD, tile(1, 10).put("last_refresh", "later"), tile(2, 21));
        source.version.incrementAndGet();
        await(live.tickNow());

        assertThat(sink.names()).containsExactly("dashboard", "tile");
        assertThat(sink.last().get("tile_id").asLong()).isEqualTo(2);
        assertThat(sink.last().get("result").asInt()).isEqualTo(21);
        assertThat(registry.get("eddy.live.tile.updates").counter().count()).isEqualTo(1.0);
    }

    @Test
    void nothingIsRecalculatedWhileTheVersionStands() throws Exception {
        final FakeSink sink = watching(tile(1, 10));
        final int calculated = source.views.get();

        source.tiles(DASHBOARD, tile(1, 11));
        await(live.tickNow());
        await(live.tickNow());

        assertThat(source.views.get()).isEqualTo(calculated);
        assertThat(sink.names()).containsExactly("dashboard");
    }

    @Test
    void manyChangesBetweenTwoTicksAreOneRecalculation() throws Exception {
        final FakeSink sink = watching(tile(1, 10));
        final double before = registry.get("eddy.live.recalculations").counter().count();

        for (int event = 0; event < 50; event++) {
            source.version.incrementAndGet();
        }
        source.tiles(DASHBOARD, tile(1, 60));
        await(live.tickNow());

        assertThat(registry.get("eddy.live.recalculations").counter().count() - before).isEqualTo(1.0);
        assertThat(sink.names()).containsExactly("dashboard", "tile");
        assertThat(sink.last().get("result").asInt()).isEqualTo(60);
    }

    @Test
    void aRecalculationStillRunningIsNotStartedTwice() throws Exception {
        final FakeSink sink = watching(tile(1, 10));
        final Promise<Optional<LiveDashboards.View>> slow = Promise.promise();
        source.pending.set(slow);
        source.version.incrementAndGet();

        final Future<Void> first = live.tickNow();
        waitUntil(() -> source.pending.get() == null, "the recalculation started");
        final int calculated = source.views.get();
        source.version.incrementAndGet();
        await(live.tickNow());
        await(live.tickNow());

        assertThat(source.views.get()).as("the ticks during the recalculation started none").isEqualTo(calculated);
        slow.complete(Optional.of(viewOf(DASHBOARD, tile(1, 12))));
        await(first);
        assertThat(sink.last().get("result").asInt()).isEqualTo(12);
        // The version moved again meanwhile: the next tick recalculates.
        source.tiles(DASHBOARD, tile(1, 13));
        await(live.tickNow());
        assertThat(sink.last().get("result").asInt()).isEqualTo(13);
    }

    @Test
    void aFailedRecalculationPushesNothingAndIsRetriedAtTheNextTick() throws Exception {
        final FakeSink sink = watching(tile(1, 10));

        source.failing.set(true);
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(sink.names()).containsExactly("dashboard");

        source.failing.set(false);
        source.tiles(DASHBOARD, tile(1, 11));
        await(live.tickNow());
        assertThat(sink.names()).as("the version did not move again, yet the failed round is redone").containsExactly("dashboard", "tile");
        assertThat(sink.last().get("result").asInt()).isEqualTo(11);
    }

    @Test
    void tilesAddedOrRemovedResendTheWholeDashboard() throws Exception {
        final FakeSink sink = watching(tile(1, 10));

        source.tiles(DASHBOARD, tile(1, 10), tile(3, 30));
        source.version.incrementAndGet();
        await(live.tickNow());

        assertThat(sink.names()).containsExactly("dashboard", "dashboard");
        assertThat(sink.last().get("tiles")).extracting(t -> t.get("tile_id").asLong()).containsExactly(1L, 3L);
    }

    @Test
    void aDeletedDashboardEndsItsStreams() throws Exception {
        final FakeSink sink = watching(tile(1, 10));

        source.gone.set(true);
        source.version.incrementAndGet();
        await(live.tickNow());

        assertThat(sink.names()).containsExactly("dashboard", "gone");
        assertThat(sink.closed.get()).isTrue();
    }

    @Test
    void aSecondWatcherGetsItsOwnSnapshotAndTheFirstNothingAgain() throws Exception {
        final FakeSink first = watching(tile(1, 10));

        final FakeSink second = subscribe(DASHBOARD);
        second.awaitEvent("dashboard");
        await(live.tickNow());

        assertThat(first.names()).containsExactly("dashboard");
        assertThat(second.names()).containsExactly("dashboard");
    }

    @Test
    void watchersBeyondTheLimitAreRefusedAndTheLastOneLeavingStopsThePoller() throws Exception {
        source.tiles(DASHBOARD, tile(1, 10));
        final List<LiveDashboards.Subscription> open = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            open.add(live.subscribe(PROJECT, DASHBOARD, new FakeSink(), () -> Future.succeededFuture(true)).orElseThrow());
        }

        assertThat(live.subscribe(PROJECT, DASHBOARD, new FakeSink(), () -> Future.succeededFuture(true))).isEmpty();
        open.remove(0).cancel();
        open.add(live.subscribe(PROJECT, DASHBOARD, new FakeSink(), () -> Future.succeededFuture(true)).orElseThrow());
        assertThat(live.subscribers()).isEqualTo(3);

        open.forEach(LiveDashboards.Subscription::cancel);
        open.forEach(LiveDashboards.Subscription::cancel);
        assertThat(live.subscribers()).isZero();
        await(live.tickNow());
        final int versions = source.versions.get();
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(source.versions.get()).as("no poller reads the version any more").isEqualTo(versions);
    }

    @Test
    void aWatcherNoLongerAllowedIsEndedAtTheKeepAlive() throws Exception {
        live = live(Duration.ofMillis(50));
        source.tiles(DASHBOARD, tile(1, 10));
        final AtomicBoolean allowed = new AtomicBoolean(true);
        final FakeSink sink = new FakeSink();
        live.subscribe(PROJECT, DASHBOARD, sink, () -> Future.succeededFuture(allowed.get())).orElseThrow();
        sink.awaitEvent("dashboard");
        waitUntil(() -> sink.comments.get() >= 2, "keep-alive comments");

        allowed.set(false);

        waitUntil(sink.closed::get, "the stream ended");
        assertThat(sink.names()).containsExactly("dashboard", "gone");
    }

    @Test
    void aDashboardReadIsRecalculatedAfterEachChangeUntilItsTimeRunsOut() throws Exception {
        source.tiles(DASHBOARD, tile(1, 10));
        live.viewed(PROJECT, DASHBOARD);
        await(live.tickNow());
        assertThat(source.calculated).as("the first tick: the version is not known yet").containsExactly(DASHBOARD);
        assertThat(registry.get("eddy.dashboards.kept.fresh").gauge().value()).isEqualTo(1.0);

        await(live.tickNow());
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(source.calculated).as("again once the version moved, not while it stood").containsExactly(DASHBOARD, DASHBOARD);

        clock.addAndGet(KEEP_FRESH.toMillis() - 1);
        live.viewed(PROJECT, DASHBOARD);
        clock.addAndGet(KEEP_FRESH.toMillis() - 1);
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(source.calculated).as("read again: kept fresh from that read on").hasSize(3);

        clock.addAndGet(1);
        source.version.incrementAndGet();
        await(live.tickNow());
        final int versions = source.versions.get();
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(source.calculated).as("its time ran out").hasSize(3);
        assertThat(source.versions.get()).as("no poller reads the version any more").isEqualTo(versions);
        assertThat(registry.get("eddy.dashboards.kept.fresh").gauge().value()).isZero();
    }

    @Test
    void beyondTheMaximumTheDashboardReadLongestAgoIsLetGo() throws Exception {
        for (final long dashboard : new long[] {DASHBOARD, DASHBOARD + 1, DASHBOARD + 2}) {
            source.tiles(dashboard, tile(1, 10));
        }
        live.viewed(PROJECT, DASHBOARD);
        clock.addAndGet(1);
        live.viewed(PROJECT, DASHBOARD + 1);
        clock.addAndGet(1);
        live.viewed(PROJECT, DASHBOARD);
        clock.addAndGet(1);
        live.viewed(PROJECT + 1, DASHBOARD + 2);
        await(live.tickNow());

        assertThat(source.calculated).as("the second read of the first made the second the oldest")
                .containsExactlyInAnyOrder(DASHBOARD, DASHBOARD + 2);
        assertThat(registry.get("eddy.dashboards.kept.fresh").gauge().value()).isEqualTo(KEEP_FRESH_MAX);
    }

    @Test
    void aDashboardWatchedAndReadIsCalculatedOncePerChangeAndADeletedOneIsLetGo() throws Exception {
        final FakeSink sink = watching(tile(1, 10));
        live.viewed(PROJECT, DASHBOARD);
        await(live.tickNow());
        source.calculated.clear();

        source.tiles(DASHBOARD, tile(1, 11));
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(source.calculated).containsExactly(DASHBOARD);
        assertThat(sink.names()).containsExactly("dashboard", "tile");

        source.gone.set(true);
        source.version.incrementAndGet();
        await(live.tickNow());
        assertThat(sink.names()).containsExactly("dashboard", "tile", "gone");
        assertThat(registry.get("eddy.dashboards.kept.fresh").gauge().value()).as("deleted: no longer kept fresh").isZero();
    }

    @Test
    void aSlowDashboardKeptFreshWaitsNineTimesItsRecalculationBeforeTheNext() throws Exception {
        source.tiles(DASHBOARD, tile(1, 10));
        // The first recalculation builds what is kept (slow, once): no pause after it.
        source.onView = () -> clock.addAndGet(5_000);
        live.viewed(PROJECT, DASHBOARD);
        await(live.tickNow());
        assertThat(source.calculated).hasSize(1);
        source.version.incrementAndGet();
        source.onView = () -> clock.addAndGet(100);
        await(live.tickNow());
        assertThat(source.calculated).as("right after the first, however long it took").hasSize(2);

        source.version.incrementAndGet();
        clock.addAndGet(899);
        await(live.tickNow());
        assertThat(source.calculated).as("100 ms to recalculate: not again within 900 ms").hasSize(2);

        clock.addAndGet(1);
        await(live.tickNow());
        assertThat(source.calculated).as("the version that moved meanwhile, once the pause is over").hasSize(3);
    }

    @Test
    void nothingIsKeptFreshWhenTheTimeIsZero() throws Exception {
        live = new LiveDashboards(vertx, source, NEVER, NEVER, 3, Duration.ZERO, KEEP_FRESH_MAX, clock::get, registry);
        source.tiles(DASHBOARD, tile(1, 10));

        live.viewed(PROJECT, DASHBOARD);
        await(live.tickNow());

        assertThat(source.calculated).isEmpty();
        assertThat(live.keptFresh()).isZero();
    }

    private LiveDashboards live(final Duration keepAlive) {
        return new LiveDashboards(vertx, source, NEVER, keepAlive, 3, KEEP_FRESH, KEEP_FRESH_MAX, clock::get, registry);
    }

    /** A watcher of {@link #DASHBOARD} showing {@code tiles}, once it has its snapshot. */
    private FakeSink watching(final ObjectNode... tiles) throws Exception {
        source.tiles(DASHBOARD, tiles);
        final FakeSink sink = subscribe(DASHBOARD);
        sink.awaitEvent("dashboard");
        return sink;
    }

    private FakeSink subscribe(final long dashboard) {
        final FakeSink sink = new FakeSink();
        live.subscribe(PROJECT, dashboard, sink, () -> Future.succeededFuture(true)).orElseThrow();
        return sink;
    }

    private static ObjectNode tile(final long id, final int result) {
        final ObjectNode data = Json.mapper().createObjectNode();
        data.put("tile_id", id);
        data.put("result", result);
        data.put("last_refresh", "now");
        return data;
    }

    private static LiveDashboards.View viewOf(final long dashboard, final ObjectNode... tiles) {
        final List<LiveDashboards.Tile> list = new ArrayList<>();
        for (final ObjectNode t : tiles) {
            list.add(LiveDashboards.Tile.of(t.get("tile_id").asLong(), t));
        }
        return new LiveDashboards.View(dashboard, "board " + dashboard, list);
    }

    private static <T> T await(final Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static void waitUntil(final BooleanSupplier condition, final String what) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }

    /** A source whose version and tiles the test sets. */
    private static final class FakeSource implements LiveDashboards.Source {
        final AtomicLong version = new AtomicLong();
        final Map<Long, LiveDashboards.View> dashboards = new ConcurrentHashMap<>();
        final AtomicInteger views = new AtomicInteger();
        /** The dashboards calculated, in order. */
        final List<Long> calculated = new CopyOnWriteArrayList<>();
        /** Run by every view: a recalculation's time on the test's clock. */
        volatile Runnable onView = () -> { };
        final AtomicInteger versions = new AtomicInteger();
        final AtomicBoolean failing = new AtomicBoolean();
        final AtomicBoolean gone = new AtomicBoolean();
        /** When set, the next view answers this promise's future (and clears it). */
        final AtomicReference<Promise<Optional<LiveDashboards.View>>> pending = new AtomicReference<>();

        void tiles(final long dashboard, final ObjectNode... tiles) {
            dashboards.put(dashboard, viewOf(dashboard, tiles));
        }

        @Override
        public Future<Long> version(final long projectId) {
            versions.incrementAndGet();
            return Future.succeededFuture(version.get());
        }

        @Override
        public Future<Optional<LiveDashboards.View>> view(final long projectId, final long dashboardId) {
            views.incrementAndGet();
            calculated.add(dashboardId);
            onView.run();
            final Promise<Optional<LiveDashboards.View>> slow = pending.getAndSet(null);
            if (slow != null) {
                return slow.future();
            }
            if (failing.get()) {
                return Future.failedFuture(Scatter.rebalancing());
            }
            return Future.succeededFuture(gone.get() ? Optional.empty() : Optional.of(dashboards.get(dashboardId)));
        }
    }

    /** Records what a watcher was sent. */
    private static final class FakeSink implements LiveDashboards.Sink {
        final List<String[]> events = new CopyOnWriteArrayList<>();
        final AtomicInteger comments = new AtomicInteger();
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public void event(final String name, final String data) {
            events.add(new String[] {name, data});
        }

        @Override
        public void comment(final String text) {
            comments.incrementAndGet();
        }

        @Override
        public boolean congested() {
            return false;
        }

        @Override
        public void close() {
            closed.set(true);
        }

        List<String> names() {
            return events.stream().map(e -> e[0]).toList();
        }

        JsonNode last() throws IOException {
            return Json.mapper().readTree(events.get(events.size() - 1)[1]);
        }

        JsonNode awaitEvent(final String name) throws Exception {
            waitUntil(() -> events.stream().anyMatch(e -> e[0].equals(name)), "event " + name);
            final String data = events.stream().filter(e -> e[0].equals(name)).findFirst().orElseThrow()[1];
            assertThat(data).as("one line of JSON").doesNotContain("\n");
            return Json.mapper().readTree(data);
        }
    }
}
