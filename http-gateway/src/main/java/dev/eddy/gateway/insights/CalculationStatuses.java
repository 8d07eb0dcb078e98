package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.IsoInstants;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The statuses of insight calculations ({@link QueryStatus}): those this gateway runs, by id and by the result they
 * calculate, and, through {@link SharedResults}, those of every gateway: a status is read and cancelled wherever a
 * request lands, a background calculation's start and end are written for the others, and a cancel made elsewhere
 * stops the calculation here.
 */
final class CalculationStatuses {
    private static final Logger LOG = LoggerFactory.getLogger(CalculationStatuses.class);
    static final String CANCELLED = "The calculation was cancelled.";
    /** How long after its time limit a calculation may still write its end (a margin for the last partials and the write). */
    private static final Duration FINISHING = Duration.ofSeconds(30);

    private final Clock clock;
    private final Duration retention;
    private final Duration queryTimeout;
    private final SharedResults shared;
    /** Calculations by id, running or recently finished. */
    private final Map<String, QueryStatus> byId = new ConcurrentHashMap<>();
    /** The latest background calculation of each result. */
    private final Map<ResultCache.Key, QueryStatus> byKey = new ConcurrentHashMap<>();

    /**
     * @param retention    how long a finished status is shown ({@code insights.async.status-retention})
     * @param queryTimeout how long a calculation may run ({@code insights.query-timeout}): past it and a margin, a
     *                     status still running elsewhere was interrupted
     */
    CalculationStatuses(final Clock clock, final Duration retention, final Duration queryTimeout, final SharedResults shared) {
        this.clock = clock;
        this.retention = retention;
        this.queryTimeout = queryTimeout;
        this.shared = shared;
        // Another gateway cancelled a calculation running here: stop it (its shared status is already cancelled).
        shared.onCancelled((projectId, id) -> {
            final QueryStatus status = byId.get(id);
            if (status != null && status.projectId() == projectId) {
                status.cancel(CANCELLED, clock.instant());
            }
        });
    }

    /** The background calculation of {@code key} running here, if any. */
    Optional<QueryStatus> running(final ResultCache.Key key) {
        final QueryStatus status = byKey.get(key);
        return status != null && !status.complete() ? Optional.of(status) : Optional.empty();
    }

    long runningHere() {
        return byId.values().stream().filter(s -> !s.complete()).count();
    }

    /** A calculation the request waits for, known by id only so that a client which named it can cancel it; until {@link #done}. */
    void waitedFor(final QueryStatus status) {
        byId.put(status.id(), status);
    }

    void done(final QueryStatus status) {
        byId.remove(status.id(), status);
    }

    /** A background calculation of {@code key} begins: known here, and written for the other gateways before it runs. */
    Future<Void> started(final QueryStatus status, final ResultCache.Key key) {
        byId.put(status.id(), status);
        byKey.put(key, status);
        return shared.started(status.projectId(), status.id(), status.toJson(), clock.instant().plus(queryTimeout).plus(FINISHING))
                .recover(e -> {
                    LOG.warn("could not share a calculation's status; only this gateway knows it", e);
                    return Future.succeededFuture();
                });
    }

    /** A background calculation completed here: its end written for the others, unless another gateway cancelled it first. */
    void finished(final QueryStatus status, final ResultCache.Key key) {
        shared.finished(status.projectId(), status.id(), status.toJson(), expiry(clock.instant()))
                .onSuccess(ours -> {
                    if (!ours) {
                        // Cancelled or forgotten on another gateway first: that is its status.
                        byId.remove(status.id(), status);
                        byKey.remove(key, status);
                    }
                })
                .onFailure(e -> LOG.warn("could not share a calculation's end; only this gateway knows it", e));
    }

    /**
     * The status an insight shows with a cached result or a miss: a calculation running for it, or one that failed
     * after the cached result was calculated.
     */
    JsonNode shown(final ResultCache.Key key, final ResultCache.Entry cached) {
        final QueryStatus status = byKey.get(key);
        if (status == null) {
            return null;
        }
        if (!status.complete()) {
            return status.toJson();
        }
        final boolean newerFailure = status.failed() && (cached == null || status.endTime().isAfter(cached.lastRefresh()));
        return newerFailure ? status.toJson() : null;
    }

    /** The status of the project's calculation {@code id}: this gateway's, else the one another gateway wrote. */
    Future<Optional<ObjectNode>> status(final long projectId, final String id) {
        purge();
        final QueryStatus status = byId.get(id);
        if (status != null && status.projectId() == projectId) {
            return Future.succeededFuture(Optional.of(status.toJson()));
        }
        return shared.status(projectId, id, clock.instant());
    }

    /** Cancels the project's calculation {@code id} if it runs, here or elsewhere; what it found. */
    Future<InsightCalculations.Cancellation> cancel(final long projectId, final String id) {
        final QueryStatus status = byId.get(id);
        if (status != null && status.projectId() == projectId) {
            return status.cancel(CANCELLED, clock.instant())
                    ? shared.finished(projectId, id, status.toJson(), expiry(clock.instant())).map(InsightCalculations.Cancellation.CANCELLED)
                    : Future.succeededFuture(InsightCalculations.Cancellation.ALREADY_COMPLETE);
        }
        return shared.status(projectId, id, clock.instant()).compose(found -> {
            if (found.isEmpty()) {
                return Future.succeededFuture(InsightCalculations.Cancellation.UNKNOWN);
            }
            return found.get().path("complete").asBoolean() ? Future.succeededFuture(InsightCalculations.Cancellation.ALREADY_COMPLETE)
                    : shared.cancel(projectId, id, cancelled(found.get()), expiry(clock.instant()))
                    .map(running -> running ? InsightCalculations.Cancellation.CANCELLED : InsightCalculations.Cancellation.ALREADY_COMPLETE);
        });
    }

    /** Cancels as {@link #cancel} does, then forgets the status, here and for every gateway, as PostHog deletes it. */
    Future<InsightCalculations.Cancellation> cancelAndForget(final long projectId, final String id) {
        return cancel(projectId, id).compose(found -> {
            final QueryStatus status = byId.get(id);
            if (status != null && status.projectId() == projectId) {
                byId.remove(id, status);
                byKey.values().remove(status);
            }
            return found == InsightCalculations.Cancellation.UNKNOWN ? Future.succeededFuture(found) : shared.forget(projectId, id).map(found);
        });
    }

    /** Drops finished statuses past their retention. */
    void purge() {
        final Instant now = clock.instant();
        byId.values().removeIf(s -> s.expired(now));
        byKey.values().removeIf(s -> s.expired(now));
    }

    /** A status as cancelled now. */
    private ObjectNode cancelled(final ObjectNode status) {
        final Instant now = clock.instant();
        return status.deepCopy().put("complete", true).put("error", true).put("error_message", CANCELLED)
                .put("end_time", IsoInstants.format(now)).put("expiration_time", IsoInstants.format(expiry(now)));
    }

    /** When a status completed at {@code end} stops being shown. */
    private Instant expiry(final Instant end) {
        return end.plus(retention);
    }
}
