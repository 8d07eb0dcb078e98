package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.CommittedRecords;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.topology.EddyTopics;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a stopping Eddy (SIGTERM) does with its traffic: readiness turns 503 while it keeps serving for
 * {@code http.drain-delay-ms}, then it refuses new connections and lets requests in flight finish before Kafka's clients
 * close, so a rolling restart loses no request that had started.
 */
@ExtendWith(SharedInfrastructure.class)
class ShutdownDrainIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path state;

    @Test
    void readinessTurnsUnavailableWhileTheProcessStillServes(final Infrastructure infra) throws Exception {
        final TestEddy eddy = TestEddy.start(infra, state, Map.of("EDDY_HTTP_DRAIN_DELAY_MS", "3000"));
        final CompletableFuture<Void> stopping = CompletableFuture.runAsync(eddy::close);
        try {
            eddy.waitUntil(() -> eddy.get("/_health/ready", Map.of()).statusCode() == 503, WAIT, "readiness answering 503");
            assertThat(TestEddy.json(eddy.get("/_health/ready", Map.of())).path("status").asText()).isEqualTo("draining");
            assertThat(eddy.get("/_health/gateway", Map.of()).statusCode()).isEqualTo(503);
            assertThat(eddy.get("/_health/live", Map.of()).statusCode()).as("alive: not to be restarted").isEqualTo(200);
            final String uuid = UUID.randomUUID().toString();
            final HttpResponse<String> captured = eddy.post("/capture/", event(eddy, uuid));
            assertThat(captured.statusCode()).as("capture during the delay").isEqualTo(200);
            assertThat(stopping).as("still serving within the delay").isNotDone();
            stopping.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(ingested(infra, eddy, uuid)).isTrue();
        } finally {
            stopping.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @Test
    void aRequestInFlightFinishesAndReachesKafka(final Infrastructure infra) throws Exception {
        final TestEddy eddy = TestEddy.start(infra, state, Map.of("EDDY_HTTP_DRAIN_TIMEOUT_MS", "20000"));
        final String uuid = UUID.randomUUID().toString();
        final byte[] body = event(eddy, uuid).getBytes(StandardCharsets.UTF_8);
        final int half = body.length / 2;
        CompletableFuture<Void> stopping = null;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", eddy.eddy().port()), 5000);
            socket.setSoTimeout((int) WAIT.toMillis());
            final OutputStream out = socket.getOutputStream();
            out.write(("POST /capture/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, 0, half);
            out.flush();
            // The request is on the server's event loop, half read, when the process is told to stop.
            Thread.sleep(200);
            stopping = CompletableFuture.runAsync(eddy::close);
            eddy.waitUntil(() -> !accepts(eddy.eddy().port()), WAIT, "the server refusing new connections");
            assertThat(stopping).as("waiting for the request in flight").isNotDone();
            out.write(body, half, body.length - half);
            out.flush();
            final String response = readResponse(socket.getInputStream());
            assertThat(response).startsWith("HTTP/1.1 200").contains("{\"status\":1}");
            stopping.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            if (stopping == null) {
                eddy.close();
            } else {
                stopping.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        }
        assertThat(ingested(infra, eddy, uuid)).as("the 200 meant Kafka has it").isTrue();
    }

    private static String event(final TestEddy eddy, final String uuid) {
        return "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"drained\",\"distinct_id\":\"d-" + uuid + "\",\"uuid\":\"" + uuid + "\"}";
    }

    private static boolean ingested(final Infrastructure infra, final TestEddy eddy, final String uuid) {
        return CommittedRecords.readAll(infra.kafkaBootstrap(), eddy.topic(EddyTopics.INGEST)).stream()
                .anyMatch(r -> new String(r.value(), StandardCharsets.UTF_8).contains(uuid));
    }

    private static boolean accepts(final int port) {
        try (Socket probe = new Socket()) {
            probe.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        } catch (final IOException refused) {
            return false;
        }
    }

    /** The status line, headers and the body of a {@code Content-Length} response. */
    private static String readResponse(final InputStream in) throws IOException {
        final StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            final int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        final java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        return head + (length.find() ? new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8) : "");
    }
}
