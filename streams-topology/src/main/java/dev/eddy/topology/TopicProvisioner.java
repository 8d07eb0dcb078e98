package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates Eddy's topics at start-up with the configured partition count, and refuses to go on when an
 * existing topic has fewer partitions than configured (keys would land on other partitions than the
 * stores expect).
 */
public final class TopicProvisioner {
    private static final Logger LOG = LoggerFactory.getLogger(TopicProvisioner.class);
    private static final long METADATA_RETRY_MS = 100;

    private TopicProvisioner() {
    }

    public static void ensure(final KafkaConfig kafka, final List<Topic<?, ?>> topics, final Duration timeout) {
        final Properties props = new Properties();
        props.putAll(kafka.clientProperties());
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        try (Admin admin = Admin.create(props)) {
            create(admin, kafka, topics, timeout);
            verify(admin, kafka, topics, timeout);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (final ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create Eddy's topics on " + kafka.bootstrap() + ": " + e.getMessage(), e);
        }
    }

    private static void create(final Admin admin, final KafkaConfig kafka, final List<Topic<?, ?>> topics,
                               final Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        final List<NewTopic> wanted = new ArrayList<>();
        for (final Topic<?, ?> topic : topics) {
            final NewTopic t = new NewTopic(topic.name(), kafka.partitions(), kafka.replicationFactor());
            if (topic.compacted()) {
                t.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
            }
            wanted.add(t);
        }
        for (final Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> result
                : admin.createTopics(wanted).values().entrySet()) {
            try {
                result.getValue().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                LOG.info("created topic {} with {} partitions", result.getKey(), kafka.partitions());
            } catch (final ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }

    private static void verify(final Admin admin, final KafkaConfig kafka, final List<Topic<?, ?>> topics,
                               final Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        final Set<String> names = topics.stream().map(Topic::name).collect(Collectors.toSet());
        for (final TopicDescription d : describeOnceKnown(admin, names, timeout).values()) {
            if (d.partitions().size() < kafka.partitions()) {
                throw new IllegalStateException("topic " + d.name() + " has " + d.partitions().size()
                        + " partitions but Eddy is configured with " + kafka.partitions()
                        + "; add partitions to the topic or lower 'partitions'");
            }
        }
    }

    /**
     * A topic just created may not be in the broker's metadata yet, nor have a leader for every partition: describe
     * again until it has. (A producer that writes to a partition before its leader is known gets
     * {@code NOT_LEADER_OR_FOLLOWER}; an idempotent one was seen to retry its first batches forever after that, with
     * {@code OUT_OF_ORDER_SEQUENCE_NUMBER}.)
     */
    private static Map<String, TopicDescription> describeOnceKnown(final Admin admin, final Set<String> names,
                                                                   final Duration timeout)
            throws InterruptedException, ExecutionException, TimeoutException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                final Map<String, TopicDescription> described = admin.describeTopics(names).allTopicNames()
                        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                final boolean led = described.values().stream()
                        .allMatch(d -> d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()));
                if (led || System.nanoTime() > deadline) {
                    return described;
                }
            } catch (final ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(METADATA_RETRY_MS);
        }
    }
}
