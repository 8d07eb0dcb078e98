package dev.eddy.gateway.testing;

import dev.eddy.config.ConfigLoader;
import dev.eddy.gateway.db.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one PostgreSQL of a test JVM that needs no Kafka (the route tests): {@code EDDY_TEST_PG_URL}'s server when set,
 * else an embedded one started on first use and stopped with the JVM. Each test class gets a database of its own, copied
 * from a template migrated once, so a class starts on Eddy's schema in milliseconds.
 */
public final class TestPostgres {
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static TestPostgres shared;

    private final String hostPort;
    private final String user;
    private final String password;
    private String template;

    private TestPostgres(final String hostPort, final String user, final String password) {
        this.hostPort = hostPort;
        this.user = user;
        this.password = password;
    }

    public static synchronized TestPostgres shared() {
        if (shared == null) {
            final Map<String, String> env = System.getenv();
            if (env.containsKey("EDDY_TEST_PG_URL")) {
                shared = new TestPostgres(Infrastructure.hostPort(env.get("EDDY_TEST_PG_URL")),
                        env.getOrDefault("EDDY_TEST_PG_USER", "eddy"), env.getOrDefault("EDDY_TEST_PG_PASSWORD", "eddy"));
            } else {
                final EmbeddedPostgres postgres;
                try {
                    postgres = EmbeddedPostgres.builder().start();
                } catch (final IOException e) {
                    throw new UncheckedIOException("starting an embedded PostgreSQL", e);
                }
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        postgres.close();
                    } catch (final IOException e) {
                        // The JVM is going: its temporary directory goes with it.
                    }
                }, "embedded-postgres-stop"));
                shared = new TestPostgres("127.0.0.1:" + postgres.getPort(), "postgres", "postgres");
            }
        }
        return shared;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** A new database with Eddy's schema (every migration applied) and nothing in it: its {@code postgresql://} URL. */
    public synchronized String newMigratedDatabase(final String prefix) throws SQLException {
        if (template == null) {
            final String url = newDatabase(hostPort, user, password, "eddy_template");
            Database.migrate(ConfigLoader.load(Map.of("EDDY_PG_URL", url, "EDDY_PG_USER", user, "EDDY_PG_PASSWORD", password),
                    java.util.Optional.empty()).pg());
            template = url.substring(url.lastIndexOf('/') + 1);
        }
        return create(hostPort, user, password, prefix, " TEMPLATE " + template);
    }

    /** A new database with nothing in it, not even Eddy's schema: its {@code postgresql://} URL. */
    public String newEmptyDatabase(final String prefix) throws SQLException {
        return newDatabase(hostPort, user, password, prefix);
    }

    /** Creates an empty database on {@code hostPort} and returns its {@code postgresql://} URL. */
    static String newDatabase(final String hostPort, final String user, final String password, final String prefix) throws SQLException {
        return create(hostPort, user, password, prefix, "");
    }

    private static String create(final String hostPort, final String user, final String password, final String prefix,
                                 final String options) throws SQLException {
        final String name = (prefix + "_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet())
                .toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + hostPort + "/postgres", user, password);
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name + options);
        }
        return "postgresql://" + hostPort + "/" + name;
    }
}
