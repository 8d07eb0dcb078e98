package dev.eddy.gateway.db;

import dev.eddy.config.PostgresConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.time.Duration;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL access: versioned migrations run once over JDBC at start-up (Flyway), and the runtime
 * connection pool every repository uses (vertx-pg-client, never blocking an event loop).
 */
public final class Database {
    private static final Logger LOG = LoggerFactory.getLogger(Database.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    private Database() {
    }

    /** Applies pending migrations; blocking, call before the event loops serve requests. */
    public static void migrate(final PostgresConfig pg) {
        final Flyway flyway = Flyway.configure()
                .dataSource(pg.jdbcUrl(), pg.user(), pg.password())
                .connectRetries(10)
                .locations("classpath:db/migration")
                .load();
        final MigrateResult result = flyway.migrate();
        LOG.info("database schema at version {} ({} migrations applied now)", result.targetSchemaVersion,
                result.migrationsExecuted);
    }

    /** How every connection to {@code pg} is made: the pool's, and the one listening for notices. */
    public static PgConnectOptions connectOptions(final PostgresConfig pg) {
        return PgConnectOptions.fromUri(pg.uri())
                .setUser(pg.user())
                .setPassword(pg.password())
                .setCachePreparedStatements(true);
    }

    public static Pool pool(final Vertx vertx, final PostgresConfig pg) {
        final PgConnectOptions connect = connectOptions(pg);
        final NetClientOptions net = new NetClientOptions().setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        final PoolOptions pool = new PoolOptions()
                .setMaxSize(pg.poolSize())
                // Bounded: past this many waiting requests the pool fails fast instead of queueing forever.
                .setMaxWaitQueueSize(1024)
                .setConnectionTimeout((int) CONNECT_TIMEOUT.toSeconds());
        return PgBuilder.pool().with(pool).with(net).connectingTo(connect).using(vertx).build();
    }

    /**
     * Whether {@code failure} says PostgreSQL cannot be reached right now (refused or lost connection, connect or pool
     * timeout, a server shutting down or out of connections), as opposed to a query it refused. Such a request is
     * answered 503: the same request succeeds once the database is back, without restarting Eddy.
     */
    public static boolean unavailable(final Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.ConnectException || t instanceof java.nio.channels.ClosedChannelException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException || t instanceof java.util.concurrent.TimeoutException
                    || t instanceof io.netty.channel.ConnectTimeoutException || t instanceof java.net.SocketException) {
                return true;
            }
            // A connection dropped mid-read: NIO reports the reset as a plain IOException, not a SocketException.
            if (t instanceof java.io.IOException && t.getMessage() != null
                    && (t.getMessage().contains("Connection reset") || t.getMessage().contains("Broken pipe"))) {
                return true;
            }
            if (t instanceof io.vertx.pgclient.PgException pg && pg.getSqlState() != null
                    && (pg.getSqlState().startsWith("08") || pg.getSqlState().startsWith("57P") || "53300".equals(pg.getSqlState()))) {
                return true;
            }
            // The pool's own refusals: its connect timeout, and its wait queue full while connections cannot be made.
            if (t instanceof io.vertx.core.VertxException && t.getMessage() != null
                    && (t.getMessage().contains("Timeout") || t.getMessage().contains("timed out") || t.getMessage().contains("Connection refused")
                    || t.getMessage().contains("Max waiter queue size"))) {
                return true;
            }
        }
        return false;
    }

    /** Whether PostgreSQL answers right now. */
    public static Future<Void> ping(final Pool pool) {
        return pool.query("SELECT 1").execute().mapEmpty();
    }
}
