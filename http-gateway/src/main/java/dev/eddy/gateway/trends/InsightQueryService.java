package dev.eddy.gateway.trends;

import dev.eddy.gateway.streams.QueryControl;
import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.query.InvalidQuery;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.timelines.TimelineEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Trend, funnel, stickiness and lifecycle calculations over every streams instance: the query is parsed by the {@link InsightEngine} (and
 * refused with a 400 here); then every instance is asked, through {@link Scatter}, for the engine's mergeable partial
 * of the timeline partitions it runs, and the merged partials make PostHog's result. A rebalance is retried until the
 * query's deadline, then answered 503: never a silent partial. The same {@link QueryControl} bounds the scans, so a
 * query stops within its time limit or when cancelled.
 */
public final class InsightQueryService {
    private final Scatter scatter;
    private final Duration timeout;
    private final MeterRegistry registry;
    private final InsightEngine engine;
    private final QueryInliner inliner;

    /**
     * Registers the trend, funnel and earliest-event partials with {@code scatter}.
     *
     * @param timeout how long a calculation may run before it is abandoned ({@code insights.query-timeout})
     * @param inliner puts the definitions of the actions and cohorts a query names into it ({@link QueryInliner#NONE}
     *                without PostgreSQL)
     */
    public InsightQueryService(final Scatter scatter, final Duration timeout, final InsightEngine engine, final QueryInliner inliner,
                               final MeterRegistry registry) {
        this.scatter = scatter;
        this.timeout = timeout;
        this.registry = registry;
        this.engine = engine;
        this.inliner = inliner;
        for (final InsightEngine.Kind kind : InsightEngine.Kind.values()) {
            scatter.register(kind.path(), engine.read(kind));
        }
        scatter.register(InsightEngine.EARLIEST, engine.earliest());
    }

    /** A fresh control for one calculation, with the configured time limit. */
    public QueryControl control() {
        return QueryControl.within(timeout);
    }

    /** A calculation of {@code kind} (trend, funnel, stickiness, lifecycle): PostHog's result, within the configured time limit. */
    public Future<JsonNode> calculate(final InsightEngine.Kind kind, final Project project, final JsonNode query) {
        return calculate(kind, project, query, control());
    }

    /**
     * A calculation of {@code kind}, stopped when {@code control} is cancelled or runs out of time; its numbers link to
     * their persons ({@link PersonsUrls}).
     */
    public Future<JsonNode> calculate(final InsightEngine.Kind kind, final Project project, final JsonNode query, final QueryControl control) {
        final Timer.Sample sample = Timer.start();
        return inliner.inline(project.id(), query).compose(inlined -> calculateUntimed(kind, project, inlined, control))
                .map(result -> PersonsUrls.add(kind, project, query, result)).onComplete(done -> sample.stop(Timer.builder("eddy.insights.query")
                .description("Insight calculations (trends, funnels, stickiness, lifecycles), from parsing to the merged answer").tag("kind", kind.path())
                .tag("outcome", done.succeeded() ? "ok" : done.cause() instanceof ApiError e ? Integer.toString(e.status()) : "error")
                .publishPercentiles(0.5, 0.99).register(registry)));
    }

    private Future<JsonNode> calculateUntimed(final InsightEngine.Kind kind, final Project project, final JsonNode query,
                                              final QueryControl control) {
        try {
            java.time.ZoneId.of(project.timezone());
        } catch (final java.time.DateTimeException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", "The project's timezone '" + project.timezone() + "' is not valid.", null));
        }
        final InsightEngine.Scope scope = new InsightEngine.Scope(project.id(), project.timezone(), project.weekStartDay(),
                project.testAccountFilters());
        try {
            final InsightEngine.Calculation calculation = engine.calculation(kind, scope, query, TimelineEvent.micros(Instant.now()));
            if (!calculation.needsEarliest()) {
                return gather(calculation, control);
            }
            // date_from "all": the range starts at the project's earliest event, wherever it is.
            return scatter.<Optional<Long>>gather(calculation.kind(), calculation.request(), control)
                    .compose(earliest -> {
                        try {
                            return gather(calculation.withEarliest(earliest), control);
                        } catch (final InvalidQuery e) {
                            return Future.failedFuture(Scatter.refused(e));
                        }
                    });
        } catch (final InvalidQuery e) {
            return Future.failedFuture(Scatter.refused(e));
        }
    }

    private Future<JsonNode> gather(final InsightEngine.Calculation calculation, final QueryControl control) {
        return scatter.gather(calculation.kind(), calculation.request(), control).map(calculation::result);
    }
}
