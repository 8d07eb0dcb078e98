package dev.eddy.gateway.streams;

import dev.eddy.gateway.http.ApiError;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * The deployment's shared secret that authenticates instances to each other on the {@code /_internal} routes: sent
 * in a header, compared in constant time.
 */
public final class InternalSecret {
    public static final String HEADER = "X-Eddy-Internal-Secret";

    private final String value;
    private final byte[] bytes;

    public InternalSecret(final String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the internal secret must not be empty");
        }
        this.value = value;
        this.bytes = value.getBytes(StandardCharsets.UTF_8);
    }

    /** Adds the secret to a request to another instance. */
    public RequestOptions sign(final RequestOptions request) {
        return request.putHeader(HEADER, value);
    }

    /**
     * @throws ApiError 401 unless the request carries the secret
     */
    public void require(final RoutingContext ctx) {
        final String given = ctx.request().getHeader(HEADER);
        if (given == null || !MessageDigest.isEqual(bytes, given.getBytes(StandardCharsets.UTF_8))) {
            throw ApiError.unauthenticated("invalid_internal_secret", "This route is for Eddy's own instances.");
        }
    }
}
