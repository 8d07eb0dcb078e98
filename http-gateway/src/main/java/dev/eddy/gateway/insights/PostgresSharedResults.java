package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.db.Jsonb;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SharedResults} in PostgreSQL (migration V9): statuses in {@code query_statuses}, results in
 * {@code insight_results}, cancellations announced on the channel {@code eddy_query_cancel} (payload
 * {@code project_id:id}) to the gateway that runs the calculation, which listens on a connection of its own. Expired
 * rows are deleted every minute by whichever gateway gets there.
 */
final class PostgresSharedResults implements SharedResults, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresSharedResults.class);
    static final String CHANNEL = "eddy_query_cancel";
    private static final long PURGE_EVERY_MILLIS = 60_000;
    private static final long RECONNECT_MILLIS = 1_000;

    private static final String STARTED = "INSERT INTO query_statuses (project_id, id, complete, status, expires_at) VALUES ($1, $2, false, $3, $4) "
            + "ON CONFLICT (project_id, id) DO UPDATE SET complete = false, status = $3, expires_at = $4";
    private static final String FINISHED = "UPDATE query_statuses SET complete = true, status = $3, expires_at = $4 "
            + "WHERE project_id = $1 AND id = $2 AND NOT complete";
    private static final String STATUS = "SELECT complete, status, expires_at FROM query_statuses WHERE project_id = $1 AND id = $2 "
            + "AND (NOT complete OR expires_at > $3)";
    /** Completes a running status as cancelled and, if it was running, tells its gateway (one row then, none otherwise). */
    private static final String CANCEL = "WITH cancelled AS (UPDATE query_statuses SET complete = true, status = $3, expires_at = $4 "
            + "WHERE project_id = $1 AND id = $2 AND NOT complete RETURNING project_id, id) "
            + "SELECT pg_notify('" + CHANNEL + "', project_id::text || ':' || id) FROM cancelled";
    private static final String FORGET = "DELETE FROM query_statuses WHERE project_id = $1 AND id = $2";
    private static final String RESULT = "SELECT result, last_refresh, settings FROM insight_results WHERE project_id = $1 AND key = $2 "
            + "AND expires_at > $3";
    private static final String KEEP = "INSERT INTO insight_results (project_id, key, result, last_refresh, settings, expires_at) "
            + "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (project_id, key) DO UPDATE SET result = $3, last_refresh = $4, settings = $5, "
            + "expires_at = $6 WHERE insight_results.last_refresh <= $4";
    private static final String PURGE_STATUSES = "DELETE FROM query_statuses WHERE complete AND expires_at < now() "
            + "OR expires_at < now() - interval '1 day'";
    private static final String PURGE_RESULTS = "DELETE FROM insight_results WHERE expires_at < now()";

    private final Pool pool;
    private final PgSubscriber subscriber;
    private final List<Cancelled> handlers = new CopyOnWriteArrayList<>();
    private final Vertx vertx;
    private final long purgeTimer;
    private final Promise<Void> listening = Promise.promise();

    PostgresSharedResults(final Vertx vertx, final Pool pool, final PgConnectOptions connect) {
        this.vertx = vertx;
        this.pool = pool;
        this.subscriber = PgSubscriber.subscriber(vertx, connect).reconnectPolicy(attempt -> RECONNECT_MILLIS);
        subscriber.channel(CHANNEL).subscribeHandler(v -> listening.tryComplete()).handler(this::notice);
        connect();
        this.purgeTimer = vertx.setPeriodic(PURGE_EVERY_MILLIS, t -> purge());
    }

    /** Results and statuses in {@code pool}'s database, cancellations heard on a connection of {@code connect}'s. */
    static PostgresSharedResults of(final Vertx vertx, final Pool pool, final PgConnectOptions connect) {
        return new PostgresSharedResults(vertx, pool, connect);
    }

    private void connect() {
        subscriber.connect().onFailure(e -> {
            LOG.warn("cannot listen for cancelled calculations ({}); retrying", e.getMessage());
            if (!subscriber.closed()) {
                vertx.setTimer(RECONNECT_MILLIS, t -> connect());
            }
        });
    }

    private void notice(final String payload) {
        final int colon = payload.indexOf(':');
        if (colon <= 0) {
            return;
        }
        try {
            final long projectId = Long.parseLong(payload.substring(0, colon));
            final String id = payload.substring(colon + 1);
            handlers.forEach(h -> h.cancelled(projectId, id));
        } catch (final NumberFormatException e) {
            LOG.warn("ignoring a malformed cancellation notice");
        }
    }

    /**
     * Completes once this gateway first listens for cancellations: a cancel announced before then stops nothing here
     * (the calculation runs on, and its result is dropped when its end finds the status cancelled).
     */
    Future<Void> listening() {
        return listening.future();
    }

    @Override
    public Future<Void> started(final long projectId, final String id, final ObjectNode status, final Instant deadline) {
        return pool.preparedQuery(STARTED).execute(Tuple.of(projectId, id, Jsonb.bind(status), time(deadline))).mapEmpty();
    }

    @Override
    public Future<Boolean> finished(final long projectId, final String id, final ObjectNode status, final Instant expires) {
        return pool.preparedQuery(FINISHED).execute(Tuple.of(projectId, id, Jsonb.bind(status), time(expires)))
                .map(rows -> rows.rowCount() == 1);
    }

    @Override
    public Future<Optional<ObjectNode>> status(final long projectId, final String id, final Instant now) {
        return pool.preparedQuery(STATUS).execute(Tuple.of(projectId, id, time(now))).map(rows -> {
            if (rows.size() == 0) {
                return Optional.empty();
            }
            final Row row = rows.iterator().next();
            final JsonNode status = Jsonb.read(row.getValue("status"));
            if (!(status instanceof ObjectNode object)) {
                return Optional.empty();
            }
            if (!row.getBoolean("complete") && row.getOffsetDateTime("expires_at").toInstant().isBefore(now)) {
                // Its gateway stopped while it ran: no one will complete it.
                object.put("complete", true).put("error", true).put("error_message", "The calculation was interrupted: its gateway stopped.");
            }
            return Optional.of(object);
        });
    }

    @Override
    public Future<Boolean> cancel(final long projectId, final String id, final ObjectNode cancelled, final Instant expires) {
        return pool.preparedQuery(CANCEL).execute(Tuple.of(projectId, id, Jsonb.bind(cancelled), time(expires)))
                .map(rows -> rows.size() > 0);
    }

    @Override
    public Future<Void> forget(final long projectId, final String id) {
        return pool.preparedQuery(FORGET).execute(Tuple.of(projectId, id)).mapEmpty();
    }

    @Override
    public Future<Optional<ResultCache.Entry>> result(final ResultCache.Key key, final Instant now) {
        return pool.preparedQuery(RESULT).execute(Tuple.of(key.projectId(), key.digest(), time(now))).map(rows -> rows.size() == 0 ? Optional.empty()
                : Optional.of(entry(rows.iterator().next())));
    }

    @Override
    public Future<Void> keep(final ResultCache.Key key, final ResultCache.Entry entry, final Instant expires) {
        return pool.preparedQuery(KEEP).execute(Tuple.of(key.projectId(), key.digest(), Jsonb.bind(entry.result()), time(entry.lastRefresh()),
                entry.settings(), time(expires))).mapEmpty();
    }

    @Override
    public void onCancelled(final Cancelled handler) {
        handlers.add(handler);
    }

    private void purge() {
        pool.query(PURGE_STATUSES).execute().compose(v -> pool.query(PURGE_RESULTS).execute())
                .onFailure(e -> LOG.debug("purging expired query results failed; the next minute tries again", e));
    }

    private static ResultCache.Entry entry(final Row row) {
        return new ResultCache.Entry(Jsonb.read(row.getValue("result")), row.getOffsetDateTime("last_refresh").toInstant(),
                row.getString("settings"));
    }

    private static OffsetDateTime time(final Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }

    @Override
    public void close() {
        vertx.cancelTimer(purgeTimer);
        subscriber.close();
    }
}
