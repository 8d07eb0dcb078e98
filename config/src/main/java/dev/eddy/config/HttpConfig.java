package dev.eddy.config;

import com.typesafe.config.Config;

/**
 * The HTTP server of one process.
 *
 * @param host           interface to bind
 * @param port           port to bind (0 picks a free one, for tests)
 * @param advertisedHost host other instances use to reach this one (Kafka Streams {@code application.server})
 * @param eventLoops     HTTP servers, one per event loop; 0 means one per CPU core
 * @param internalSecret authenticates calls between instances; empty means a random one for this process
 * @param internalTimeout how long a read forwarded to another instance may take
 */
public record HttpConfig(String host, int port, String advertisedHost, int eventLoops, String internalSecret,
                         java.time.Duration internalTimeout) {

    public HttpConfig {
        Validation.require(port >= 0 && port <= 65535, "http.port must be 0..65535, got " + port);
        Validation.require(!host.isBlank(), "http.host must not be blank");
        Validation.require(!advertisedHost.isBlank(), "http.advertised-host must not be blank");
        Validation.require(eventLoops >= 0 && eventLoops <= 256, "http.event-loops must be 0..256");
        Validation.require(internalSecret.isEmpty() || internalSecret.length() >= 16,
                "http.internal-secret must be empty or at least 16 characters");
        Validation.require(!internalTimeout.isNegative() && !internalTimeout.isZero(), "http.internal-timeout-ms must be positive");
    }

    static HttpConfig from(final Config c) {
        return new HttpConfig(c.getString("host"), c.getInt("port"), c.getString("advertised-host"), c.getInt("event-loops"),
                c.getString("internal-secret"), java.time.Duration.ofMillis(c.getLong("internal-timeout-ms")));
    }

    /** How many HTTP servers (event loops) to run. */
    public int effectiveEventLoops() {
        return eventLoops == 0 ? Runtime.getRuntime().availableProcessors() : eventLoops;
    }

    @Override
    public String toString() {
        // The internal secret authenticates instances to each other: never printed.
        return "HttpConfig[host=" + host + ", port=" + port + ", advertisedHost=" + advertisedHost + ", eventLoops=" + eventLoops
                + ", internalSecret=" + (internalSecret.isEmpty() ? "generated" : "set") + ", internalTimeout=" + internalTimeout + "]";
    }
}
