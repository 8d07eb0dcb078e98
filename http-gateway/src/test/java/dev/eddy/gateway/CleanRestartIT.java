package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SdkLoad;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.topology.StreamsApp;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A clean restart keeps the local state: the instance comes back from its stores as they were, replaying nothing
 * from the changelogs, and what they remember still holds (a batch resent after the restart is not counted twice).
 * With Kafka Streams 4.3 under exactly-once, a window store never written in a task (the historical de-duplication
 * store, in a deployment that imports no history) used to mark the whole identity task corrupted at every start:
 * its stores were wiped and rebuilt from the changelogs, a restore growing with a week of events.
 */
@ExtendWith(SharedInfrastructure.class)
class CleanRestartIT {
    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    static Path dir;

    @Test
    void aCleanRestartRestoresNothingAndStillRecognisesResentEvents(final Infrastructure infra) throws Exception {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final Map<String, String> deployment = new HashMap<>(Map.of("EDDY_KAFKA_TOPIC_PREFIX", "trestart" + run + ".",
                "EDDY_PG_URL", infra.newDatabase("restart"), "EDDY_BOOTSTRAP_PROJECT_TOKEN", "phc_restart" + run,
                "EDDY_BOOTSTRAP_PERSONAL_API_KEY", "phx_restart" + run + "key", "EDDY_STREAMS_STANDBY_REPLICAS", "0"));
        final Path state = dir.resolve("state");
        // Live events only, from 12 distinct ids: every partition's identity task writes its live store and never
        // its historical one.
        final String batch = batch("phc_restart" + run, 12);
        final Map<String, Long> once = IntStream.range(0, 12).boxed()
                .collect(Collectors.toMap(i -> "restart-person-" + i, i -> 1L));

        final long restoredAtFirstStart;
        try (TestEddy eddy = TestEddy.start(infra, state, deployment)) {
            assertThat(eddy.post("/batch/", batch).statusCode()).isEqualTo(200);
            SdkLoad.assertCountedExactly(eddy, "restart", once, WAIT);
            restoredAtFirstStart = streams(eddy).restoredRecords();
        }

        try (TestEddy eddy = TestEddy.start(infra, state, deployment)) {
            eddy.waitUntil(() -> streams(eddy).isRunning(), WAIT, "running again");
            assertThat(streams(eddy).restoredRecords()).as("changelog records replayed at the clean restart").isZero();
            assertThat(restoredAtFirstStart).isZero();
            assertThat(metric(eddy, "eddy_streams_restored_records_total")).isEqualTo("0.0");

            // The de-duplication store came back with the events: the SDK's retry of the same batch has no effect.
            assertThat(eddy.post("/batch/", batch).statusCode()).isEqualTo(200);
            final String marker = "{\"api_key\":\"phc_restart" + run + "\",\"batch\":[{\"event\":\"restart\","
                    + "\"distinct_id\":\"restart-person-0\",\"uuid\":\"" + UUID.randomUUID() + "\",\"properties\":{\"user\":\"restart-person-0\"}}]}";
            assertThat(eddy.post("/batch/", marker).statusCode()).isEqualTo(200);
            final Map<String, Long> expected = new HashMap<>(once);
            expected.put("restart-person-0", 2L);
            // The new event is counted (so the resent ones had their turn before it, on the same partition) and the
            // resent ones are not.
            SdkLoad.assertCountedExactly(eddy, "restart", expected, WAIT);
        }
    }

    private static String batch(final String token, final int persons) {
        final String events = IntStream.range(0, persons).mapToObj(i -> "{\"event\":\"restart\",\"distinct_id\":\"restart-person-" + i
                + "\",\"uuid\":\"" + new UUID(42, i) + "\",\"properties\":{\"user\":\"restart-person-" + i + "\"}}")
                .collect(Collectors.joining(","));
        return "{\"api_key\":\"" + token + "\",\"batch\":[" + events + "]}";
    }

    private static StreamsApp streams(final TestEddy eddy) {
        return eddy.eddy().streams().orElseThrow();
    }

    private static String metric(final TestEddy eddy, final String name) {
        final HttpResponse<String> metrics = eddy.get("/metrics", Map.of());
        return metrics.body().lines().filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
                .map(l -> l.substring(l.lastIndexOf(' ') + 1)).findFirst().orElse("absent");
    }
}
