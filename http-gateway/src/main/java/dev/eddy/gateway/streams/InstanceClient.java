package dev.eddy.gateway.streams;

import dev.eddy.topology.Endpoint;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;

/**
 * How one instance calls another's {@code /_internal} routes: keep-alive connections (plain HTTP to the admin port, or
 * HTTPS pinned to the deployment's certificate, as {@code transport} says), every request signed with the internal
 * secret, marked with the internal protocol's version ({@link InternalProtocol}) and bounded by its own deadline
 * (connect and idle). Callers map a failed call to their own answer; an answer
 * of any status is theirs to read.
 */
public final class InstanceClient {
    private final HttpClient client;
    private final InternalSecret secret;

    /** The status and body of an instance's answer. */
    public record Answer(int status, Buffer body) {
    }

    /**
     * @param connections keep-alive connections to each instance (callers that must not wait behind each other's
     *                    long requests, keyed reads behind scatters, get clients of their own)
     */
    public InstanceClient(final Vertx vertx, final InternalSecret secret, final HttpClientOptions transport, final int connections) {
        this.client = vertx.createHttpClient(new HttpClientOptions(transport).setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(connections));
        this.secret = secret;
    }

    public Future<Answer> get(final Endpoint to, final String uri, final Duration deadline) {
        return call(options(HttpMethod.GET, to, uri, deadline), null);
    }

    /** A JSON body. */
    public Future<Answer> post(final Endpoint to, final String uri, final String body, final Duration deadline) {
        return call(options(HttpMethod.POST, to, uri, deadline).putHeader("Content-Type", "application/json"), Buffer.buffer(body));
    }

    private RequestOptions options(final HttpMethod method, final Endpoint to, final String uri, final Duration deadline) {
        final long millis = Math.max(1, deadline.toMillis());
        return InternalProtocol.versioned(secret.sign(new RequestOptions().setMethod(method).setHost(to.host()).setPort(to.port()).setURI(uri)
                .setConnectTimeout(millis).setIdleTimeout(millis)));
    }

    private Future<Answer> call(final RequestOptions options, final Buffer body) {
        // The body is asked for in send's own callback: chained after it, from a thread that is not the request's
        // event loop, the response could end before anyone reads it, and never complete.
        return client.request(options).compose(request -> (body == null ? request.send() : request.send(body))
                .compose(response -> response.body().map(answer -> new Answer(response.statusCode(), answer))));
    }
}
