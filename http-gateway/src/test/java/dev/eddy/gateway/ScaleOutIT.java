package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Instances come and go under load: while events are captured and {@code /decide} is asked without pause, a third
 * streams instance joins and then one of the first two leaves. Every acknowledged event is counted exactly once
 * (per person and in total), and no {@code /decide} request fails.
 */
@ExtendWith(SharedInfrastructure.class)
class ScaleOutIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String SECRET = "scale-out-test-secret";
    private static final int USERS = 40;

    @TempDir
    Path first;
    @TempDir
    Path second;
    @TempDir
    Path third;

    @Test
    void addingAndRemovingInstancesLosesAndDoublesNothing(final Infrastructure infra) throws Exception {
        try (TestEddy gateway = TestEddy.start(infra, first, Map.of("EDDY_HTTP_INTERNAL_SECRET", SECRET))) {
            final Map<String, String> sameApp = Map.of("EDDY_ROLE", "streams", "EDDY_HTTP_INTERNAL_SECRET", SECRET,
                    "EDDY_KAFKA_TOPIC_PREFIX", gateway.topicPrefix());
            final TestEddy leaving = TestEddy.start(infra, second, sameApp);
            // A flag on a person property: every /decide reads the person, wherever it lives at that moment.
            final HttpResponse<String> flag = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/feature_flags/",
                    "{\"key\":\"pro\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\","
                            + "\"type\":\"person\"}],\"rollout_percentage\":100}]}}");
            assertThat(flag.statusCode()).as(flag.body()).isEqualTo(201);
            final String run = UUID.randomUUID().toString().substring(0, 8);
            final Map<String, AtomicLong> acked = new ConcurrentHashMap<>();
            final AtomicBoolean loading = new AtomicBoolean(true);
            final AtomicInteger decides = new AtomicInteger();
            final AtomicInteger failedDecides = new AtomicInteger();
            final AtomicInteger refusedCaptures = new AtomicInteger();
            final AtomicInteger partialDecides = new AtomicInteger();

            final Thread capture = new Thread(() -> {
                while (loading.get()) {
                    final String user = run + "-" + ThreadLocalRandom.current().nextInt(USERS);
                    final HttpResponse<String> sent = gateway.post("/capture/", "{\"api_key\":\"" + gateway.projectToken()
                            + "\",\"event\":\"scale_" + run + "\",\"distinct_id\":\"" + user + "\",\"uuid\":\"" + UUID.randomUUID()
                            + "\",\"properties\":{\"user\":\"" + user + "\",\"$set\":{\"plan\":\"pro\"}}}");
                    if (sent.statusCode() == 200) {
                        acked.computeIfAbsent(user, u -> new AtomicLong()).incrementAndGet();
                    } else {
                        // Never a 200 for an event Kafka did not take; such an event is not counted as sent.
                        refusedCaptures.incrementAndGet();
                    }
                }
            });
            final Thread decide = new Thread(() -> {
                while (loading.get()) {
                    final String user = run + "-" + ThreadLocalRandom.current().nextInt(USERS);
                    final HttpResponse<String> answer = gateway.post("/flags/?v=2", "{\"token\":\"" + gateway.projectToken()
                            + "\",\"distinct_id\":\"" + user + "\"}");
                    decides.incrementAndGet();
                    if (answer.statusCode() != 200) {
                        failedDecides.incrementAndGet();
                    } else if (answer.body().contains("\"errorsWhileComputingFlags\":true")) {
                        // Allowed while a person's partition moves: the person-dependent flags are left out.
                        partialDecides.incrementAndGet();
                    }
                }
            });
            capture.start();
            decide.start();
            Thread.sleep(3000);
            try (TestEddy joining = TestEddy.start(infra, third, sameApp)) {
                Thread.sleep(5000);
                leaving.close();
                Thread.sleep(5000);
                loading.set(false);
                capture.join();
                decide.join();

                final long sent = acked.values().stream().mapToLong(AtomicLong::get).sum();
                assertThat(sent).as("events acknowledged during the run").isGreaterThan(50);
                gateway.waitUntil(() -> total(gateway, run) == sent, WAIT, "every acknowledged event counted");
                final JsonNode perUser = answered(gateway, "{\"events\":[{\"id\":\"scale_" + run + "\"}],\"date_from\":\"-1d\","
                        + "\"breakdown\":\"user\",\"breakdown_limit\":1000,\"display\":\"ActionsTable\"}");
                final Map<String, Long> counted = new ConcurrentHashMap<>();
                perUser.forEach(item -> counted.put(item.path("breakdown_value").asText(), item.path("aggregated_value").asLong()));
                final Map<String, Long> expected = new ConcurrentHashMap<>();
                acked.forEach((user, n) -> expected.put(user, n.get()));
                assertThat(counted).as("each person's events, each once").isEqualTo(expected);
                final JsonNode persons = answered(gateway, "{\"events\":[{\"id\":\"scale_" + run + "\",\"math\":\"dau\"}],\"date_from\":\"-1d\","
                        + "\"display\":\"BoldNumber\"}");
                assertThat(persons.path(0).path("aggregated_value").asInt()).isEqualTo(expected.size());
                assertThat(decides.get()).isGreaterThan(20);
                assertThat(failedDecides.get()).as("failed /decide requests of " + decides.get()).isZero();
                // While a partition moves, its standby copy answers: few answers lack the person's flags (44-68% did
                // before standby reads, 4% after, on the development machine).
                assertThat(partialDecides.get()).as("/decide answers without the person's flags").isLessThan(decides.get() / 4);
                assertThat(joining.get("/_health/ready", Map.of()).statusCode()).isEqualTo(200);
                System.out.printf("scale-out: %d events acknowledged (%d refused), %d /decide answered (%d without the person's flags)%n",
                        sent, refusedCaptures.get(), decides.get(), partialDecides.get());
            }
        }
    }

    private static long total(final TestEddy eddy, final String run) {
        final JsonNode result = trend(eddy, "{\"events\":[{\"id\":\"scale_" + run + "\"}],\"date_from\":\"-1d\",\"display\":\"BoldNumber\"}");
        return result == null ? -1 : result.path(0).path("aggregated_value").asLong(-1);
    }

    /** The trend's result, asked again while the instances answer 503. */
    private static JsonNode answered(final TestEddy eddy, final String query) throws InterruptedException {
        final JsonNode[] result = new JsonNode[1];
        eddy.waitUntil(() -> (result[0] = trend(eddy, query)) != null, WAIT, "an answer to " + query);
        return result[0];
    }

    /** The trend's result, or null while the instances are rebalancing (503). */
    private static JsonNode trend(final TestEddy eddy, final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", query);
        if (response.statusCode() == 503) {
            return null;
        }
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).path("result");
    }
}
