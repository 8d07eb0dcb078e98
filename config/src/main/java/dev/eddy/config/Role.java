package dev.eddy.config;

import java.util.Locale;

/** Which parts of Eddy one process runs. */
public enum Role {
    /** Gateway and one streams instance in one process: the embedded default for one machine. */
    ALL,
    /** HTTP routes only; interactive queries go to the streams instances over their internal routes. */
    GATEWAY,
    /** A Kafka Streams instance with its internal query routes, health and metrics. */
    STREAMS;

    public boolean runsGateway() {
        return this != STREAMS;
    }

    public boolean runsStreams() {
        return this != GATEWAY;
    }

    public static Role parse(final String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException e) {
            throw new ConfigException("role must be one of all, gateway, streams; got '" + value + "'");
        }
    }
}
