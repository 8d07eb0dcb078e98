package dev.eddy.config;

import com.typesafe.config.Config;

/**
 * The HTTP server of one process.
 *
 * @param host           interface to bind
 * @param port           port to bind (0 picks a free one, for tests)
 * @param advertisedHost host other instances use to reach this one (Kafka Streams {@code application.server})
 * @param eventLoops     HTTP servers, one per event loop; 0 means one per CPU core
 */
public record HttpConfig(String host, int port, String advertisedHost, int eventLoops) {

    public HttpConfig {
        Validation.require(port >= 0 && port <= 65535, "http.port must be 0..65535, got " + port);
        Validation.require(!host.isBlank(), "http.host must not be blank");
        Validation.require(!advertisedHost.isBlank(), "http.advertised-host must not be blank");
        Validation.require(eventLoops >= 0 && eventLoops <= 256, "http.event-loops must be 0..256");
    }

    static HttpConfig from(final Config c) {
        return new HttpConfig(c.getString("host"), c.getInt("port"), c.getString("advertised-host"), c.getInt("event-loops"));
    }

    /** How many HTTP servers (event loops) to run. */
    public int effectiveEventLoops() {
        return eventLoops == 0 ? Runtime.getRuntime().availableProcessors() : eventLoops;
    }
}
