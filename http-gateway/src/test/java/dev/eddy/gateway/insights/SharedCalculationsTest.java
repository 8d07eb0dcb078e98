package dev.eddy.gateway.insights;

import static dev.eddy.gateway.insights.QueryTranslationTest.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.PostgresConfig;
import dev.eddy.gateway.db.Database;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two gateways on one PostgreSQL, as behind a load balancer: a background calculation started on one is polled,
 * cancelled and read from the other, and its result answers the other's cache lookup; a calculation whose gateway
 * stopped reads as interrupted once it can no longer be running.
 */
class SharedCalculationsTest {
    private static final JsonNode RESULT = json("[{\"count\":3}]");
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static Vertx vertx;
    private static Pool pool;
    private static PostgresConfig pg;
    private static final List<AutoCloseable> CLOSEABLES = new ArrayList<>();

    private final Project project = InsightCalculationsTest.project("UTC");
    private final InsightCalculationsTest.MutableClock clockA = new InsightCalculationsTest.MutableClock();
    private final InsightCalculationsTest.MutableClock clockB = new InsightCalculationsTest.MutableClock();
    private final InsightCalculationsTest.FakeEngine engineA = new InsightCalculationsTest.FakeEngine();
    private final InsightCalculationsTest.FakeEngine engineB = new InsightCalculationsTest.FakeEngine();
    private final InsightCalculations a = gateway(engineA, clockA);
    private final InsightCalculations b = gateway(engineB, clockB);

    @BeforeAll
    static void database() throws Exception {
        final TestPostgres postgres = TestPostgres.shared();
        pg = ConfigLoader.load(Map.of("EDDY_PG_URL", postgres.newMigratedDatabase("shared_results"), "EDDY_PG_USER", postgres.user(),
                "EDDY_PG_PASSWORD", postgres.password()), Optional.empty()).pg();
        vertx = Vertx.vertx();
        pool = Database.pool(vertx, pg);
        await(pool.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-0000-0000-000000000001', 'o'); "
                + "INSERT INTO projects (id, uuid, organization_id, name, api_token) VALUES (7, '00000000-0000-0000-0000-000000000007', "
                + "'00000000-0000-0000-0000-000000000001', 'p', 'phc_shared')").execute());
    }

    @AfterAll
    static void close() throws Exception {
        for (final AutoCloseable closeable : CLOSEABLES) {
            closeable.close();
        }
        await(pool.close());
        await(vertx.close());
    }

    @Test
    void aBackgroundCalculationIsPolledAndReadOnAnotherGateway() throws Exception {
        final InsightCalculation trend = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"$pageview\"}],\"dateRange\":{\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-02\"}}"));
        final Insight.Results started = await(a.results(project, null, trend, read(RefreshMode.FORCE_ASYNC, "shared-1")));
        assertThat(started.queryStatus().get("complete").asBoolean()).isFalse();
        waitFor(() -> await(b.status(7, "shared-1")).isPresent(), "the start is shared");
        assertThat(await(b.status(7, "shared-1")).orElseThrow().get("complete").asBoolean()).isFalse();
        assertThat(await(b.status(8, "shared-1"))).as("another project's").isEmpty();

        engineA.last().promise().complete(RESULT);
        waitFor(() -> await(b.status(7, "shared-1")).orElseThrow().get("complete").asBoolean(), "the end is shared");
        final ObjectNode done = await(b.status(7, "shared-1")).orElseThrow();
        assertThat(done.get("error").asBoolean()).isFalse();
        assertThat(done.get("results").get("results")).isEqualTo(RESULT);

        final Insight.Results cached = await(b.results(project, null, trend, read(RefreshMode.FORCE_CACHE, null)));
        assertThat(cached.result()).as("calculated by the other gateway").isEqualTo(RESULT);
        assertThat(cached.isCached()).isTrue();
        assertThat(engineB.calls).isEmpty();
    }

    @Test
    void aCancelOnAnotherGatewayStopsTheCalculationAndItsResultIsDropped() throws Exception {
        final InsightCalculation trend = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"cancelled\"}]}"));
        await(a.results(project, null, trend, read(RefreshMode.FORCE_ASYNC, "shared-2")));
        waitFor(() -> await(b.status(7, "shared-2")).isPresent(), "the start is shared");

        assertThat(await(b.cancelAndForget(7, "shared-2"))).isEqualTo(InsightCalculations.Cancellation.CANCELLED);
        waitFor(() -> engineA.last().control().isCancelled(), "the running gateway heard of the cancel");
        assertThat(await(b.status(7, "shared-2"))).as("forgotten, as PostHog deletes it").isEmpty();

        engineA.last().promise().complete(RESULT);
        assertThat(await(a.status(7, "shared-2")).orElseThrow().get("error_message").asText()).isEqualTo("The calculation was cancelled.");
        assertThat(await(b.cancelAndForget(7, "shared-2"))).isEqualTo(InsightCalculations.Cancellation.UNKNOWN);
    }

    @Test
    void aCalculationWhoseGatewayStoppedReadsAsInterrupted() throws Exception {
        final InsightCalculation trend = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"interrupted\"}]}"));
        await(a.results(project, null, trend, read(RefreshMode.FORCE_ASYNC, "shared-3")));
        waitFor(() -> await(b.status(7, "shared-3")).isPresent(), "the start is shared");

        clockB.advance(Duration.ofSeconds(59));
        assertThat(await(b.status(7, "shared-3")).orElseThrow().get("complete").asBoolean()).as("within its time limit and margin").isFalse();
        clockB.advance(Duration.ofSeconds(2));
        final ObjectNode interrupted = await(b.status(7, "shared-3")).orElseThrow();
        assertThat(interrupted.get("complete").asBoolean()).isTrue();
        assertThat(interrupted.get("error_message").asText()).isEqualTo("The calculation was interrupted: its gateway stopped.");
    }

    private static InsightCalculations gateway(final InsightCalculationsTest.FakeEngine engine,
                                               final InsightCalculationsTest.MutableClock clock) {
        final PostgresSharedResults shared = PostgresSharedResults.of(vertx, pool, Database.connectOptions(pg));
        CLOSEABLES.add(shared);
        // Listening before the test begins: a cancel announced earlier would not reach it.
        await(shared.listening());
        return new InsightCalculations(engine, InsightCalculationsTest.config(16), clock, shared);
    }

    private static InsightCalculations.Read read(final RefreshMode mode, final String id) {
        return new InsightCalculations.Read(mode, null, id, false);
    }

    private static <T> T await(final Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void waitFor(final Supplier<Boolean> condition, final String what) throws InterruptedException {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(20);
        }
    }
}
