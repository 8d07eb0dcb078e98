package dev.eddy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The topology as Kafka Streams describes it, kept in {@code src/test/resources/topology.txt}: a change to any
 * sub-topology, store, topic or node name shows in review as a diff of that file. Such a change also changes the
 * topology's fingerprint, so instances upgraded to it wipe their local state and restore it from the changelogs
 * ({@link TopologyFingerprint}): the diff is where to decide whether that cost is wanted. After an intended change,
 * write the file again with {@code mvn test -pl streams-topology -Dtest=TopologyGoldenTest -Deddy.topology.update=true}.
 */
class TopologyGoldenTest {
    private static final Path GOLDEN = Path.of("src", "test", "resources", "topology.txt");

    @Test
    void theTopologyIsTheOneReviewed() throws IOException {
        final EddyConfig config = ConfigLoader.load(Map.of(), Optional.empty());
        final String described = EddyTopology.build(EddyTopics.of(config.kafka()), config.streams()).describe().toString();
        if (Boolean.getBoolean("eddy.topology.update")) {
            Files.writeString(GOLDEN, described);
        }
        assertThat(described)
                .as("the topology differs from " + GOLDEN + "; if intended, rewrite it with -Deddy.topology.update=true and review the diff")
                .isEqualTo(Files.readString(GOLDEN));
    }
}
