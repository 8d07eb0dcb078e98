package dev.eddy.gateway.sharing;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;

/**
 * The page a browser gets at {@code /shared/:access_token} (a shared dashboard, drawn live): the HTML and its assets
 * as the build bundled them from {@code src/main/web} into {@code webroot/} on the classpath. The assets' names carry
 * their content hash, so they are cached for a year; the HTML, which names them, is never cached. Nothing the page
 * uses comes from anywhere but this server ({@code Content-Security-Policy} holds it to that).
 */
public final class SharedPage {
    public static final String HTML = "webroot/shared-dashboard.html";
    /** Where the hashed assets are served from, and where they are on the classpath. */
    public static final String ASSETS = "/static/*";
    private static final String ASSETS_ROOT = "webroot/static";
    private static final long YEAR_SECONDS = 365L * 24 * 3600;
    private static final String POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

    private final Buffer html;

    private SharedPage(final Buffer html) {
        this.html = html;
    }

    /** The page as the build left it; refuses to start without it (a build that skipped the web bundle). */
    public static SharedPage load() {
        try (InputStream in = SharedPage.class.getClassLoader().getResourceAsStream(HTML)) {
            if (in == null) {
                throw new IllegalStateException(HTML + " is not on the classpath: build http-gateway with Maven, whose "
                        + "generate-resources phase bundles src/main/web (npm ci, npm run build)");
            }
            return new SharedPage(Buffer.buffer(in.readAllBytes()));
        } catch (final IOException e) {
            throw new UncheckedIOException("reading " + HTML, e);
        }
    }

    /** Serves the hashed assets. */
    public void mountAssets(final Router router) {
        router.get(ASSETS).handler(StaticHandler.create(ASSETS_ROOT).setCachingEnabled(true).setMaxAgeSeconds(YEAR_SECONDS)
                .setDirectoryListing(false).setIncludeHidden(false));
    }

    /** Answers the page. */
    public void send(final RoutingContext ctx) {
        ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "text/html; charset=utf-8")
                .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
                .putHeader("Content-Security-Policy", POLICY)
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Referrer-Policy", "no-referrer")
                .end(html);
    }

    /**
     * Whether a request's {@code Accept} header prefers HTML to JSON: it names {@code text/html} with a quality above
     * zero and at least that of {@code application/json}. A browser's navigation does; API clients (no header,
     * {@code *}{@code /*}, {@code application/json}) keep getting JSON, as before the page existed.
     */
    public static boolean prefersHtml(final String accept) {
        if (accept == null || accept.isBlank()) {
            return false;
        }
        final double html = quality(accept, "text/html");
        return html > 0 && html >= quality(accept, "application/json");
    }

    /** The quality the header gives {@code type} by name (wildcards do not count); 0 when not named. */
    static double quality(final String accept, final String type) {
        double best = 0;
        for (final String range : accept.split(",")) {
            final String[] parts = range.split(";");
            if (!parts[0].trim().toLowerCase(Locale.ROOT).equals(type)) {
                continue;
            }
            double q = 1;
            for (int i = 1; i < parts.length; i++) {
                final String parameter = parts[i].trim();
                if (parameter.toLowerCase(Locale.ROOT).startsWith("q=")) {
                    try {
                        q = Double.parseDouble(parameter.substring(2).trim());
                    } catch (final NumberFormatException e) {
                        q = 0;
                    }
                }
            }
            best = Math.max(best, q);
        }
        return best;
    }
}
