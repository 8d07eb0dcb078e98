package dev.eddy.gateway.insights;

import static dev.eddy.gateway.insights.QueryTranslationTest.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.config.InsightsConfig;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.query.insights.InsightEngine;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The refresh modes of saved insights over a fake engine whose calculations finish when the test says: what is
 * calculated when, what the insight shows meanwhile, and cancellation.
 */
class InsightCalculationsTest {
    private static final Instant START = Instant.parse("2024-03-10T12:00:00Z");
    /** A relative range: a result of it goes stale after the day threshold (6 h, PostHog's). */
    private static final String RECENT = "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"-7d\"}";
    private static final JsonNode RESULT = json("[{\"count\":3}]");

    private final MutableClock clock = new MutableClock();
    private final FakeEngine engine = new FakeEngine();
    private final Project project = project("UTC");
    private InsightCalculations calculations = new InsightCalculations(engine, config(16), clock);

    @Test
    void forceCacheNeverCalculates() {
        final Insight shown = read(insight(1, RECENT), RefreshMode.FORCE_CACHE);

        assertThat(engine.calls).isEmpty();
        assertThat(shown.result()).isNull();
        assertThat(shown.isCached()).isFalse();
        assertThat(shown.lastRefresh()).isNull();
        assertThat(shown.queryStatus()).isNull();
        assertThat(shown.timezone()).isEqualTo("UTC");
    }

    @Test
    void blockingCalculatesOnceAndServesTheFreshResultFromTheCacheUntilItIsStale() {
        final Future<Insight> first = calculations.withResults(project, insight(1, RECENT), InsightCalculations.Read.of(RefreshMode.BLOCKING));
        assertThat(first.isComplete()).isFalse();
        engine.last().promise().complete(RESULT);

        assertThat(first.result().result()).isEqualTo(RESULT);
        assertThat(first.result().isCached()).isFalse();
        assertThat(first.result().lastRefresh()).isEqualTo("2024-03-10T12:00:00Z");
        assertThat(first.result().cacheTargetAge()).isEqualTo("2024-03-10T18:00:00Z");
        assertThat(first.result().nextAllowedClientRefresh()).as("-7d spans more than 7 days").isEqualTo("2024-03-10T12:15:00Z");
        assertThat(first.result().hasMore()).isFalse();
        assertThat(engine.last().filter().get("date_from").asText()).isEqualTo("-7d");

        clock.advance(Duration.ofHours(6));
        final Insight cached = read(insight(1, RECENT), RefreshMode.BLOCKING);
        assertThat(cached.isCached()).isTrue();
        assertThat(cached.result()).isEqualTo(RESULT);
        assertThat(engine.calls).hasSize(1);
        assertThat(read(insight(1, RECENT), RefreshMode.FORCE_CACHE).isCached()).isTrue();

        clock.advance(Duration.ofSeconds(1));
        final Future<Insight> stale = calculations.withResults(project, insight(1, RECENT), InsightCalculations.Read.of(RefreshMode.BLOCKING));
        assertThat(engine.calls).as("stale: recalculated").hasSize(2);
        engine.last().promise().complete(json("[{\"count\":4}]"));
        assertThat(stale.result().isCached()).isFalse();
        assertThat(stale.result().result().get(0).get("count").asInt()).isEqualTo(4);
    }

    @Test
    void aRangeThatEndedBeforeTheCalculationNeverGoesStale() {
        final String past = "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}";
        calculate(insight(2, past), RESULT);
        clock.advance(Duration.ofHours(20));

        final Insight shown = read(insight(2, past), RefreshMode.BLOCKING);

        assertThat(shown.isCached()).isTrue();
        assertThat(engine.calls).hasSize(1);
        assertThat(shown.nextAllowedClientRefresh()).as("11 days").isEqualTo("2024-03-10T12:15:00Z");

        clock.advance(Duration.ofHours(5));
        assertThat(read(insight(2, past), RefreshMode.FORCE_CACHE).result()).as("dropped after expire-after (24 h)").isNull();
    }

    @Test
    void forceBlockingRecalculatesEvenAFreshResult() {
        calculate(insight(1, RECENT), RESULT);

        calculations.withResults(project, insight(1, RECENT), InsightCalculations.Read.of(RefreshMode.FORCE_BLOCKING));

        assertThat(engine.calls).hasSize(2);
    }

    @Test
    void asyncOnAMissAnswersTheRunningStatusThenTheResult() {
        final Insight started = read(insight(1, RECENT), RefreshMode.ASYNC);

        assertThat(started.result()).isNull();
        final JsonNode status = started.queryStatus();
        assertThat(status.get("complete").asBoolean()).isFalse();
        assertThat(status.get("query_async").asBoolean()).isTrue();
        assertThat(status.get("error").asBoolean()).isFalse();
        assertThat(status.get("insight_id").asLong()).isEqualTo(1);
        assertThat(status.get("team_id").asLong()).isEqualTo(7);
        assertThat(status.get("start_time").asText()).isEqualTo("2024-03-10T12:00:00Z");
        assertThat(status.get("end_time").isNull()).isTrue();
        final Insight polled = read(insight(1, RECENT), RefreshMode.ASYNC);
        assertThat(polled.queryStatus().get("id")).as("the running calculation, not a second one").isEqualTo(status.get("id"));
        assertThat(engine.calls).hasSize(1);

        clock.advance(Duration.ofSeconds(2));
        engine.last().promise().complete(RESULT);
        final Insight done = read(insight(1, RECENT), RefreshMode.FORCE_CACHE);

        assertThat(done.result()).isEqualTo(RESULT);
        assertThat(done.isCached()).isTrue();
        assertThat(done.lastRefresh()).isEqualTo("2024-03-10T12:00:02Z");
        assertThat(done.queryStatus()).as("PostHog shows a status only while it runs").isNull();
        assertThat(read(insight(1, RECENT), RefreshMode.ASYNC).queryStatus()).as("fresh: nothing started").isNull();
        assertThat(engine.calls).hasSize(1);
    }

    @Test
    void asyncOnAStaleResultShowsItWhileRecalculating() {
        calculate(insight(1, RECENT), RESULT);
        clock.advance(Duration.ofHours(7));

        final Insight shown = read(insight(1, RECENT), RefreshMode.ASYNC);

        assertThat(shown.result()).isEqualTo(RESULT);
        assertThat(shown.isCached()).isTrue();
        assertThat(shown.queryStatus().get("complete").asBoolean()).isFalse();
        assertThat(engine.calls).hasSize(2);
    }

    @Test
    void lazyAsyncWaitsForTheLazyThreshold() {
        calculate(insight(1, RECENT), RESULT);
        clock.advance(Duration.ofHours(7));
        assertThat(read(insight(1, RECENT), RefreshMode.LAZY_ASYNC).queryStatus()).as("stale, but not lazily").isNull();
        assertThat(engine.calls).hasSize(1);

        clock.advance(Duration.ofHours(6));
        assertThat(read(insight(1, RECENT), RefreshMode.LAZY_ASYNC).queryStatus().get("complete").asBoolean()).isFalse();
        assertThat(engine.calls).hasSize(2);
        assertThat(read(insight(2, RECENT), RefreshMode.LAZY_ASYNC).queryStatus()).as("a miss starts one").isNotNull();
        assertThat(engine.calls).hasSize(3);
    }

    @Test
    void asyncExceptOnCacheMissBlocksOnAMissAndRecalculatesInTheBackgroundWhenStale() {
        final Future<Insight> miss = calculations.withResults(project, insight(1, RECENT),
                InsightCalculations.Read.of(RefreshMode.ASYNC_EXCEPT_ON_CACHE_MISS));
        engine.last().promise().complete(RESULT);
        assertThat(miss.result().result()).isEqualTo(RESULT);
        assertThat(miss.result().queryStatus()).isNull();

        clock.advance(Duration.ofHours(7));
        final Insight stale = read(insight(1, RECENT), RefreshMode.ASYNC_EXCEPT_ON_CACHE_MISS);
        assertThat(stale.isCached()).isTrue();
        assertThat(stale.queryStatus().get("complete").asBoolean()).isFalse();
    }

    @Test
    void forceAsyncAlwaysStartsACalculationAndAnswersOnlyItsStatus() {
        calculate(insight(1, RECENT), RESULT);

        final Insight shown = calculations.withResults(project, insight(1, RECENT),
                new InsightCalculations.Read(RefreshMode.FORCE_ASYNC, null, "my-query", false)).result();

        assertThat(shown.result()).isNull();
        assertThat(shown.queryStatus().get("id").asText()).isEqualTo("my-query");
        assertThat(engine.calls).hasSize(2);
    }

    @Test
    void cancelStopsTheRunningCalculationAndDropsWhatItProduces() {
        calculations.withResults(project, insight(1, RECENT), new InsightCalculations.Read(RefreshMode.ASYNC, 5L, "q-1", false));
        assertThat(calculations.cancel(8, "q-1").result()).as("another project's").isFalse();
        assertThat(calculations.cancel(7, "unknown").result()).isFalse();

        clock.advance(Duration.ofSeconds(1));
        assertThat(calculations.cancel(7, "q-1").result()).isTrue();

        assertThat(engine.last().control().isCancelled()).as("the scan stops at its next check").isTrue();
        engine.last().promise().complete(RESULT);
        final Insight after = read(insight(1, RECENT), RefreshMode.FORCE_CACHE);
        assertThat(after.result()).as("the cancelled result is not kept").isNull();
        final JsonNode status = after.queryStatus();
        assertThat(status.get("id").asText()).isEqualTo("q-1");
        assertThat(status.get("dashboard_id").asLong()).isEqualTo(5);
        assertThat(status.get("complete").asBoolean()).isTrue();
        assertThat(status.get("error").asBoolean()).isTrue();
        assertThat(status.get("error_message").asText()).isEqualTo("The calculation was cancelled.");
        assertThat(status.get("end_time").asText()).isEqualTo("2024-03-10T12:00:01Z");
        assertThat(calculations.cancel(7, "q-1").result()).as("already over").isFalse();

        clock.advance(Duration.ofMinutes(11));
        assertThat(read(insight(1, RECENT), RefreshMode.FORCE_CACHE).queryStatus()).as("past the status retention").isNull();
    }

    @Test
    void aCancelledBlockingCalculationFailsItsRequestWith409() {
        final Future<Insight> blocking = calculations.withResults(project, insight(1, RECENT),
                new InsightCalculations.Read(RefreshMode.BLOCKING, null, "b-1", false));

        assertThat(calculations.cancel(7, "b-1").result()).isTrue();
        engine.last().promise().fail(ApiError.cancelled("The calculation was cancelled."));

        assertThat(((ApiError) blocking.cause()).status()).isEqualTo(409);
    }

    @Test
    void aQueryTheEngineRefusesFailsTheRequestOrShowsAsTheInsightsFailedStatus() {
        final Future<Insight> single = calculations.withResults(project, insight(1, RECENT), InsightCalculations.Read.of(RefreshMode.BLOCKING));
        engine.last().promise().fail(ApiError.badRequest("invalid_input", "Funnels require at least two steps.", null));
        assertThat(((ApiError) single.cause()).status()).as("one insight: PostHog's 400").isEqualTo(400);

        final Future<Insight> tile = calculations.withResults(project, insight(1, RECENT),
                InsightCalculations.Read.of(RefreshMode.BLOCKING).onDashboard(3).failingAsStatus());
        engine.last().promise().fail(ApiError.badRequest("invalid_input", "Funnels require at least two steps.", null));
        assertThat(tile.result().result()).isNull();
        assertThat(tile.result().queryStatus().get("error_message").asText()).isEqualTo("Funnels require at least two steps.");

        read(insight(2, RECENT), RefreshMode.ASYNC);
        engine.last().promise().fail(ApiError.timeout("The query did not finish within its time limit of 30000 ms."));
        assertThat(read(insight(2, RECENT), RefreshMode.FORCE_CACHE).queryStatus().get("error_message").asText())
                .isEqualTo("The query did not finish within its time limit of 30000 ms.");
    }

    @Test
    void anInsightEddyCannotCalculateShowsWhyAndNothingRuns() {
        final Insight shown = read(insight(1, "{\"insight\":\"SESSIONS\"}"), RefreshMode.FORCE_BLOCKING);

        assertThat(engine.calls).isEmpty();
        assertThat(shown.result()).isNull();
        assertThat(shown.queryStatus().get("complete").asBoolean()).isTrue();
        assertThat(shown.queryStatus().get("error_message").asText()).isEqualTo("Unknown insight type 'SESSIONS'.");
    }

    @Test
    void beyondMaxRunningTheStatusIsPostHogsConcurrencyLimit() {
        calculations = new InsightCalculations(engine, config(1), clock);
        read(insight(1, RECENT), RefreshMode.ASYNC);

        final Insight second = read(insight(2, RECENT), RefreshMode.ASYNC);

        assertThat(second.queryStatus().get("error_message").asText()).isEqualTo("concurrency_limit_exceeded");
        assertThat(engine.calls).hasSize(1);
    }

    @Test
    void aResultOfOtherProjectSettingsOrOtherFiltersIsNotTheInsights() {
        calculate(insight(1, RECENT), RESULT);

        assertThat(calculations.withResults(project("Europe/Paris"), insight(1, RECENT), InsightCalculations.Read.of(RefreshMode.FORCE_CACHE))
                .result().result()).isNull();
        assertThat(read(insight(1, RECENT.replace("-7d", "-8d")), RefreshMode.FORCE_CACHE).result()).isNull();
        assertThat(read(DashboardOverride.apply(insight(1, RECENT), json("{\"date_from\":\"-30d\"}")), RefreshMode.FORCE_CACHE).result())
                .as("a dashboard's overrides are another result").isNull();
        assertThat(read(insight(1, RECENT), RefreshMode.FORCE_CACHE).result()).isEqualTo(RESULT);
    }

    private void calculate(final Insight insight, final JsonNode result) {
        final Future<Insight> done = calculations.withResults(project, insight, InsightCalculations.Read.of(RefreshMode.FORCE_BLOCKING));
        engine.last().promise().complete(result);
        assertThat(done.succeeded()).isTrue();
    }

    private Insight read(final Insight insight, final RefreshMode mode) {
        final Future<Insight> shown = calculations.withResults(project, insight, InsightCalculations.Read.of(mode));
        assertThat(shown.succeeded()).as("answered without waiting").isTrue();
        return shown.result();
    }

    static InsightsConfig config(final int maxRunning) {
        return new InsightsConfig(Duration.ofSeconds(30), FreshnessTest.POSTHOG, new InsightsConfig.Async(maxRunning, Duration.ofMinutes(10)), 0, 0);
    }

    static Project project(final String timezone) {
        return new Project(7, UUID.randomUUID(), UUID.randomUUID(), "p", "token", timezone, 0, json("[]"), null, null);
    }

    static Insight insight(final long id, final String filters) {
        return new Insight(id, "short", "name", null, json(filters), null, null, false, List.of(), List.of(), null, null, null, null, null,
                null, null, null, null, null, List.of(), false, false, null, null, false, 21, 37, "editor", "UTC", false, null, null, null, null);
    }

    /** Calculations that finish when the test completes their promise. */
    static final class FakeEngine implements InsightCalculations.Engine {
        final List<Call> calls = new ArrayList<>();

        record Call(JsonNode filter, QueryControl control, Promise<JsonNode> promise) {
        }

        Call last() {
            return calls.get(calls.size() - 1);
        }

        @Override
        public QueryControl control() {
            return QueryControl.within(Duration.ofSeconds(30));
        }

        @Override
        public Future<JsonNode> calculate(final InsightEngine.Kind kind, final Project project, final JsonNode filter,
                                          final QueryControl control) {
            final Call call = new Call(filter, control, Promise.promise());
            calls.add(call);
            return call.promise().future();
        }
    }

    static final class MutableClock extends Clock {
        private Instant now = START;

        void advance(final Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(final ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

}
