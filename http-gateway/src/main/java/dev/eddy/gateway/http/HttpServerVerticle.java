package dev.eddy.gateway.http;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.util.function.Function;

/**
 * One HTTP server on its own event loop. Eddy deploys one per event loop on the same port (Vert.x spreads
 * the connections over them), so parsing and routing use every core.
 */
public final class HttpServerVerticle extends VerticleBase {
    private final HttpServerOptions options;
    private final int port;
    private final Function<Vertx, Router> routes;

    public HttpServerVerticle(final HttpServerOptions options, final int port, final Function<Vertx, Router> routes) {
        this.options = options;
        this.port = port;
        this.routes = routes;
    }

    @Override
    public Future<?> start() {
        return vertx.createHttpServer(options)
                .requestHandler(routes.apply(vertx))
                .listen(port);
    }
}
