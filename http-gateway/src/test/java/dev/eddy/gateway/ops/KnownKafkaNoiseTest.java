package dev.eddy.gateway.ops;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import org.junit.jupiter.api.Test;

class KnownKafkaNoiseTest {
    private static final String ASSIGNOR = "org.apache.kafka.streams.processor.internals.assignment.DefaultStandbyTaskAssignor";

    @Test
    void dropsTheStandbyWarningPerTaskAndTheGlobalConsumersOffsetWarning() {
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.WARN, "Unable to assign {} of {} standby tasks for task [{}]. "
                + "There is not enough available capacity. You should increase the number of application instances "
                + "to maintain the requested number of standby replicas.")).isTrue();
        assertThat(KnownKafkaNoise.noise("org.apache.kafka.clients.consumer.internals.OffsetFetcherUtils", Level.WARN,
                "[Consumer clientId=eddy-1-global-consumer, groupId=null] Not updating last stable offset for partition {} "
                        + "as it is no longer assigned")).isTrue();
        assertThat(KnownKafkaNoise.noise("org.apache.kafka.streams.StreamsConfig", Level.WARN,
                "Processing exception handler is not enabled for the GlobalThread. It's recommended to set ...")).isTrue();
    }

    @Test
    void recognisesMessagesTheClientsFormattedThemselves() {
        assertThat(KnownKafkaNoise.noise("org.apache.kafka.clients.consumer.internals.OffsetFetcherUtils", Level.WARN,
                "[Consumer clientId=t1.eddy-9-global-consumer, groupId=null] Not updating last stable offset for partition "
                        + "t1.flags.definitions-1 as it is no longer assigned")).isTrue();
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.WARN, "Unable to assign 1 of 1 standby tasks for task [3_5]. "
                + "There is not enough available capacity.")).isTrue();
        // The same words out of order are another message.
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.WARN, "standby tasks for task [3_5]: Unable to assign")).isFalse();
    }

    @Test
    void keepsEveryOtherLineOfTheSameLoggers() {
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.WARN, "Some other assignment problem {}")).isFalse();
        assertThat(KnownKafkaNoise.noise("org.apache.kafka.streams.StreamsConfig", Level.WARN,
                "Configuration {} is deprecated")).isFalse();
        // The same text at another level, or from Eddy's own loggers, is not Kafka's noise.
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.ERROR, "Unable to assign {} of {} standby tasks for task [{}]")).isFalse();
        assertThat(KnownKafkaNoise.noise("dev.eddy.topology.StreamsApp", Level.WARN,
                "Unable to assign {} of {} standby tasks for task [{}]")).isFalse();
        assertThat(KnownKafkaNoise.noise(ASSIGNOR, Level.WARN, null)).isFalse();
    }
}
