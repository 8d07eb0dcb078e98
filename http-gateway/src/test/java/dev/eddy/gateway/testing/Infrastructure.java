package dev.eddy.gateway.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * One real Kafka broker and one real PostgreSQL for a whole test JVM, chosen in this order:
 * endpoints given by {@code EDDY_TEST_KAFKA_BOOTSTRAP} + {@code EDDY_TEST_PG_URL} (user/password from
 * {@code EDDY_TEST_PG_USER}/{@code EDDY_TEST_PG_PASSWORD}); Testcontainers when a Docker daemon answers;
 * otherwise an in-process KRaft broker and an embedded PostgreSQL. Tests isolate themselves with a topic
 * prefix and a database of their own ({@link #newDatabase}).
 */
public final class Infrastructure implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Infrastructure.class);

    private final String kafkaBootstrap;
    private final String pgHostPort;
    private final String pgUser;
    private final String pgPassword;
    private final String mode;
    private final List<AutoCloseable> resources;

    private Infrastructure(final String mode, final String kafkaBootstrap, final String pgHostPort, final String pgUser,
                           final String pgPassword, final List<AutoCloseable> resources) {
        this.mode = mode;
        this.kafkaBootstrap = kafkaBootstrap;
        this.pgHostPort = pgHostPort;
        this.pgUser = pgUser;
        this.pgPassword = pgPassword;
        this.resources = resources;
    }

    /**
     * Properties every Kafka client of the tests adds to its bootstrap servers: those of the properties file named by
     * {@code EDDY_TEST_KAFKA_CLIENT_CONFIG} (an external cluster's security settings, e.g. SASL/SCRAM, as
     * {@code scripts/reliability --sasl} runs the tests), else none.
     */
    public static Map<String, String> kafkaClientProperties() {
        return ClientConfig.PROPERTIES;
    }

    private static final class ClientConfig {
        private static final Map<String, String> PROPERTIES = load();

        private static Map<String, String> load() {
            final String file = System.getenv("EDDY_TEST_KAFKA_CLIENT_CONFIG");
            if (file == null || file.isBlank()) {
                return Map.of();
            }
            final java.util.Properties properties = new java.util.Properties();
            try (java.io.Reader in = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(file))) {
                properties.load(in);
            } catch (final java.io.IOException e) {
                throw new java.io.UncheckedIOException("EDDY_TEST_KAFKA_CLIENT_CONFIG " + file, e);
            }
            final Map<String, String> map = new java.util.TreeMap<>();
            properties.stringPropertyNames().forEach(name -> map.put(name, properties.getProperty(name)));
            return Map.copyOf(map);
        }
    }

    static Infrastructure start() throws Exception {
        final long started = System.nanoTime();
        final Map<String, String> env = System.getenv();
        final Infrastructure infra;
        if (env.containsKey("EDDY_TEST_KAFKA_BOOTSTRAP") && env.containsKey("EDDY_TEST_PG_URL")) {
            infra = new Infrastructure("external", env.get("EDDY_TEST_KAFKA_BOOTSTRAP"),
                    hostPort(env.get("EDDY_TEST_PG_URL")), env.getOrDefault("EDDY_TEST_PG_USER", "eddy"),
                    env.getOrDefault("EDDY_TEST_PG_PASSWORD", "eddy"), List.of());
        } else if (env.containsKey("EDDY_TEST_KAFKA_BOOTSTRAP")) {
            // A cluster of the caller's (scripts/reliability --sasl's secured broker) with PostgreSQL in this JVM.
            final EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
            infra = new Infrastructure("external kafka", env.get("EDDY_TEST_KAFKA_BOOTSTRAP"), "127.0.0.1:" + postgres.getPort(),
                    "postgres", "postgres", List.of(postgres));
        } else if (dockerAvailable()) {
            infra = containers();
        } else {
            infra = inProcess();
        }
        LOG.warn("test infrastructure ({}) ready in {} ms: kafka {}, postgres {}", infra.mode,
                (System.nanoTime() - started) / 1_000_000, infra.kafkaBootstrap, infra.pgHostPort);
        return infra;
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (final RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource")
    private static Infrastructure containers() {
        final KafkaContainer kafka = new KafkaContainer("apache/kafka-native:4.1.0");
        final PostgreSQLContainer postgres = new PostgreSQLContainer("postgres:15-alpine");
        kafka.start();
        postgres.start();
        return new Infrastructure("testcontainers", kafka.getBootstrapServers(),
                postgres.getHost() + ":" + postgres.getMappedPort(5432), postgres.getUsername(), postgres.getPassword(),
                List.of(kafka, postgres));
    }

    private static Infrastructure inProcess() throws Exception {
        final List<AutoCloseable> resources = new ArrayList<>();
        try {
            final KafkaClusterTestKit kafka = kraftBroker();
            resources.add(kafka);
            final EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
            resources.add(postgres);
            return new Infrastructure("in-process", kafka.bootstrapServers(), "127.0.0.1:" + postgres.getPort(),
                    "postgres", "postgres", resources);
        } catch (final Exception e) {
            for (final AutoCloseable r : resources) {
                r.close();
            }
            throw e;
        }
    }

    /**
     * A started single-node KRaft cluster (broker and controller in one node) in this JVM. Its broker can be shut down
     * and started again on the same port ({@code brokers().get(0)}), as a broker restart.
     */
    public static KafkaClusterTestKit kraftBroker() throws Exception {
        final KafkaClusterTestKit kafka = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(true)
                .setNumBrokerNodes(1)
                .setNumControllerNodes(1)
                .setBootstrapMetadataVersion(MetadataVersion.latestProduction())
                .build())
                // One broker: internal topics cannot have more than one replica, and consumer groups hang
                // without the offsets topic.
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("offsets.topic.num.partitions", "4")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("transaction.state.log.num.partitions", "4")
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp("auto.create.topics.enable", "false")
                .build();
        try {
            kafka.format();
            kafka.startup();
            kafka.waitForReadyBrokers();
            return kafka;
        } catch (final Exception e) {
            kafka.close();
            throw e;
        }
    }

    /** {@code host:port} of the PostgreSQL server. */
    public String pgHostPort() {
        return pgHostPort;
    }

    /** {@code host:port} of a {@code postgresql://} or JDBC URL. */
    static String hostPort(final String url) {
        final String rest = url.replaceFirst("^(jdbc:)?postgres(ql)?://", "");
        return rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : rest;
    }

    public String kafkaBootstrap() {
        return kafkaBootstrap;
    }

    public String pgUser() {
        return pgUser;
    }

    public String pgPassword() {
        return pgPassword;
    }

    /** Creates an empty database for one test class and returns its {@code postgresql://} URL. */
    public String newDatabase(final String prefix) throws SQLException {
        return TestPostgres.newDatabase(pgHostPort, pgUser, pgPassword, prefix);
    }

    @Override
    public void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }
}
