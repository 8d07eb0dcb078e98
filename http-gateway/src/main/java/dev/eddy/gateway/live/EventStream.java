package dev.eddy.gateway.live;

import io.vertx.core.Context;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;

/**
 * A Server-Sent Events response: {@code text/event-stream}, never compressed or cached (a proxy must pass each event
 * on as it comes), opened with a {@code retry:} hint. Events and comments may be written from any thread: each write
 * runs on the connection's context, and stops once the response ended or the connection closed.
 */
final class EventStream implements LiveDashboards.Sink {
    /** How long a client waits before reconnecting after the stream ended (EventSource's {@code retry}). */
    static final int RETRY_MS = 2000;

    private final HttpServerResponse response;
    private final Context context;

    /** @param context the context of the request's connection */
    EventStream(final HttpServerResponse response, final Context context) {
        this.response = response;
        this.context = context;
    }

    /** Sends the headers and the retry hint; call on the connection's context. */
    void start() {
        response.setChunked(true)
                .putHeader(HttpHeaders.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
                // Compression would hold events back in the compressor's buffer.
                .putHeader(HttpHeaders.CONTENT_ENCODING, HttpHeaders.IDENTITY)
                .putHeader("X-Accel-Buffering", "no");
        response.write("retry: " + RETRY_MS + "\n\n");
    }

    @Override
    public void event(final String name, final String data) {
        write("event: " + name + "\ndata: " + data + "\n\n");
    }

    @Override
    public void comment(final String text) {
        write(": " + text + "\n\n");
    }

    @Override
    public boolean congested() {
        return response.writeQueueFull();
    }

    @Override
    public void close() {
        context.runOnContext(v -> {
            if (open()) {
                response.end();
            }
        });
    }

    private void write(final String text) {
        context.runOnContext(v -> {
            if (open()) {
                response.write(text);
            }
        });
    }

    private boolean open() {
        return !response.ended() && !response.closed();
    }
}
