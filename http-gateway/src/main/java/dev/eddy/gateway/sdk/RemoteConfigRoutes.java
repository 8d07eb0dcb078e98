package dev.eddy.gateway.sdk;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.auth.Secrets;
import dev.eddy.gateway.capture.ProjectTokens;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.PublicCors;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.function.LongFunction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * PostHog's remote config routes, public and keyed by the project API key in the path: {@code GET /array/:token/config}
 * (JSON), {@code GET /array/:token/config.js}, the script posthog-js loads first, which puts the config in
 * {@code window._POSTHOG_REMOTE_CONFIG[token]}, and {@code GET /array/:token/array.js}, posthog-js's snippet bundle with
 * that script after it (a site's one script). Cacheable ({@code Cache-Control}, an {@code ETag} answered with 304),
 * with CORS for every origin. A token of the wrong form is a 400, an unknown one a 404, as in PostHog.
 */
public final class RemoteConfigRoutes {
    /** PostHog's check of a token in these paths. */
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{1,200}");
    /**
     * How long a browser may reuse the config without asking. PostHog says 300 s; a minute makes a project's first
     * flag reach its pages (through {@code hasFeatureFlags}) soon after it is created, and asking again costs a 304.
     */
    private static final String CACHE_CONTROL = "public, max-age=60";
    private static final String JAVASCRIPT = "application/javascript";

    private final ProjectTokens tokens;
    private final AuthFailureLimiter failures;
    /** Whether a project has an active flag (then SDKs are told to ask for flags). */
    private final LongFunction<Future<Boolean>> hasActiveFlags;
    /** posthog-js's {@code array.js}, read once. */
    private final byte[] arrayJs;
    /**
     * Answers as rendered, per route, project and {@code hasFeatureFlags}: every page load asks, and {@code array.js}
     * is 380 KB to copy and hash. Bounded by their bytes.
     */
    private final Cache<Key, Answer> answers = Caffeine.newBuilder().maximumWeight(64L * 1024 * 1024)
            .weigher((Key key, Answer answer) -> answer.body().length()).build();

    public RemoteConfigRoutes(final ProjectTokens tokens, final AuthFailureLimiter failures, final LongFunction<Future<Boolean>> hasActiveFlags,
                              final PostHogJsBundles bundles) {
        this.tokens = tokens;
        this.failures = failures;
        this.hasActiveFlags = hasActiveFlags;
        this.arrayJs = bundles.read("array.js");
    }

    /** What a route answers. */
    private enum Kind { JSON, SCRIPT, BUNDLE }

    public void mount(final Router router) {
        mount(router, "/array/:token/config", Kind.JSON);
        mount(router, "/array/:token/config.js", Kind.SCRIPT);
        mount(router, "/array/:token/array.js", Kind.BUNDLE);
    }

    private void mount(final Router router, final String path, final Kind kind) {
        router.route(path).method(HttpMethod.GET).method(HttpMethod.HEAD).method(HttpMethod.OPTIONS)
                .handler(PublicCors.handler()).handler(ctx -> answer(ctx, kind));
    }

    private void answer(final RoutingContext ctx, final Kind kind) {
        final String token = ctx.pathParam("token");
        if (!TOKEN.matcher(token).matches()) {
            throw ApiError.badRequest("invalid_token", "Invalid token.", "token");
        }
        tokens.authenticate(token, AuthFailureLimiter.address(ctx), failures, Vertx.currentContext())
                .compose(project -> project.isPresent()
                        ? hasActiveFlags.apply(project.get())
                        : Future.failedFuture(ApiError.notFound("No project has this API key.")))
                .onSuccess(hasFlags -> send(ctx, answers.get(new Key(kind, token, hasFlags), this::render)))
                .onFailure(ctx::fail);
    }

    /** An answer as sent: its bytes, their content type and their ETag. */
    private record Answer(Buffer body, String contentType, String etag) {
    }

    private record Key(Kind kind, String token, boolean hasFlags) {
    }

    private Answer render(final Key key) {
        final byte[] body = switch (key.kind()) {
            case JSON -> json(key.token(), key.hasFlags());
            case SCRIPT -> script(key.token(), key.hasFlags());
            case BUNDLE -> bundle(script(key.token(), key.hasFlags()));
        };
        final String etag = "\"" + HexFormat.of().formatHex(Secrets.sha256(body), 0, 16) + "\"";
        return new Answer(Buffer.buffer(body), key.kind() == Kind.JSON ? "application/json" : JAVASCRIPT, etag);
    }

    private static byte[] json(final String token, final boolean hasFlags) {
        try {
            return Json.mapper().writeValueAsBytes(RemoteConfig.of(token, hasFlags));
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a remote config is always writable", e);
        }
    }

    /** PostHog's {@code config.js}: the config, and the site apps (Eddy has none), for posthog-js to pick up. */
    private static byte[] script(final String token, final boolean hasFlags) {
        final String config = new String(json(token, hasFlags), StandardCharsets.UTF_8);
        return ("(function() {\n"
                + "  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n"
                + "  window._POSTHOG_REMOTE_CONFIG['" + token + "'] = {\n"
                + "    config: " + config + ",\n"
                + "    siteApps: []\n"
                + "  }\n"
                + "})();").getBytes(StandardCharsets.UTF_8);
    }

    private byte[] bundle(final byte[] script) {
        final byte[] joined = Arrays.copyOf(arrayJs, arrayJs.length + 2 + script.length);
        joined[arrayJs.length] = '\n';
        joined[arrayJs.length + 1] = '\n';
        System.arraycopy(script, 0, joined, arrayJs.length + 2, script.length);
        return joined;
    }

    private static void send(final RoutingContext ctx, final Answer answer) {
        ctx.response().putHeader(HttpHeaders.CACHE_CONTROL, CACHE_CONTROL).putHeader(HttpHeaders.ETAG, answer.etag())
                .putHeader(HttpHeaders.VARY, "Origin");
        if (answer.etag().equals(ctx.request().getHeader(HttpHeaders.IF_NONE_MATCH))) {
            ctx.response().setStatusCode(304).end();
            return;
        }
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, answer.contentType()).end(answer.body());
    }
}
