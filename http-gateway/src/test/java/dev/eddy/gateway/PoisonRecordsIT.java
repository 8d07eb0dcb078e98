package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.CommittedRecords;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.topology.EddyTopics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A record nothing can read, on any topic the topology consumes, goes to {@code events.dlq} with the reason, and
 * processing goes on: events captured after the poison are counted, and persons still resolve.
 */
class PoisonRecordsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The topics the topology does not read: the dead letters themselves, and the gateways' instance directory. */
    private static final Set<String> NOT_CONSUMED = Set.of(EddyTopics.DLQ, EddyTopics.INSTANCES);
    private static Infrastructure infra;

    @BeforeAll
    static void infrastructure(final Infrastructure shared) {
        infra = shared;
    }

    @Test
    void everyConsumedTopicsPoisonGoesToTheDeadLetterTopicAndProcessingContinues() throws Exception {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        // Unreadable bytes, well-formed JSON of the wrong shape, and a record cut short after a binary record's
        // version byte (the binary apply of persons.commands), per topic.
        final Map<String, List<byte[]>> poison = new LinkedHashMap<>();
        for (final String name : topicNames()) {
            if (NOT_CONSUMED.contains(name)) {
                continue;
            }
            poison.put(name, List.of(("\u0000\u00ff not a record " + name + " " + run).getBytes(StandardCharsets.UTF_8),
                    ("{\"poison\":\"" + name + " " + run + "\",\"properties\":[1,2]}").getBytes(StandardCharsets.UTF_8),
                    ("\u0002 cut short " + name + " " + run).getBytes(StandardCharsets.UTF_8)));
        }
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafkaBootstrap());
        props.putAll(dev.eddy.gateway.testing.Infrastructure.kafkaClientProperties());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (final Map.Entry<String, List<byte[]>> topic : poison.entrySet()) {
                for (final byte[] value : topic.getValue()) {
                    producer.send(new ProducerRecord<>(eddy.topic(topic.getKey()), ("1:poison-" + run).getBytes(StandardCharsets.UTF_8), value))
                            .get();
                }
            }
        }

        // Traffic after the poison, as a live deployment has: dead letters are committed with the next transaction.
        final String user = "after-poison-" + run;
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"after_poison_" + run
                + "\",\"distinct_id\":\"" + user + "\",\"properties\":{\"$set\":{\"ok\":true}}}").statusCode()).isEqualTo(200);

        // Each poison record, with the topic it was read from as Kafka Streams' error headers name it.
        final Set<String> expected = new TreeSet<>();
        poison.forEach((topic, values) -> values.forEach(v -> expected.add(eddy.topic(topic) + " " + new String(v, StandardCharsets.UTF_8))));
        final Set<String> dead = new TreeSet<>();
        eddy.waitUntil(() -> {
            readAll(eddy.topic(EddyTopics.DLQ)).forEach(r -> {
                final var source = r.headers().lastHeader("__streams.errors.topic");
                final var exception = r.headers().lastHeader("__streams.errors.exception");
                if (exception != null && !new String(exception.value(), StandardCharsets.UTF_8).isBlank()) {
                    dead.add((source == null ? "?" : new String(source.value(), StandardCharsets.UTF_8)) + " "
                            + new String(r.value(), StandardCharsets.UTF_8));
                }
            });
            return dead.containsAll(expected);
        }, WAIT, () -> {
            final Set<String> missing = new TreeSet<>(expected);
            missing.removeAll(dead);
            return "every poison record in events.dlq with its source topic and exception; missing: " + missing;
        });

        // Still running, still counting, still resolving persons.
        assertThat(eddy.get("/_health/ready", Map.of()).statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> {
            final var trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                    "{\"events\":[{\"id\":\"after_poison_" + run + "\"}],\"date_from\":\"-1d\",\"display\":\"BoldNumber\"}");
            return trend.statusCode() == 200 && JsonNodes.first(trend.body()).path("aggregated_value").asInt() == 1;
        }, WAIT, "the event after the poison counted");
        eddy.waitUntil(() -> eddy.request(eddy.personalKey(), "GET", "/api/projects/1/persons/?distinct_id=" + user, null).body()
                .contains("\"ok\":true"), WAIT, "the person after the poison resolved");
    }

    private static List<String> topicNames() {
        final List<String> names = new ArrayList<>();
        for (final var field : EddyTopics.class.getFields()) {
            if (field.getType() == String.class && java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                try {
                    names.add((String) field.get(null));
                } catch (final IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return names;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(final String topic) {
        return CommittedRecords.readAll(infra.kafkaBootstrap(), topic);
    }

    /** The first series of a trend answer. */
    private static final class JsonNodes {
        static JsonNode first(final String body) {
            try {
                return dev.eddy.serde.Json.mapper().readTree(body).path("result").path(0);
            } catch (final java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
