package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads a Server-Sent Events stream as a browser's EventSource would: {@code event:}/{@code data:} lines up to a blank
 * line make one event; comments ({@code :}) and {@code retry:} are kept apart. Closing it drops the connection.
 */
public final class EventStreamClient implements AutoCloseable {
    /** One event: its name and its data (JSON here). */
    public record Event(String name, String data) {
        public JsonNode json() {
            try {
                return Json.mapper().readTree(data);
            } catch (final IOException e) {
                throw new AssertionError("event data is not JSON: " + data, e);
            }
        }
    }

    private final HttpResponse<InputStream> response;
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;

    private EventStreamClient(final HttpResponse<InputStream> response) {
        this.response = response;
        this.reader = new Thread(this::read, "event-stream-reader");
        reader.setDaemon(true);
        if (response.statusCode() == 200) {
            reader.start();
        }
    }

    /** Opens {@code uri}; a non-200 answer is kept (see {@link #status}, {@link #body}) and nothing is read. */
    public static EventStreamClient open(final HttpClient http, final URI uri, final Map<String, String> headers) throws Exception {
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri).GET().header("Accept", "text/event-stream");
        headers.forEach(request::header);
        return new EventStreamClient(http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream()));
    }

    public int status() {
        return response.statusCode();
    }

    public HttpResponse<InputStream> response() {
        return response;
    }

    /** The error body of a refused stream. */
    public String body() throws IOException {
        try (InputStream in = response.body()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Every line read so far, comments and {@code retry:} included. */
    public List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** The next event, whatever its name, or an assertion error after {@code timeout}. */
    public Event next(final Duration timeout) throws InterruptedException {
        final Event event = events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (event == null) {
            throw new AssertionError("no event within " + timeout + "; lines so far: " + lines());
        }
        return event;
    }

    /** The next event named {@code name}, skipping others. */
    public Event next(final String name, final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            final Event event = next(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            if (event.name().equals(name)) {
                return event;
            }
        }
    }

    /** The next event within {@code timeout}, or null. */
    public Event poll(final Duration timeout) throws InterruptedException {
        return events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String name = "message";
            final StringBuilder data = new StringBuilder();
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
                if (line.isEmpty()) {
                    if (!data.isEmpty()) {
                        events.add(new Event(name, data.toString()));
                    }
                    name = "message";
                    data.setLength(0);
                } else if (line.startsWith("event:")) {
                    name = line.substring("event:".length()).trim();
                } else if (line.startsWith("data:")) {
                    if (!data.isEmpty()) {
                        data.append('\n');
                    }
                    data.append(line.substring("data:".length()).stripLeading());
                }
            }
            lines.add("<end of stream>");
        } catch (final IOException e) {
            lines.add("<closed: " + e + ">");
        }
    }

    /** Whether the server ended the stream. */
    public boolean ended() {
        return lines().contains("<end of stream>");
    }

    @Override
    public void close() throws IOException {
        response.body().close();
    }
}
