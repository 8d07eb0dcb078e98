package dev.eddy.benchmarks;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import java.util.List;

/** What benchmarks ask running Eddy instances about their stream threads, from their {@code /metrics}. */
final class EddyStreams {
    private EddyStreams() {
    }

    /**
     * Waits until the stream threads have processed everything the load produced (their processed-records total
     * stops moving for three seconds, or ten minutes pass), so a measurement is of the queries, not of the queries
     * beside a busy stream thread.
     */
    static void awaitIdle(final HttpClient http) throws Exception {
        awaitIdle(List.of(http));
    }

    /** {@link #awaitIdle(HttpClient)} over several instances: each one's total stops moving. */
    static void awaitIdle(final List<HttpClient> instances) throws Exception {
        String previous = "";
        int still = 0;
        final long deadline = System.nanoTime() + 600_000_000_000L;
        while (still < 3 && System.nanoTime() < deadline) {
            final StringBuilder processed = new StringBuilder();
            for (final HttpClient http : instances) {
                processed.append(processedRecords(http)).append(' ');
            }
            still = processed.toString().equals(previous) ? still + 1 : 0;
            previous = processed.toString();
            Thread.sleep(1000);
        }
    }

    /** Records the instance's stream threads have processed since it started. */
    static double processedRecords(final HttpClient http) throws Exception {
        return metric(http, "kafka_stream_thread_process_total");
    }

    /** Rebalances the instance went through since it started. */
    static double rebalances(final HttpClient http) throws Exception {
        return metric(http, "eddy_streams_rebalances_total");
    }

    /**
     * Waits until every instance is ready, runs active partitions of both the identity stage ({@code distinct-ids})
     * and the timelines stage ({@code event-timelines}), and no instance has rebalanced for three seconds: the
     * assignment a measurement runs on is final. Throws after two minutes.
     */
    static void awaitBalanced(final List<HttpClient> instances) throws Exception {
        final long deadline = System.nanoTime() + 120_000_000_000L;
        String previous = "";
        int still = 0;
        while (still < 3) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the instances did not settle on an assignment with work for each in 120 s: " + previous);
            }
            final StringBuilder state = new StringBuilder();
            boolean working = true;
            for (final HttpClient http : instances) {
                final String metrics = metrics(http);
                working &= ready(http) && !Double.isNaN(value(metrics, "eddy_store_entries{store=\"distinct-ids\"}"))
                        && !Double.isNaN(value(metrics, "eddy_store_entries{store=\"event-timelines\"}"));
                state.append(value(metrics, "eddy_streams_rebalances_total")).append(' ');
            }
            still = working && state.toString().equals(previous) ? still + 1 : 0;
            previous = state.toString();
            Thread.sleep(1000);
        }
    }

    private static boolean ready(final HttpClient http) throws Exception {
        return http.request(HttpMethod.GET, "/_health/ready").compose(req -> req.send()
                .compose(resp -> resp.body().map(b -> resp.statusCode() == 200))).toCompletionStage().toCompletableFuture().get();
    }

    private static String metrics(final HttpClient http) throws Exception {
        return http.request(HttpMethod.GET, "/metrics").compose(req -> req.send().compose(resp -> resp.body()))
                .map(Buffer::toString).toCompletionStage().toCompletableFuture().get();
    }

    /** The sum of the metric's series (every label set). */
    private static double metric(final HttpClient http, final String name) throws Exception {
        double sum = 0;
        for (final String line : metrics(http).split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** The value of the series named exactly (name and labels as printed), NaN when absent or NaN. */
    private static double value(final String metrics, final String series) {
        for (final String line : metrics.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        return Double.NaN;
    }
}
