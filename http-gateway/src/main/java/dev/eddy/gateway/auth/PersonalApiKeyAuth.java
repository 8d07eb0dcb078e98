package dev.eddy.gateway.auth;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authenticates management requests by personal API key, found where PostHog looks for one: {@code Authorization:
 * Bearer <key>}, else a {@code personal_api_key} field of a JSON body, else a {@code personal_api_key} query parameter.
 * The key is hashed and looked up, never compared in plain text. {@link #require} then checks one scope per route.
 */
public final class PersonalApiKeyAuth implements Handler<RoutingContext> {
    private static final Logger LOG = LoggerFactory.getLogger(PersonalApiKeyAuth.class);
    private static final String PRINCIPAL = "eddy.principal";
    private static final String KEY_HASH = "eddy.personal-key-hash";
    /** Where PostHog reads a key outside the header: a field of the body, then a query parameter. */
    private static final String FIELD = "personal_api_key";
    private static final String BEARER = "Bearer ";
    /** Longest header value considered; anything longer is not one of our keys. */
    private static final int MAX_KEY_LENGTH = 200;
    /** Largest body looked into for a key (the management API's limit; a cohort's upload is a form, not looked into). */
    private static final int MAX_SNIFFED_BODY = 1024 * 1024;

    private final PersonalApiKeyRepository keys;
    private final AuthFailureLimiter failures;

    /** @param failures the per-address limiter of failed authentications, shared with the public routes */
    public PersonalApiKeyAuth(final PersonalApiKeyRepository keys, final AuthFailureLimiter failures) {
        this.keys = keys;
        this.failures = failures;
    }

    @Override
    public void handle(final RoutingContext ctx) {
        final String address = AuthFailureLimiter.address(ctx);
        if (failures.blocked(address)) {
            ctx.fail(failures.throttled());
            return;
        }
        authenticate(ctx, address);
    }

    private void authenticate(final RoutingContext ctx, final String address) {
        final String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
        final boolean bearer = header != null && header.regionMatches(true, 0, BEARER, 0, BEARER.length());
        final String given = bearer ? header.substring(BEARER.length()).trim() : outsideTheHeader(ctx);
        if (given == null && (header == null || header.isBlank())) {
            ctx.fail(ApiError.unauthenticated("not_authenticated", "Authentication credentials were not provided."));
            return;
        }
        if (given == null || given.length() > MAX_KEY_LENGTH || !given.startsWith(ApiKeys.PERSONAL_PREFIX)) {
            failures.failed(address);
            ctx.fail(invalidKey());
            return;
        }
        final String hash = ApiKeys.hash(given);
        ctx.put(KEY_HASH, hash);
        keys.findActive(hash).onComplete(found -> {
            if (found.failed()) {
                LOG.warn("cannot check a personal API key: {}", found.cause().getMessage());
                ctx.fail(ApiError.unavailable("database_unavailable", "Cannot check credentials right now; retry.", 5));
            } else if (found.result().isEmpty()) {
                failures.failed(address);
                ctx.fail(invalidKey());
            } else {
                ctx.put(PRINCIPAL, found.result().get());
                ctx.next();
            }
        });
    }

    /** A route step that lets the request on only if its key has {@code scope}. */
    public static Handler<RoutingContext> require(final String scope) {
        return ctx -> {
            if (principal(ctx).allows(scope)) {
                ctx.next();
            } else {
                ctx.fail(ApiError.forbidden("permission_denied", "API key missing required scope '" + scope + "'"));
            }
        };
    }

    /**
     * Looks the request's key up again, for an answer that outlives its request (a live dashboard stream): a key
     * revoked since, or that lost a scope, must end it. Only for a request this handler let through.
     */
    public Supplier<Future<Optional<Principal>>> recheck(final RoutingContext ctx) {
        principal(ctx);
        final String hash = ctx.get(KEY_HASH);
        return () -> keys.lookUp(hash);
    }

    /**
     * A key sent as PostHog also takes one: {@code personal_api_key} in a JSON body (or a form's field), else in the
     * query; null if none.
     */
    private static String outsideTheHeader(final RoutingContext ctx) {
        final String body = ctx.body() == null ? null : ctx.body().asString();
        if (body != null && !body.isBlank() && body.length() <= MAX_SNIFFED_BODY) {
            try {
                final com.fasterxml.jackson.databind.JsonNode field = Json.mapper().readTree(body).path(FIELD);
                if (field.isTextual()) {
                    return field.asText().trim();
                }
            } catch (final java.io.IOException e) {
                // Not JSON: the route answers that; the key may still be in the query.
            }
        }
        final String form = ctx.request().isExpectMultipart() ? ctx.request().getFormAttribute(FIELD) : null;
        if (form != null) {
            return form.trim();
        }
        final String query = ctx.queryParams().get(FIELD);
        return query == null ? null : query.trim();
    }

    public static Principal principal(final RoutingContext ctx) {
        final Principal p = ctx.get(PRINCIPAL);
        if (p == null) {
            throw new IllegalStateException("route " + ctx.request().path() + " has no authentication step");
        }
        return p;
    }

    private static ApiError invalidKey() {
        return ApiError.unauthenticated("authentication_failed", "Personal API key is invalid.");
    }
}
