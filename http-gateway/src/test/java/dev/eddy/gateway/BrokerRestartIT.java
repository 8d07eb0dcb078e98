package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SdkLoad;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import kafka.server.BrokerServer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka broker restarts under capture. While it is down, capture answers 503 (never a 200 for an event Kafka did
 * not acknowledge); the SDK-like client sends the same batch again until it gets a 200; afterwards the stores count
 * every acknowledged event exactly once per person, a retried event that had reached Kafka after all included (dedup
 * by uuid). This test runs its own broker: the shared one serves the other tests.
 */
@ExtendWith(SharedInfrastructure.class)
class BrokerRestartIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Duration DOWN = Duration.ofSeconds(8);

    @TempDir
    static Path stateDir;
    private static KafkaClusterTestKit kafka;
    private static TestEddy eddy;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        kafka = Infrastructure.kraftBroker();
        // A short produce deadline: the client hears 503 within 3 s of the broker going away.
        eddy = TestEddy.start(infra, stateDir, Map.of("EDDY_KAFKA_BOOTSTRAP", kafka.bootstrapServers(),
                "EDDY_KAFKA_PRODUCE_TIMEOUT_MS", "3000"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (eddy != null) {
            eddy.close();
        }
        if (kafka != null) {
            kafka.close();
        }
    }

    @Test
    void captureAnswers503WhileTheBrokerIsDownAndEveryRetriedEventLandsOnce() throws Exception {
        try (SdkLoad load = SdkLoad.start(eddy, "broker_restart", 6, 20, Duration.ofMillis(20))) {
            eddy.waitUntil(() -> load.batchesAcked() >= 20, WAIT, "capture under way");

            final BrokerServer broker = kafka.brokers().values().iterator().next();
            broker.shutdown();
            broker.awaitShutdown();
            final long whileDown = load.batchesAcked();
            Thread.sleep(DOWN.toMillis());
            assertThat(load.batchesAcked()).as("no batch acknowledged while the broker was down").isEqualTo(whileDown);
            broker.startup();
            kafka.waitForReadyBrokers();

            eddy.waitUntil(() -> load.batchesAcked() >= whileDown + 20, WAIT, "capture acknowledged again after the restart");
            final Map<String, Long> acked = load.stop();
            assertThat(load.answers().getOrDefault(503, 0L)).as("refusals while the broker was down: " + load.answers())
                    .isGreaterThanOrEqualTo(1);
            assertThat(load.answers()).as("only 200 and 503: " + load.answers()).containsOnlyKeys(200, 503);
            load.assertCountedExactly(acked, WAIT);
        }
    }
}
