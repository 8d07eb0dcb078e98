package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.config.EddyConfig;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * HTTP calls to a gateway under test, whichever way it runs: a whole {@link TestEddy} on Kafka and PostgreSQL, or the
 * routes alone ({@code RouteTier}). Tests written against this run on either.
 */
public abstract class ApiClient {
    private final HttpClient http;

    protected ApiClient(final HttpClient http) {
        this.http = http;
    }

    /** Where {@code path} is served. */
    public abstract URI uri(String path);

    /** The configuration the gateway runs with. */
    public abstract EddyConfig config();

    /** Project 1's project API key, made by the first-start bootstrap. */
    public abstract String projectToken();

    /** The bootstrap admin's personal API key (scope {@code *}). */
    public abstract String personalKey();

    public HttpResponse<String> post(final String path, final String body) {
        return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build());
    }

    public HttpResponse<String> get(final String path, final Map<String, String> headers) {
        final HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        headers.forEach(b::header);
        return send(b.build());
    }

    /** GET with the bootstrap personal API key. */
    public HttpResponse<String> getAuthorized(final String path) {
        return get(path, Map.of("Authorization", "Bearer " + personalKey()));
    }

    /** A JSON request with {@code key} as the bearer; a null body sends none. */
    public HttpResponse<String> request(final String key, final String method, final String path, final String body) {
        return send(HttpRequest.newBuilder(uri(path))
                .header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    /** Every event name counted in project 1 ({@code /event_counts/}), with its count; empty while not answerable. */
    public Map<String, Long> eventCounts() {
        final HttpResponse<String> response = getAuthorized("/api/projects/1/event_counts/");
        final Map<String, Long> counts = new HashMap<>();
        if (response.statusCode() == 200) {
            json(response).get("results").forEach(r -> counts.merge(r.get("event").asText(), r.get("count").asLong(), Long::sum));
        }
        return counts;
    }

    public HttpClient http() {
        return http;
    }

    public HttpResponse<String> send(final HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (final IOException e) {
            throw new IllegalStateException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static JsonNode json(final HttpResponse<String> response) {
        try {
            return Json.mapper().readTree(response.body());
        } catch (final IOException e) {
            throw new AssertionError("not JSON: " + response.body(), e);
        }
    }

    /** Polls {@code condition} every 100 ms until it holds, or fails naming {@code what}. */
    public void waitUntil(final BooleanSupplier condition, final Duration timeout, final String what) throws InterruptedException {
        waitUntil(condition, timeout, () -> what);
    }

    /** As {@link #waitUntil(BooleanSupplier, Duration, String)}, describing the state at the time it gave up. */
    public void waitUntil(final BooleanSupplier condition, final Duration timeout, final java.util.function.Supplier<String> what)
            throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for: " + what.get());
            }
            Thread.sleep(100);
        }
    }
}
