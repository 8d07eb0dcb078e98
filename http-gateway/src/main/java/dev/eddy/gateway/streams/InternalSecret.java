package dev.eddy.gateway.streams;

import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.auth.Secrets;
import dev.eddy.gateway.http.ApiError;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.RoutingContext;

/**
 * The deployment's shared secret that authenticates instances to each other on the {@code /_internal} routes: sent
 * in a header, compared in constant time.
 */
public final class InternalSecret {
    public static final String HEADER = "X-Eddy-Internal-Secret";

    private final String value;
    private final AuthFailureLimiter failures;

    /** @param failures the per-address limiter of failed authentications: a wrong secret counts as one */
    public InternalSecret(final String value, final AuthFailureLimiter failures) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the internal secret must not be empty");
        }
        this.value = value;
        this.failures = failures;
    }

    /** Adds the secret to a request to another instance. */
    public RequestOptions sign(final RequestOptions request) {
        return request.putHeader(HEADER, value);
    }

    /**
     * @throws ApiError 401 unless the request carries the secret; 429 when its address failed too often
     */
    public void require(final RoutingContext ctx) {
        final String address = AuthFailureLimiter.address(ctx);
        if (failures.blocked(address)) {
            throw failures.throttled();
        }
        if (!accepts(ctx.request().getHeader(HEADER))) {
            failures.failed(address);
            throw ApiError.unauthenticated("invalid_internal_secret", "This route is for Eddy's own instances.");
        }
    }

    /** Whether {@code given} (a header's value, null when absent) is the secret; constant time. */
    public boolean accepts(final String given) {
        return Secrets.equal(value, given);
    }

    @Override
    public String toString() {
        return "InternalSecret[***]";
    }
}
