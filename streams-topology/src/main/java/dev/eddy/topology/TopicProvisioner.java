package dev.eddy.topology;

import dev.eddy.config.KafkaConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
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
        if (kafka.replicationFactor() == 1 && !kafka.local()) {
            LOG.warn("replication-factor is 1 against the cluster at {}: every topic Eddy creates keeps one copy, and losing one "
                    + "broker loses events and stores. Set EDDY_REPLICATION_FACTOR=3 (before the first start: existing topics "
                    + "keep theirs)", kafka.bootstrap());
        }
        final Properties props = new Properties();
        props.putAll(kafka.clientProperties());
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        try (Admin admin = Admin.create(props)) {
            final List<String> created = create(admin, kafka, topics, timeout);
            verify(admin, kafka, topics, timeout);
            awaitLeaders(admin, created, timeout);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (final ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create Eddy's topics on " + kafka.bootstrap() + ": " + e.getMessage(), e);
        }
    }

    /** Creates the topics that do not exist yet; the names of those it created. */
    private static List<String> create(final Admin admin, final KafkaConfig kafka, final List<Topic<?, ?>> topics,
                                       final Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        final List<String> created = new ArrayList<>();
        final List<NewTopic> wanted = new ArrayList<>();
        for (final Topic<?, ?> topic : topics) {
            final NewTopic t = new NewTopic(topic.name(), kafka.partitions(), kafka.replicationFactor());
            final Map<String, String> configs = new HashMap<>();
            configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(kafka.minInSyncReplicas()));
            if (topic.compacted()) {
                configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
            }
            t.configs(configs);
            wanted.add(t);
        }
        for (final Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> result
                : admin.createTopics(wanted).values().entrySet()) {
            try {
                result.getValue().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                LOG.info("created topic {} with {} partitions", result.getKey(), kafka.partitions());
                created.add(result.getKey());
            } catch (final ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
        return created;
    }

    /**
     * Waits until the leader of every partition of the new topics answers for it. The metadata names a leader before
     * that broker has taken the partition over; a producer writing then gets {@code NOT_LEADER_OR_FOLLOWER}, and an
     * idempotent one was seen here to retry a batch with a reset sequence number for the whole delivery timeout
     * ({@code OUT_OF_ORDER_SEQUENCE_NUMBER}), failing its sends. Listing the partitions' end offsets is answered by
     * the leaders only (the admin client retries until they do).
     */
    private static void awaitLeaders(final Admin admin, final List<String> created, final Duration timeout)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (created.isEmpty()) {
            return;
        }
        final Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (final TopicDescription d : admin.describeTopics(created).allTopicNames().get(timeout.toMillis(), TimeUnit.MILLISECONDS).values()) {
            d.partitions().forEach(p -> latest.put(new TopicPartition(d.name(), p.partition()),
                    OffsetSpec.latest()));
        }
        admin.listOffsets(latest).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
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

    /** A topic just created may not be in the broker's metadata yet: describe again until it is. */
    private static Map<String, TopicDescription> describeOnceKnown(final Admin admin, final Set<String> names,
                                                                   final Duration timeout)
            throws InterruptedException, ExecutionException, TimeoutException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                return admin.describeTopics(names).allTopicNames().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (final ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(METADATA_RETRY_MS);
            }
        }
    }
}
