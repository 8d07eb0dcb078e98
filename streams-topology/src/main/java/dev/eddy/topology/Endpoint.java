package dev.eddy.topology;

/**
 * Where an instance answers the others (its advertised {@code host:port}), as Kafka Streams' metadata names it, in
 * terms that carry no Kafka Streams type.
 */
public record Endpoint(String host, int port) {
    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    /**
     * The endpoint {@code host:port} names.
     *
     * @throws IllegalArgumentException when it names none
     */
    public static Endpoint of(final String address) {
        final int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("not host:port: " + address);
        }
        try {
            return new Endpoint(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("not host:port: " + address, e);
        }
    }

    static Endpoint of(final org.apache.kafka.streams.state.HostInfo host) {
        return new Endpoint(host.host(), host.port());
    }

    @Override
    public String toString() {
        return address();
    }
}
