package dev.eddy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.Topology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Local state of another topology is recognised, so an upgrade wipes it instead of failing to start. */
class TopologyFingerprintTest {
    @TempDir
    Path dir;

    @Test
    void stateOfAnotherOrAnUnrecordedTopologyIsStale() throws Exception {
        final EddyConfig config = ConfigLoader.load(Map.of("EDDY_STATE_DIR", dir.toString()), Optional.empty());
        final String eddy = TopologyFingerprint.of(EddyTopology.build(EddyTopics.of(config.kafka()), config.streams()).describe());
        final Topology other = new Topology();
        other.addSource("source", "some-topic");
        final String older = TopologyFingerprint.of(other.describe());
        assertThat(eddy).hasSize(64).isNotEqualTo(older)
                .as("a pure function of the topology").isEqualTo(TopologyFingerprint.of(
                        EddyTopology.build(EddyTopics.of(config.kafka()), config.streams()).describe()));

        final Path app = dir.resolve("eddy");
        assertThat(TopologyFingerprint.stale(app, eddy)).as("no state yet").isFalse();
        Files.createDirectories(app.resolve("7_2"));
        assertThat(TopologyFingerprint.stale(app, eddy)).as("tasks, but no fingerprint: written before fingerprints").isTrue();
        TopologyFingerprint.record(app, older);
        assertThat(TopologyFingerprint.stale(app, eddy)).as("written by another topology").isTrue();
        TopologyFingerprint.record(app, eddy);
        assertThat(TopologyFingerprint.stale(app, eddy)).isFalse();
    }
}
