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
    private static final String ROOT_CERT = "sslrootcert";
    /** libpq's modes, which both drivers take (allow and prefer fall back to plain connections; the others do not). */
    private static final java.util.List<String> SSL_MODES = java.util.List.of("disable", "allow", "prefer", "require", "verify-ca", "verify-full");

    public PostgresConfig {
        Validation.require(poolSize >= 1 && poolSize <= 200, "pg.pool-size must be 1..200, got " + poolSize);
        final String bare = url.startsWith(JDBC_PREFIX) ? url.substring(JDBC_PREFIX.length()) : url;
        try {
            final URI uri = new URI(bare);
            Validation.require("postgresql".equals(uri.getScheme()) || "postgres".equals(uri.getScheme()),
                    "pg.url must start with postgresql:// or jdbc:postgresql://, got '" + redact(url) + "'");
            Validation.require(uri.getHost() != null, "pg.url has no host: '" + redact(url) + "'");
            Validation.require(parameter(url, "sslcert").isEmpty() && parameter(url, "sslkey").isEmpty(),
                    "pg.url: client certificates (sslcert, sslkey) are not supported; Eddy logs in with pg.user and pg.password");
            parameter(url, "sslmode").ifPresent(mode -> Validation.require(SSL_MODES.contains(mode),
                    "pg.url: sslmode must be one of " + String.join(", ", SSL_MODES) + ", got '" + mode + "'"));
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

    /**
     * The URL as vertx-pg-client wants it: without {@code sslrootcert}, which it would send to the server as a setting
     * ({@link #sslRootCert} is given to it apart).
     */
    public String uri() {
        return withoutCredentials(url.startsWith(JDBC_PREFIX) ? url.substring(JDBC_PREFIX.length()) : url)
                .replaceAll("(?i)(?<=[?&])" + ROOT_CERT + "=[^&]*&?", "").replaceAll("[?&]$", "");
    }

    /**
     * The PEM file of the certificate authorities the server's certificate must chain to ({@code sslrootcert} in
     * {@link #url}, as libpq and the JDBC driver read it), checked with {@code sslmode=verify-ca} or {@code verify-full}.
     */
    public java.util.Optional<String> sslRootCert() {
        return parameter(url, ROOT_CERT);
    }

    private static java.util.Optional<String> parameter(final String url, final String name) {
        final int query = url.indexOf('?');
        if (query < 0) {
            return java.util.Optional.empty();
        }
        for (final String pair : url.substring(query + 1).split("&")) {
            final int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).equalsIgnoreCase(name)) {
                return java.util.Optional.of(java.net.URLDecoder.decode(pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        return java.util.Optional.empty();
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
