package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What benchmarks do with a running Eddy over HTTP: requests with the personal key, loading {@link InsightsEvents}
 * through {@code /batch/} and waiting until a trend counts them all. Safe to use from several threads.
 */
final class EddyHttp {
    static final long QUERY_TIMEOUT_MS = 120_000;
    private static final long CONNECT_TIMEOUT_MS = 10_000;
    private static final int CONNECT_ATTEMPTS = 3;

    private final HttpClient http;
    private final java.net.http.HttpClient requests;
    private final URI base;
    private final String key;
    /** Requests sent again after they got no connection (see {@link #request}). */
    private final AtomicInteger connectRetries = new AtomicInteger();

    /**
     * @param connections the most requests in flight at once
     */
    EddyHttp(final Vertx vertx, final URI eddy, final String key, final int connections) {
        this.http = vertx.createHttpClient(new HttpClientOptions().setDefaultHost(eddy.getHost()).setDefaultPort(eddy.getPort())
                .setKeepAlive(true), new PoolOptions().setHttp1MaxSize(connections));
        this.requests = java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofMillis(CONNECT_TIMEOUT_MS)).build();
        this.base = eddy;
        this.key = key;
    }

    HttpClient client() {
        return http;
    }

    int connectRetries() {
        return connectRetries.get();
    }

    String post(final String path, final String body) throws Exception {
        return request(HttpMethod.POST, path, body);
    }

    /**
     * A request with the personal key (and a JSON body unless {@code null}), answered 200 (or 201, created): its body.
     * GET and POST (the timed queries) are sent in the calling thread ({@link HttpURLConnection}, connections kept
     * alive); other methods through the JDK's {@link java.net.http.HttpClient}. Both block, bounded by timeouts: the
     * Vert.x pool the loads use was seen, after the dashboard refreshes, to hold a request forever with no connection
     * open to Eddy (Eddy idle, answering curl at once), and a benchmark must end, not hang. Not the JDK's client for
     * timed requests: it hands each exchange to its selector thread and an executor, which cost 0.7–1.0 ms more a
     * request than the calling thread's connection when alternating with DuckDB's two threads (p50 1.75–2.25 vs
     * 1.03–1.20 ms for the same daily trend, 200 each), a cost DuckDB, in process, does not pay. A request that gets
     * no connection within {@value #CONNECT_TIMEOUT_MS} ms is sent again (at most {@value #CONNECT_ATTEMPTS} times,
     * counted in {@link #connectRetries}); one not answered within {@value #QUERY_TIMEOUT_MS} ms fails the run.
     */
    String request(final HttpMethod method, final String path, final String body) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return method == HttpMethod.GET || method == HttpMethod.POST ? inThisThread(method, path, body) : throughClient(method, path, body);
            } catch (final HttpConnectTimeoutException | ConnectException | NoConnection e) {
                if (attempt == CONNECT_ATTEMPTS) {
                    throw e;
                }
                connectRetries.incrementAndGet();
            } catch (final HttpTimeoutException | SocketTimeoutException e) {
                throw new IllegalStateException(method + " " + path + " got no answer within " + QUERY_TIMEOUT_MS + " ms", e);
            }
        }
    }

    /** No connection made within the connect timeout. */
    private static final class NoConnection extends IOException {
        NoConnection(final SocketTimeoutException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private String inThisThread(final HttpMethod method, final String path, final String body) throws IOException {
        final HttpURLConnection connection = (HttpURLConnection) base.resolve(path).toURL().openConnection();
        connection.setConnectTimeout((int) CONNECT_TIMEOUT_MS);
        connection.setReadTimeout((int) QUERY_TIMEOUT_MS);
        connection.setRequestMethod(method.name());
        connection.setRequestProperty("Authorization", "Bearer " + key);
        if (body != null) {
            connection.setDoOutput(true);
            connection.setRequestProperty("Content-Type", "application/json");
        }
        try {
            connection.connect();
        } catch (final SocketTimeoutException e) {
            throw new NoConnection(e);
        }
        if (body != null) {
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body.getBytes(StandardCharsets.UTF_8));
            }
        }
        final int status = connection.getResponseCode();
        // Read to the end and closed, so the connection is kept for the next request.
        try (InputStream in = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
            final String answer = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return answered(method, path, status, answer);
        }
    }

    private String throughClient(final HttpMethod method, final String path, final String body) throws Exception {
        final HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofMillis(QUERY_TIMEOUT_MS))
                .header("Authorization", "Bearer " + key);
        final HttpRequest request = body == null ? builder.method(method.name(), HttpRequest.BodyPublishers.noBody()).build()
                : builder.header("Content-Type", "application/json").method(method.name(), HttpRequest.BodyPublishers.ofString(body)).build();
        final HttpResponse<String> response = requests.send(request, HttpResponse.BodyHandlers.ofString());
        return answered(method, path, response.statusCode(), response.body());
    }

    private static String answered(final HttpMethod method, final String path, final int status, final String body) {
        if (status != 200 && status != 201) {
            throw new IllegalStateException(method + " " + path + " answered " + status + ": " + body);
        }
        return body;
    }

    /** The sum of the series of {@code name} whose labels contain {@code label}; NaN when there is none. */
    static double metricSum(final String metrics, final String name, final String label) {
        double sum = 0;
        boolean found = false;
        for (final String line : metrics.split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(label)) {
                final double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                if (!Double.isNaN(v)) {
                    sum += v;
                    found = true;
                }
            }
        }
        return found ? sum : Double.NaN;
    }

    /** From {@code /metrics}: Eddy's timer of the dashboards it keeps fresh, its count and its total seconds. */
    static double[] keptFreshTimer(final String metrics) {
        return new double[] {metricSum(metrics, "eddy_live_recalculation_seconds_count", "dashboards=\"kept_fresh\""),
                metricSum(metrics, "eddy_live_recalculation_seconds_sum", "dashboards=\"kept_fresh\"")};
    }

    /** The sum of every value of every series of a trend answer. */
    static long total(final JsonNode trend) {
        long total = 0;
        for (final JsonNode item : trend.path("result")) {
            for (final JsonNode v : item.path("data")) {
                total += v.asLong();
            }
        }
        return total;
    }

    /**
     * Sends the events as {@code /batch/}es of {@code batch}, {@code inFlight} requests at a time (each sent when
     * one is answered), and returns once every one is answered 200 (after Kafka's ack); throws on any other answer.
     */
    void sendBatches(final InsightsEvents events, final String token, final int batch, final int inFlight,
                     final boolean historical) throws Exception {
        final Semaphore slots = new Semaphore(inFlight);
        final AtomicReference<String> failure = new AtomicReference<>();
        for (int from = 0; from < events.count && failure.get() == null; from += batch) {
            final Buffer body = Buffer.buffer(events.batch(token, from, Math.min(events.count, from + batch), historical));
            slots.acquire();
            http.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/batch/").setIdleTimeout(QUERY_TIMEOUT_MS))
                    // The body asked for in send's own callback: chained after it, the response could end before
                    // anyone reads it, and its future would never complete (a load seen hanging with Eddy idle).
                    .compose(req -> req.putHeader("Content-Type", "application/json").send(body)
                            .compose(resp -> resp.body().map(b -> resp.statusCode() == 200 ? null : "/batch/ answered " + resp.statusCode() + ": " + b)))
                    .timeout(QUERY_TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS)
                    .onComplete(r -> {
                        if (r.failed() || r.result() != null) {
                            failure.compareAndSet(null, r.failed() ? "/batch/ failed: " + r.cause() : r.result());
                        }
                        slots.release();
                    });
        }
        slots.acquire(inFlight);
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
    }

    /**
     * Waits until the all-events trend {@code allEvents} counts every one of the events, asking every {@code
     * pollMillis}, and printing progress every ten seconds. Unfiltered counting trends read the hourly counts, not
     * the events: asking often costs the stream threads it waits for little.
     *
     * @param start when the load began ({@link System#nanoTime}), for the progress lines
     */
    void awaitCounted(final InsightsEvents events, final String allEvents, final long start, final long pollMillis,
                      final long timeoutSeconds) throws Exception {
        final long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        long lastReport = System.nanoTime();
        long visible = 0;
        while (visible != events.count) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + visible + " of " + events.count + " events in Eddy's trends after " + timeoutSeconds + " s");
            }
            Thread.sleep(pollMillis);
            visible = total(Json.mapper().readTree(post("/api/projects/1/insights/trend/", allEvents)));
            if (System.nanoTime() - lastReport > 10_000_000_000L) {
                System.out.printf(Locale.ROOT, "  %,d of %,d events in Eddy's trends after %.0f s%n", visible, events.count, (System.nanoTime() - start) / 1e9);
                lastReport = System.nanoTime();
            }
        }
    }
}
