package dev.eddy.config;

import com.typesafe.config.Config;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * Where the management data lives.
 *
 * @param url      {@code postgresql://host:port/db}, with or without a {@code jdbc:} prefix
 * @param user     login role
 * @param password its password
 * @param poolSize connections in the runtime pool
 */
public record PostgresConfig(String url, String user, String password, int poolSize) {
    private static final String JDBC_PREFIX = "jdbc:";

    public PostgresConfig {
        Validation.require(poolSize >= 1 && poolSize <= 200, "pg.pool-size must be 1..200, got " + poolSize);
        final String bare = url.startsWith(JDBC_PREFIX) ? url.substring(JDBC_PREFIX.length()) : url;
        try {
            final URI uri = new URI(bare);
            Validation.require("postgresql".equals(uri.getScheme()) || "postgres".equals(uri.getScheme()),
                    "pg.url must start with postgresql:// or jdbc:postgresql://, got '" + redact(url) + "'");
            Validation.require(uri.getHost() != null, "pg.url has no host: '" + redact(url) + "'");
        } catch (final URISyntaxException e) {
            throw new ConfigException("pg.url is not a URL: '" + redact(url) + "'", e);
        }
    }

    static PostgresConfig from(final Config root) {
        final Config c = root.getConfig("pg");
        return new PostgresConfig(c.getString("url"), c.getString("user"), c.getString("password"), c.getInt("pool-size"));
    }

    /** The URL as the PostgreSQL JDBC driver wants it (used by the migrations only). */
    public String jdbcUrl() {
        final String bare = url.startsWith(JDBC_PREFIX) ? url.substring(JDBC_PREFIX.length()) : url;
        return JDBC_PREFIX + withoutCredentials(bare).replaceFirst("^postgres://", "postgresql://");
    }

    /** The URL as vertx-pg-client wants it. */
    public String uri() {
        return withoutCredentials(url.startsWith(JDBC_PREFIX) ? url.substring(JDBC_PREFIX.length()) : url);
    }

    /**
     * The URL without a user or password of its own: the clients get {@link #user} and {@link #password} separately
     * (the runtime pool always let those win), and a URL without credentials is safe in the drivers' error messages.
     */
    static String withoutCredentials(final String url) {
        return url.replaceAll("//[^/@]*@", "//").replaceAll("(?i)(?<=[?&])(password|user)=[^&]*&?", "").replaceAll("[?&]$", "");
    }

    /**
     * {@code url} without the password it may carry ({@code postgresql://user:secret@host/db},
     * {@code ?password=secret}): what messages and logs may show of it.
     */
    public static String redact(final String url) {
        return url.replaceAll("(//[^/@:]*:)[^/@]*@", "$1***@").replaceAll("(?i)([?&]password=)[^&]*", "$1***");
    }

    @Override
    public String toString() {
        // Never print the password, neither the field nor one inside the URL.
        return "PostgresConfig[url=" + redact(url) + ", user=" + user + ", poolSize=" + poolSize + "]";
    }
}
