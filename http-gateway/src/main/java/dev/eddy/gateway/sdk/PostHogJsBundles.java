package dev.eddy.gateway.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Set;

/**
 * posthog-js's browser bundles, served as PostHog's asset host serves them, so a site needs nothing but Eddy: the
 * snippet's {@code /static/array.js}, and the scripts posthog-js loads from {@code api_host} when its remote config
 * asks for them ({@code /static/surveys.js?v=…}, or {@code /static/1.449.2/surveys.js} with strict script
 * versioning). The build copies them from the npm package pinned in {@code src/main/web} into
 * {@code webroot/posthog-js/} with a list ({@code bundles.json}); a name not on it goes on to the next route (the
 * shared dashboard page's assets share {@code /static/}). Every version's path gets the bundled version's file,
 * which is what posthog-js falls back to when a versioned path is missing. Scripts load with {@code crossorigin}, so
 * they carry CORS for every origin.
 */
public final class PostHogJsBundles {
    private static final String ROOT = "webroot/posthog-js/";
    private static final String LIST = ROOT + "bundles.json";
    /** The bundled version's own path: that file never changes. */
    private static final String IMMUTABLE = "public, max-age=31536000, immutable";
    /** A path without a version (the snippet's array.js) follows Eddy's upgrades within an hour. */
    private static final String UNVERSIONED = "public, max-age=3600";

    private final String version;
    private final Set<String> files;

    private PostHogJsBundles(final String version, final Set<String> files) {
        this.version = version;
        this.files = files;
    }

    /** The bundles as the build left them; refuses to start without them (a build that skipped the web step). */
    public static PostHogJsBundles load() {
        try (InputStream in = PostHogJsBundles.class.getClassLoader().getResourceAsStream(LIST)) {
            if (in == null) {
                throw new IllegalStateException(LIST + " is not on the classpath: build http-gateway with Maven, whose "
                        + "generate-resources phase copies posthog-js's bundles (src/main/web, npm ci, npm run build)");
            }
            final JsonNode list = Json.mapper().readTree(in);
            final Set<String> files = new HashSet<>();
            list.get("files").forEach(f -> files.add(f.asText()));
            return new PostHogJsBundles(list.get("version").asText(), Set.copyOf(files));
        } catch (final IOException e) {
            throw new UncheckedIOException("reading " + LIST, e);
        }
    }

    /** The posthog-js version served. */
    public String version() {
        return version;
    }

    /** The bytes of one bundle. */
    byte[] read(final String file) {
        try (InputStream in = PostHogJsBundles.class.getClassLoader().getResourceAsStream(ROOT + file)) {
            if (in == null || !files.contains(file)) {
                throw new IllegalStateException(ROOT + file + " is not on the classpath");
            }
            return in.readAllBytes();
        } catch (final IOException e) {
            throw new UncheckedIOException("reading " + ROOT + file, e);
        }
    }

    public void mount(final Router router) {
        router.route("/static/:file").method(HttpMethod.GET).method(HttpMethod.HEAD)
                .handler(ctx -> serve(ctx, UNVERSIONED));
        router.route("/static/:version/:file").method(HttpMethod.GET).method(HttpMethod.HEAD)
                .handler(ctx -> serve(ctx, version.equals(ctx.pathParam("version")) ? IMMUTABLE : UNVERSIONED));
    }

    private void serve(final RoutingContext ctx, final String cacheControl) {
        final String file = ctx.pathParam("file");
        if (!files.contains(file)) {
            ctx.next();
            return;
        }
        ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/javascript; charset=utf-8")
                .putHeader(HttpHeaders.CACHE_CONTROL, cacheControl)
                .putHeader(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN, "*")
                .putHeader("X-Content-Type-Options", "nosniff")
                .sendFile(ROOT + file);
    }
}
