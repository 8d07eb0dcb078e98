package dev.eddy.gateway.http;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One HTTP server on its own event loop. Eddy deploys one per event loop on the same port (Vert.x spreads
 * the connections over them), so parsing and routing use every core. Undeployed, it stops accepting connections and
 * lets the requests in flight finish for up to {@code drainTimeout} (idle keep-alive connections are closed at once,
 * busy ones after their response) before it closes what is left.
 */
public final class HttpServerVerticle extends VerticleBase {
    private final HttpServerOptions options;
    private final int port;
    private final Function<Vertx, Router> routes;
    private final Duration drainTimeout;
    private HttpServer server;

    public HttpServerVerticle(final HttpServerOptions options, final int port, final Function<Vertx, Router> routes,
                              final Duration drainTimeout) {
        this.options = options;
        this.port = port;
        this.routes = routes;
        this.drainTimeout = drainTimeout;
    }

    @Override
    public Future<?> start() {
        server = vertx.createHttpServer(options).requestHandler(routes.apply(vertx));
        return server.listen(port);
    }

    @Override
    public Future<?> stop() {
        return server.shutdown(drainTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }
}
