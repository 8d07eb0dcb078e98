package dev.eddy.gateway.db;

import dev.eddy.config.PostgresConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
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
    /** How long a start waits for a PostgreSQL that refuses connections or is starting. */
    private static final Duration REACHABLE_WITHIN = Duration.ofMinutes(2);

    private Database() {
    }

    /**
     * Applies pending migrations; blocking, call before the event loops serve requests. Waits up to
     * {@link #REACHABLE_WITHIN} for a server that refuses connections or is still starting (the machine's PostgreSQL
     * coming up with Eddy), and fails at once on what waiting does not cure: a refused login, a TLS failure, a missing
     * database.
     */
    public static void migrate(final PostgresConfig pg) {
        awaitReachable(pg);
        final Flyway flyway = Flyway.configure()
                .dataSource(pg.jdbcUrl(), pg.user(), pg.password())
                .connectRetries(2)
                .locations("classpath:db/migration")
                .load();
        final MigrateResult result = flyway.migrate();
        LOG.info("database schema at version {} ({} migrations applied now)", result.targetSchemaVersion,
                result.migrationsExecuted);
    }

    private static void awaitReachable(final PostgresConfig pg) {
        final long deadline = System.nanoTime() + REACHABLE_WITHIN.toNanos();
        for (int attempt = 1; ; attempt++) {
            try (java.sql.Connection ignored = java.sql.DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password())) {
                return;
            } catch (final java.sql.SQLException e) {
                // 08001: the server could not be reached; 57P03: it is starting up. Anything else is an answer.
                final boolean waitable = "08001".equals(e.getSQLState()) || "57P03".equals(e.getSQLState());
                if (!waitable || System.nanoTime() > deadline) {
                    throw new IllegalStateException("PostgreSQL at " + PostgresConfig.redact(pg.jdbcUrl()) + " refused Eddy's connection"
                            + " (SQLSTATE " + e.getSQLState() + "): " + e.getMessage(), e);
                }
                if (attempt == 1) {
                    LOG.warn("PostgreSQL at {} is not reachable yet ({}); retrying for up to {} s", PostgresConfig.redact(pg.jdbcUrl()),
                            e.getMessage(), REACHABLE_WITHIN.toSeconds());
                }
            }
            try {
                Thread.sleep(1000);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for PostgreSQL", e);
            }
        }
    }

    /**
     * How every connection to {@code pg} is made: the pool's, and the one listening for notices. TLS as the URL's
     * {@code sslmode} asks (libpq's modes; {@code verify-full} also checks the host name), trusting the authorities of its
     * {@code sslrootcert} file, else the JVM's.
     */
    public static PgConnectOptions connectOptions(final PostgresConfig pg) {
        final PgConnectOptions options = PgConnectOptions.fromUri(pg.uri())
                .setUser(pg.user())
                .setPassword(pg.password())
                .setCachePreparedStatements(true);
        final ClientSSLOptions ssl = new ClientSSLOptions();
        pg.sslRootCert().ifPresent(file -> ssl.setTrustOptions(new PemTrustOptions().addCertPath(file)));
        if (options.getSslMode() == SslMode.VERIFY_FULL) {
            ssl.setHostnameVerificationAlgorithm("HTTPS");
        }
        return options.setSslOptions(ssl);
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
