package dev.eddy.gateway.http;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.handler.CorsHandler;
import java.util.Set;

/** CORS of the public routes (capture, /decide, /flags): browser SDKs call them from any site, as PostHog allows. */
public final class PublicCors {
    private PublicCors() {
    }

    public static CorsHandler handler() {
        return CorsHandler.create()
                .addOriginWithRegex(".*")
                .allowCredentials(true)
                .allowedMethods(Set.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.OPTIONS))
                .allowedHeaders(Set.of("Content-Type", "Content-Encoding", "Authorization", "X-Requested-With"))
                .maxAgeSeconds(3600);
    }
}
