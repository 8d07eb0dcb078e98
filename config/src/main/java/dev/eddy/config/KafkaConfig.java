package dev.eddy.config;

import com.typesafe.config.Config;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How Eddy reaches Kafka, and how it lays out its topics.
 *
 * @param bootstrap         bootstrap servers
 * @param topicPrefix       prepended to every topic name and to the Streams application id
 * @param partitions        partition count of every topic Eddy creates
 * @param replicationFactor replication factor of every topic Eddy creates
 * @param produceTimeoutMs  how long an ingestion request waits for the broker's acknowledgement
 * @param clientProperties  extra properties for every Kafka client (security, SASL, TLS)
 */
public record KafkaConfig(
        String bootstrap,
        String topicPrefix,
        int partitions,
        short replicationFactor,
        int produceTimeoutMs,
        Map<String, String> clientProperties) {

    public KafkaConfig {
        Validation.require(!bootstrap.isBlank(), "kafka.bootstrap must not be blank");
        Validation.require(partitions >= 1 && partitions <= 10_000, "partitions must be 1..10000, got " + partitions);
        Validation.require(replicationFactor >= 1, "replication-factor must be at least 1, got " + replicationFactor);
        Validation.require(produceTimeoutMs >= 100, "kafka.produce-timeout-ms must be at least 100");
        Validation.require(topicPrefix.matches("[A-Za-z0-9._-]*"),
                "kafka.topic-prefix may hold only letters, digits, '.', '_' and '-'");
        clientProperties = Map.copyOf(clientProperties);
    }

    static KafkaConfig from(final Config root) {
        final Config c = root.getConfig("kafka");
        final Map<String, String> client = new TreeMap<>();
        // Client property names contain dots (sasl.mechanism): read them as quoted leaf paths.
        c.getConfig("client").entrySet().forEach(e -> client.put(
                String.join(".", com.typesafe.config.ConfigUtil.splitPath(e.getKey())),
                String.valueOf(e.getValue().unwrapped())));
        final int replication = root.getInt("replication-factor");
        Validation.require(replication <= Short.MAX_VALUE, "replication-factor too large");
        return new KafkaConfig(
                c.getString("bootstrap"),
                c.getString("topic-prefix"),
                root.getInt("partitions"),
                (short) replication,
                c.getInt("produce-timeout-ms"),
                client);
    }

    /**
     * {@code min.insync.replicas} of the topics Eddy and its Streams instances create: a majority of the replicas, so
     * an acknowledged write survives losing a broker while the others keep accepting writes (2 of 3); 1 below 3.
     */
    public int minInSyncReplicas() {
        return replicationFactor <= 2 ? 1 : replicationFactor / 2 + 1;
    }

    /** Whether every bootstrap server is on this machine (a developer's broker, not a cluster). */
    public boolean local() {
        for (final String server : bootstrap.split(",")) {
            final String host = server.trim().replaceFirst(":[0-9]+$", "").replaceAll("^\\[|]$", "");
            if (!List.of("localhost", "127.0.0.1", "::1").contains(host)) {
                return false;
            }
        }
        return true;
    }

    /** The full name of one of Eddy's topics, with the configured prefix. */
    public String topic(final String name) {
        return topicPrefix + name;
    }

    @Override
    public String toString() {
        // Client properties carry credentials (sasl.jaas.config, ssl.*.password): only their names are printed.
        final Map<String, String> shown = new TreeMap<>();
        clientProperties.forEach((name, value) -> shown.put(name, sensitive(name) ? "***" : value));
        return "KafkaConfig[bootstrap=" + bootstrap + ", topicPrefix=" + topicPrefix + ", partitions=" + partitions
                + ", replicationFactor=" + replicationFactor + ", produceTimeoutMs=" + produceTimeoutMs + ", clientProperties=" + shown + "]";
    }

    /** Whether a Kafka client property holds a credential. */
    static boolean sensitive(final String name) {
        final String n = name.toLowerCase(java.util.Locale.ROOT);
        return n.contains("password") || n.contains("jaas") || n.contains("secret") || n.endsWith(".key") || n.contains("token")
                || n.contains("credential");
    }
}
