package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SdkLoad;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A state directory Eddy cannot write: at start-up (its path taken by a file), and under a running topology (a task's
 * directory taken by a file, found when the task starts). Each time the instance says so once, as a FATAL line, and
 * reports not ready with the reason while capture keeps landing in Kafka; restarted on a usable directory it counts
 * every event acknowledged meanwhile, exactly once. (A file stands in for a full or read-only disk: permissions do
 * not stop the root user these tests may run as, and mounting a small file system needs privileges.)
 */
@ExtendWith(SharedInfrastructure.class)
class StateDirFaultIT {
    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    static Path dir;
    private static Infrastructure infra;
    private static Map<String, String> deployment;

    @BeforeAll
    static void start(final Infrastructure shared) throws Exception {
        infra = shared;
        // The same topics, database and keys across the restarts of this test.
        final String run = UUID.randomUUID().toString().substring(0, 8);
        deployment = Map.of("EDDY_KAFKA_TOPIC_PREFIX", "tstate" + run + ".", "EDDY_PG_URL", infra.newDatabase("state_dir"),
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", "phc_state" + run, "EDDY_BOOTSTRAP_PERSONAL_API_KEY", "phx_state" + run + "key");
    }

    @Test
    void anUnwritableStateDirectoryStopsProcessingVisiblyAndLosesNothing() throws Exception {
        final Map<String, Map<String, Long>> acked = new HashMap<>();
        final Path state = dir.resolve("state");

        // 1. At start-up: the directory's path is a file.
        Files.writeString(state, "a file where the state directory should be");
        try (TestEddy eddy = start(state)) {
            assertNotReady(eddy, "FAILED", "cannot be written");
            acked.put("state_start", capture(eddy, "state_start"));
        }
        Files.delete(state);

        // 2. Running normally: the tasks' directories are created.
        try (TestEddy eddy = start(state)) {
            eddy.waitUntil(() -> eddy.get("/_health/ready", Map.of()).statusCode() == 200, WAIT, "ready");
            acked.put("state_ok", capture(eddy, "state_ok"));
            SdkLoad.assertCountedExactly(eddy, "state_start", acked.get("state_start"), WAIT);
            SdkLoad.assertCountedExactly(eddy, "state_ok", acked.get("state_ok"), WAIT);
        }

        // 3. A task's directory becomes a file: the stream thread fails when it takes the task.
        final Path task;
        try (Stream<Path> apps = Files.list(state); Stream<Path> tasks = Files.list(apps.filter(Files::isDirectory).findFirst().orElseThrow())) {
            task = tasks.filter(p -> p.getFileName().toString().matches("\\d+_\\d+")).sorted().findFirst().orElseThrow();
        }
        deleteTree(task);
        Files.writeString(task, "a file where a task directory should be");
        try (TestEddy eddy = start(state)) {
            assertNotReady(eddy, "ERROR", task.getFileName().toString());
            acked.put("state_task", capture(eddy, "state_task"));
        }
        Files.delete(task);

        // 4. Fixed and restarted: everything acknowledged before, during and after the failures counted once.
        try (TestEddy eddy = start(state)) {
            eddy.waitUntil(() -> eddy.get("/_health/ready", Map.of()).statusCode() == 200, WAIT, "ready after the fix");
            for (final Map.Entry<String, Map<String, Long>> phase : acked.entrySet()) {
                SdkLoad.assertCountedExactly(eddy, phase.getKey(), phase.getValue(), WAIT);
            }
        }
    }

    private static TestEddy start(final Path state) throws Exception {
        final Map<String, String> env = new HashMap<>(deployment);
        env.put("EDDY_STREAMS_STANDBY_REPLICAS", "0");
        return TestEddy.startLive(infra, state, env);
    }

    /** Health says not ready, with the streams state and a reason naming what failed. */
    private static void assertNotReady(final TestEddy eddy, final String state, final String reason) throws InterruptedException {
        final JsonNode[] checks = new JsonNode[1];
        eddy.waitUntil(() -> {
            final HttpResponse<String> health = eddy.get("/_health/ready", Map.of());
            checks[0] = TestEddy.json(health).path("checks");
            return health.statusCode() == 503 && state.equals(checks[0].path("streams").asText());
        }, WAIT, () -> "not ready with streams " + state + ": " + checks[0]);
        assertThat(checks[0].path("streams_failure").asText()).contains(reason);
        // The gateway's own readiness stays: capture and flags serve without the Streams instance.
        final HttpResponse<String> gateway = eddy.get("/_health/gateway", Map.of());
        assertThat(gateway.statusCode()).as(gateway.body()).isEqualTo(200);
        assertThat(TestEddy.json(gateway).path("checks").has("streams")).isFalse();
    }

    /** Captures a few batches as an SDK does; what was acknowledged per person. */
    private static Map<String, Long> capture(final TestEddy eddy, final String event) throws InterruptedException {
        try (SdkLoad load = SdkLoad.start(eddy, event, 4, 10, Duration.ofMillis(20))) {
            eddy.waitUntil(() -> load.batchesAcked() >= 5, WAIT, event + " captured");
            final Map<String, Long> acked = load.stop();
            assertThat(load.answers()).containsOnlyKeys(200);
            return acked;
        }
    }

    private static void deleteTree(final Path root) throws java.io.IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (final Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
