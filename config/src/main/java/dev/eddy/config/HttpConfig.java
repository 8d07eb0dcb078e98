package dev.eddy.config;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Optional;

/**
 * The HTTP server of one process.
 *
 * @param host           interface to bind
 * @param port           port to bind (0 picks a free one, for tests)
 * @param advertisedHost host other instances use to reach this one (Kafka Streams {@code application.server})
 * @param eventLoops     HTTP servers, one per event loop; 0 means one per CPU core
 * @param internalSecret authenticates calls between instances; empty means a random one for this process
 * @param internalTimeout how long a read forwarded to another instance may take
 * @param adminPort      port of the admin server ({@code /metrics}, {@code /_internal}, the health probes); -1 serves
 *                       them on {@link #port}, 0 picks a free one (tests)
 * @param tls            the public port's certificate and key, if it serves HTTPS
 * @param drainDelay     how long a stopping process keeps serving while its readiness already answers 503, so load
 *                       balancers stop sending before it stops accepting
 * @param drainTimeout   how long a stopping process waits for requests in flight before it closes their connections
 */
public record HttpConfig(String host, int port, String advertisedHost, int eventLoops, String internalSecret,
                         Duration internalTimeout, int adminPort, Optional<Tls> tls, Duration drainDelay, Duration drainTimeout) {

    /** No admin server: its routes are served on the public port. */
    public static final int NO_ADMIN_PORT = -1;
    private static final Duration MAX_DRAIN = Duration.ofMinutes(5);

    /**
     * HTTPS on the public port.
     *
     * @param certFile PEM certificate chain, the server's first (what cert-manager writes as {@code tls.crt})
     * @param keyFile  PEM private key, PKCS#8 or PKCS#1 ({@code tls.key})
     */
    public record Tls(String certFile, String keyFile) {
    }

    public HttpConfig {
        Validation.require(port >= 0 && port <= 65535, "http.port must be 0..65535, got " + port);
        Validation.require(!host.isBlank(), "http.host must not be blank");
        Validation.require(!advertisedHost.isBlank(), "http.advertised-host must not be blank");
        Validation.require(eventLoops >= 0 && eventLoops <= 256, "http.event-loops must be 0..256");
        Validation.require(internalSecret.isEmpty() || internalSecret.length() >= 16,
                "http.internal-secret must be empty or at least 16 characters");
        Validation.require(!internalTimeout.isNegative() && !internalTimeout.isZero(), "http.internal-timeout-ms must be positive");
        Validation.require(adminPort >= NO_ADMIN_PORT && adminPort <= 65535, "http.admin-port must be -1 (none) or 0..65535, got " + adminPort);
        Validation.require(adminPort <= 0 || adminPort != port, "http.admin-port must differ from http.port (" + port + ")");
        Validation.require(!drainDelay.isNegative() && drainDelay.compareTo(MAX_DRAIN) <= 0, "http.drain-delay-ms must be 0..300000");
        Validation.require(!drainTimeout.isNegative() && drainTimeout.compareTo(MAX_DRAIN) <= 0, "http.drain-timeout-ms must be 0..300000");
    }

    static HttpConfig from(final Config c) {
        final String cert = c.getString("tls.cert-file");
        final String key = c.getString("tls.key-file");
        Validation.require(cert.isEmpty() == key.isEmpty(),
                "http.tls.cert-file and http.tls.key-file go together: set both for HTTPS, or neither");
        return new HttpConfig(c.getString("host"), c.getInt("port"), c.getString("advertised-host"), c.getInt("event-loops"),
                c.getString("internal-secret"), Duration.ofMillis(c.getLong("internal-timeout-ms")), c.getInt("admin-port"),
                cert.isEmpty() ? Optional.empty() : Optional.of(new Tls(cert, key)),
                Duration.ofMillis(c.getLong("drain-delay-ms")), Duration.ofMillis(c.getLong("drain-timeout-ms")));
    }

    /** Whether {@code /metrics}, {@code /_internal} and the probes have a port of their own. */
    public boolean hasAdminPort() {
        return adminPort != NO_ADMIN_PORT;
    }

    /** How many HTTP servers (event loops) to run. */
    public int effectiveEventLoops() {
        return eventLoops == 0 ? Runtime.getRuntime().availableProcessors() : eventLoops;
    }

    @Override
    public String toString() {
        // The internal secret authenticates instances to each other: never printed.
        return "HttpConfig[host=" + host + ", port=" + port + ", advertisedHost=" + advertisedHost + ", eventLoops=" + eventLoops
                + ", internalSecret=" + (internalSecret.isEmpty() ? "generated" : "set") + ", internalTimeout=" + internalTimeout
                + ", adminPort=" + adminPort + ", tls=" + tls + ", drainDelay=" + drainDelay + ", drainTimeout=" + drainTimeout + "]";
    }
}
