package dev.eddy.benchmarks;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;

/** What benchmarks ask a running Eddy about its stream threads. */
final class EddyStreams {
    private EddyStreams() {
    }

    /**
     * Waits until the stream threads have processed everything the load produced (their processed-records total
     * stops moving for three seconds, or ten minutes pass), so a measurement is of the queries, not of the queries
     * beside a busy stream thread.
     */
    static void awaitIdle(final HttpClient http) throws Exception {
        double previous = -1;
        int still = 0;
        final long deadline = System.nanoTime() + 600_000_000_000L;
        while (still < 3 && System.nanoTime() < deadline) {
            final String metrics = http.request(HttpMethod.GET, "/metrics").compose(req -> req.send())
                    .compose(resp -> resp.body()).map(Buffer::toString).toCompletionStage().toCompletableFuture().get();
            double processed = 0;
            for (final String line : metrics.split("\n")) {
                if (line.startsWith("kafka_stream_thread_process_total{")) {
                    processed += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            still = processed == previous ? still + 1 : 0;
            previous = processed;
            Thread.sleep(1000);
        }
    }
}
