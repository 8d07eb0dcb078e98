package dev.eddy.gateway.http;

import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.RoutingContext;

/**
 * Where a request comes from, as PostHog reads it: for the {@code $ip} of captured events and the {@code $geoip_*}
 * properties of flags. The one place {@code X-Forwarded-For} is read (rate limits of failed authentications use the
 * connection's own address instead: a guesser would rotate the header at will).
 */
public final class ClientAddress {
    private ClientAddress() {
    }

    /** The client address of {@code ctx}'s request (see {@link #of(String, String)}), or null when there is none. */
    public static String of(final RoutingContext ctx) {
        final SocketAddress remote = ctx.request().remoteAddress();
        return of(remote == null ? null : remote.hostAddress() != null ? remote.hostAddress() : remote.host(),
                ctx.request().getHeader("X-Forwarded-For"));
    }

    /**
     * The client address PostHog attributes a request to: the first entry of {@code X-Forwarded-For} when that
     * header is set, else the socket's remote address; either with a port stripped ({@code 1.2.3.4:5678} as some
     * proxies send it, {@code [2001:db8::1]:443}). Not validated: a GeoIP lookup ignores what is not an address.
     *
     * @param remoteAddress the socket's remote host, may be null
     * @param xForwardedFor the {@code X-Forwarded-For} header, may be null
     * @return the address, or null when neither gives one
     */
    public static String of(final String remoteAddress, final String xForwardedFor) {
        if (xForwardedFor != null) {
            final int comma = xForwardedFor.indexOf(',');
            final String first = withoutPort(comma < 0 ? xForwardedFor : xForwardedFor.substring(0, comma));
            if (!first.isEmpty()) {
                return first;
            }
        }
        if (remoteAddress != null) {
            final String remote = withoutPort(remoteAddress);
            if (!remote.isEmpty()) {
                return remote;
            }
        }
        return null;
    }

    private static String withoutPort(final String raw) {
        final String host = raw.strip();
        if (host.startsWith("[")) {
            final int close = host.indexOf(']');
            return close > 0 ? host.substring(1, close).strip() : host;
        }
        // One colon is host:port; an IPv6 address has at least two (PostHog strips the same way).
        final int colon = host.indexOf(':');
        return colon >= 0 && colon == host.lastIndexOf(':') ? host.substring(0, colon).strip() : host;
    }

}
