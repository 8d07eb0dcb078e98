package dev.eddy.gateway.http;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.handler.CorsHandler;
import java.util.Set;

/**
 * CORS of the public routes (capture, /decide, /flags): browser SDKs call them from any site. As PostHog's capture: the
 * request's origin and requested headers are mirrored (old SDKs and reverse proxies send headers of their own),
 * credentials are allowed, methods GET, POST and OPTIONS. The management API has none: a browser page of another site
 * cannot call it.
 */
public final class PublicCors {
    private PublicCors() {
    }

    public static CorsHandler handler() {
        return CorsHandler.create()
                .addOriginWithRegex(".*")
                .allowCredentials(true)
                .allowedMethods(Set.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.OPTIONS))
                .maxAgeSeconds(3600);
    }
}
