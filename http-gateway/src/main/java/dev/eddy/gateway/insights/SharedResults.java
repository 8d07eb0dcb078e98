package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.Optional;

/**
 * What {@link InsightCalculations} keeps for every gateway: background calculations' statuses (read and cancelled by
 * id from any gateway) and calculated results (a second tier under each gateway's own {@link ResultCache}). Several
 * gateways behind a load balancer, and a restarted one, so answer a status poll or a cached read wherever it lands.
 */
interface SharedResults {
    /** Keeps nothing: one gateway's memory is all there is (tests, and a process without PostgreSQL). */
    SharedResults NONE = new SharedResults() {
        @Override
        public Future<Void> started(final long projectId, final String id, final ObjectNode status, final Instant deadline) {
            return Future.succeededFuture();
        }

        @Override
        public Future<Boolean> finished(final long projectId, final String id, final ObjectNode status, final Instant expires) {
            return Future.succeededFuture(true);
        }

        @Override
        public Future<Optional<ObjectNode>> status(final long projectId, final String id, final Instant now) {
            return Future.succeededFuture(Optional.empty());
        }

        @Override
        public Future<Boolean> cancel(final long projectId, final String id, final ObjectNode cancelled, final Instant expires) {
            return Future.succeededFuture(false);
        }

        @Override
        public Future<Void> forget(final long projectId, final String id) {
            return Future.succeededFuture();
        }

        @Override
        public Future<Optional<ResultCache.Entry>> result(final ResultCache.Key key, final Instant now) {
            return Future.succeededFuture(Optional.empty());
        }

        @Override
        public Future<Void> keep(final ResultCache.Key key, final ResultCache.Entry entry, final Instant expires) {
            return Future.succeededFuture();
        }

        @Override
        public void onCancelled(final Cancelled handler) {
            // Nothing is cancelled elsewhere.
        }
    };

    /** Told of a calculation another gateway cancelled. */
    interface Cancelled {
        void cancelled(long projectId, String id);
    }

    /** A background calculation began; past {@code deadline} it can no longer be running, so a status still running then was interrupted. */
    Future<Void> started(long projectId, String id, ObjectNode status, Instant deadline);

    /**
     * A calculation completed with {@code status}, shown until {@code expires}; false when it had already completed
     * elsewhere (cancelled by another gateway) or was forgotten: then this result is not its answer.
     */
    Future<Boolean> finished(long projectId, String id, ObjectNode status, Instant expires);

    /** The status as the calculating gateway last wrote it; one running past its deadline reads as failed (interrupted). */
    Future<Optional<ObjectNode>> status(long projectId, String id, Instant now);

    /** Completes a running calculation with {@code cancelled} and tells its gateway to stop it; whether it was running. */
    Future<Boolean> cancel(long projectId, String id, ObjectNode cancelled, Instant expires);

    /** Forgets the status. */
    Future<Void> forget(long projectId, String id);

    /** The result kept under {@code key}, unless expired by {@code now}. */
    Future<Optional<ResultCache.Entry>> result(ResultCache.Key key, Instant now);

    Future<Void> keep(ResultCache.Key key, ResultCache.Entry entry, Instant expires);

    /** Where this gateway hears of its calculations cancelled by other gateways. */
    void onCancelled(Cancelled handler);
}
