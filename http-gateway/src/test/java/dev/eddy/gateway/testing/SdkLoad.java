package dev.eddy.gateway.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Capture as a PostHog SDK sends it through a fault: batches of events of a few persons, each event with its own
 * uuid, and a batch that did not get a 200 sent again unchanged (same uuids) until it does. Counts the answers,
 * and what was acknowledged per person, to reconcile with the stores afterwards.
 */
public final class SdkLoad implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SdkLoad.class);
    private static final Duration RETRY_PAUSE = Duration.ofMillis(200);

    private final TestEddy eddy;
    private final String event;
    private final int persons;
    private final int batchSize;
    private final Duration pause;
    private final Map<String, AtomicLong> acked = new ConcurrentHashMap<>();
    /** Answers by status; 0 counts requests that got no answer (connection refused or reset, timeout). */
    private final Map<Integer, AtomicLong> answers = new ConcurrentHashMap<>();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread sender;
    private volatile Throwable failure;

    private SdkLoad(final TestEddy eddy, final String event, final int persons, final int batchSize, final Duration pause) {
        this.eddy = eddy;
        this.event = event;
        this.persons = persons;
        this.batchSize = batchSize;
        this.pause = pause;
        this.sender = new Thread(this::run, "sdk-load-" + event);
    }

    /** Starts sending batches of {@code batchSize} events named {@code event}, every {@code pause}. */
    public static SdkLoad start(final TestEddy eddy, final String event, final int persons, final int batchSize, final Duration pause) {
        final SdkLoad load = new SdkLoad(eddy, event, persons, batchSize, pause);
        load.sender.start();
        return load;
    }

    /** The name of person {@code i}'s distinct id (also its events' {@code user} property). */
    public String person(final int i) {
        return event + "-person-" + i;
    }

    private void run() {
        long sequence = 0;
        try {
            while (running.get()) {
                final List<String> users = new ArrayList<>();
                final StringBuilder events = new StringBuilder();
                for (int i = 0; i < batchSize; i++, sequence++) {
                    final String user = person((int) (sequence % persons));
                    users.add(user);
                    events.append(i == 0 ? "" : ",").append("{\"event\":\"").append(event).append("\",\"distinct_id\":\"").append(user)
                            .append("\",\"uuid\":\"").append(UUID.randomUUID()).append("\",\"properties\":{\"user\":\"").append(user)
                            .append("\",\"$set\":{\"seq\":").append(sequence).append("}}}");
                }
                final String body = "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":[" + events + "]}";
                // The batch is sent until acknowledged, even when asked to stop: what was sent must land.
                while (send(body) != 200) {
                    Thread.sleep(RETRY_PAUSE.toMillis());
                }
                users.forEach(u -> acked.computeIfAbsent(u, k -> new AtomicLong()).incrementAndGet());
                batches.incrementAndGet();
                Thread.sleep(pause.toMillis());
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final RuntimeException | Error e) {
            failure = e;
        }
    }

    private int send(final String body) throws InterruptedException {
        final HttpRequest request = HttpRequest.newBuilder(eddy.uri("/batch/")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        int status;
        try {
            status = eddy.http().send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (final IOException e) {
            status = 0;
        }
        answers.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
        return status;
    }

    /** Batches acknowledged so far. */
    public long batchesAcked() {
        return batches.get();
    }

    /** Answers by status so far (0: no answer). */
    public Map<Integer, Long> answers() {
        final Map<Integer, Long> copy = new TreeMap<>();
        answers.forEach((status, n) -> copy.put(status, n.get()));
        return copy;
    }

    /** Stops after the batch in flight is acknowledged; returns the acknowledged events per person. */
    public Map<String, Long> stop() throws InterruptedException {
        running.set(false);
        sender.join(Duration.ofMinutes(2).toMillis());
        assertThat(sender.isAlive()).as("the sender finished its last batch").isFalse();
        if (failure != null) {
            throw new AssertionError("the sender failed", failure);
        }
        final Map<String, Long> copy = new TreeMap<>();
        acked.forEach((user, n) -> copy.put(user, n.get()));
        // The figures a fault test's report quotes (WARN: the test logging's threshold).
        LOG.warn("{}: {} batches of {} acknowledged; answers by status (0: none) {}", event, batches.get(), batchSize, answers());
        return copy;
    }

    /** Waits until the trends count exactly {@code expected} of this load's events per person. */
    public void assertCountedExactly(final Map<String, Long> expected, final Duration wait) throws InterruptedException {
        assertCountedExactly(eddy, event, expected, wait);
    }

    /**
     * Waits until {@code eddy}'s trends count exactly {@code expected} events named {@code event} per person over the
     * last day (a breakdown by the events' {@code user} property), or fails showing both.
     */
    public static void assertCountedExactly(final TestEddy eddy, final String event, final Map<String, Long> expected,
                                            final Duration wait) throws InterruptedException {
        final String perPerson = "{\"events\":[{\"id\":\"" + event + "\"}],\"date_from\":\"-1d\",\"breakdown\":\"user\","
                + "\"breakdown_limit\":1000,\"display\":\"ActionsTable\"}";
        final Map<String, Long> counted = new TreeMap<>();
        eddy.waitUntil(() -> {
            final HttpResponse<String> trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", perPerson);
            counted.clear();
            if (trend.statusCode() == 200) {
                TestEddy.json(trend).path("result").forEach(item -> counted.put(item.path("breakdown_value").asText(),
                        item.path("aggregated_value").asLong()));
            }
            return counted.equals(expected);
        }, wait, () -> "each person's acknowledged " + event + " events counted once: expected " + expected + ", counted " + counted);
    }

    @Override
    public void close() {
        running.set(false);
        sender.interrupt();
    }
}
