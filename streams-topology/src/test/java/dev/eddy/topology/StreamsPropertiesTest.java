package dev.eddy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/** The Streams settings that make a deployment durable: exactly-once, replicated internal topics with a majority in sync. */
class StreamsPropertiesTest {
    @Test
    void internalTopicsAreReplicatedWithAMajorityInSync() {
        final EddyConfig cluster = ConfigLoader.load(Map.of("EDDY_REPLICATION_FACTOR", "3", "EDDY_KAFKA_BOOTSTRAP", "kafka-0:9093,kafka-1:9093"),
                Optional.empty());
        final Properties p = StreamsProperties.of(cluster, "eddy-streams-0:8000");
        assertThat(p.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)).isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
        assertThat(p.get(StreamsConfig.REPLICATION_FACTOR_CONFIG)).isEqualTo(3);
        assertThat(p.get(StreamsConfig.topicPrefix("min.insync.replicas"))).isEqualTo("2");
        assertThat(cluster.kafka().local()).isFalse();

        final EddyConfig local = ConfigLoader.load(Map.of(), Optional.empty());
        assertThat(StreamsProperties.of(local, "127.0.0.1:8000").get(StreamsConfig.topicPrefix("min.insync.replicas"))).isEqualTo("1");
        assertThat(local.kafka().local()).isTrue();
        assertThat(ConfigLoader.load(Map.of("EDDY_REPLICATION_FACTOR", "5"), Optional.empty()).kafka().minInSyncReplicas()).isEqualTo(3);
        assertThat(ConfigLoader.load(Map.of("EDDY_REPLICATION_FACTOR", "2"), Optional.empty()).kafka().minInSyncReplicas()).isEqualTo(1);
        assertThat(ConfigLoader.load(Map.of("EDDY_KAFKA_BOOTSTRAP", "localhost:9092,[::1]:9093"), Optional.empty()).kafka().local()).isTrue();
    }
}
