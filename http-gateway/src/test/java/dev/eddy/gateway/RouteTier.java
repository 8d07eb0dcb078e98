package dev.eddy.gateway;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.gateway.auth.ApiKeys;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.bootstrap.Bootstrap;
import dev.eddy.gateway.capture.EventProducer;
import dev.eddy.gateway.db.Database;
import dev.eddy.gateway.streams.InternalSecret;
import dev.eddy.gateway.testing.ApiClient;
import dev.eddy.gateway.testing.TestPostgres;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A gateway's routes without Kafka: the public and management routes exactly as {@link GatewayRoutes} wires them
 * (same order, same error path, same limits), on PostgreSQL ({@link TestPostgres}, a database per tier), with Kafka's
 * {@link MockProducer} taking what the gateway writes (acknowledged at once) and no streams instance, so reads of the
 * Streams stores answer 503 {@code no_streams_instance} within {@code insights.query-timeout} (200 ms here). It starts in
 * well under a second once the JVM's PostgreSQL is up: the tier for request and response shapes, errors and
 * authorization. What needs a broker or the stores is tested on a whole {@code TestEddy}.
 */
public final class RouteTier extends ApiClient implements AutoCloseable {
    private final EddyConfig config;
    private final Vertx vertx;
    private final MockProducer<String, byte[]> kafka;
    private final MeterRegistry registry;
    private final Bootstrap.Result bootstrap;
    private final Router router;
    private final HttpServer server;
    private final List<AutoCloseable> closeables;

    private RouteTier(final EddyConfig config, final Vertx vertx, final MockProducer<String, byte[]> kafka, final MeterRegistry registry,
                      final Bootstrap.Result bootstrap, final Router router, final HttpServer server, final List<AutoCloseable> closeables) {
        super(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build());
        this.config = config;
        this.vertx = vertx;
        this.kafka = kafka;
        this.registry = registry;
        this.bootstrap = bootstrap;
        this.router = router;
        this.server = server;
        this.closeables = closeables;
    }

    /** The routes on a new database; {@code extra} overrides settings by their {@code EDDY_} variables. */
    public static RouteTier start(final Map<String, String> extra) throws Exception {
        final TestPostgres postgres = TestPostgres.shared();
        final Map<String, String> env = new HashMap<>(Map.of(
                "EDDY_ROLE", "gateway",
                "EDDY_PG_URL", postgres.newMigratedDatabase("routes"),
                "EDDY_PG_USER", postgres.user(),
                "EDDY_PG_PASSWORD", postgres.password(),
                "EDDY_HTTP_HOST", "127.0.0.1",
                "EDDY_INSIGHTS_QUERY_TIMEOUT", "200ms"));
        env.putAll(extra);
        final EddyConfig config = ConfigLoader.load(env, Optional.empty());
        final Vertx vertx = Vertx.vertx();
        final List<AutoCloseable> closeables = new ArrayList<>();
        try {
            final Pool pool = Database.pool(vertx, config.pg());
            final Bootstrap.Result bootstrap = Eddy.await(Bootstrap.run(pool, config.bootstrap()));
            final MockProducer<String, byte[]> kafka = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
            final EventProducer producer = new EventProducer(kafka);
            closeables.add(producer);
            final SimpleMeterRegistry registry = new SimpleMeterRegistry();
            final AuthFailureLimiter failures = new AuthFailureLimiter(config.rateLimits().authFailures());
            final Reads reads = Reads.of(vertx, config, Optional::empty, () -> "127.0.0.1:0",
                    new InternalSecret(ApiKeys.newInternalSecret(), failures), Optional.empty(), new HttpClientOptions(), Optional.of(pool),
                    registry);
            final GatewayRoutes routes = new GatewayRoutes(new GatewayRoutes.Shared(vertx, config, pool, producer,
                    EddyTopics.of(config.kafka()), registry, failures, reads), closeables::add);
            final Router router = Eddy.router(vertx, routes.inMatchingOrder());
            final HttpServer server = Eddy.await(vertx.createHttpServer(Eddy.publicServerOptions(config.http())).requestHandler(router)
                    .listen(0));
            return new RouteTier(config, vertx, kafka, registry, bootstrap, router, server, closeables);
        } catch (final Exception | Error e) {
            close(closeables, vertx);
            throw e;
        }
    }

    @Override
    public URI uri(final String path) {
        return URI.create("http://127.0.0.1:" + server.actualPort() + path);
    }

    @Override
    public EddyConfig config() {
        return config;
    }

    @Override
    public String projectToken() {
        return bootstrap.projectToken();
    }

    @Override
    public String personalKey() {
        return bootstrap.personalApiKey().orElseThrow();
    }

    /** The routes in matching order, as every event loop of a running gateway has them. */
    public List<Route> routes() {
        return router.getRoutes();
    }

    /** Everything written to {@code topic} (a name without the deployment's prefix, e.g. {@code flags.definitions}), in order. */
    public List<ProducerRecord<String, byte[]>> written(final String topic) {
        final String name = config.kafka().topicPrefix() + topic;
        return kafka.history().stream().filter(r -> r.topic().equals(name)).toList();
    }

    /** The first value of the meter named {@code name} (Micrometer's dotted name), or -1 if there is none. */
    public double meter(final String name) {
        return registry.find(name).meters().stream().flatMap(m -> java.util.stream.StreamSupport.stream(m.measure().spliterator(), false))
                .mapToDouble(io.micrometer.core.instrument.Measurement::getValue).findFirst().orElse(-1);
    }

    /** The sum of {@code statistic} over every meter named {@code name} (all its tags), or 0 if there is none. */
    public double meter(final String name, final io.micrometer.core.instrument.Statistic statistic) {
        return registry.find(name).meters().stream().flatMap(m -> java.util.stream.StreamSupport.stream(m.measure().spliterator(), false))
                .filter(m -> m.getStatistic() == statistic).mapToDouble(io.micrometer.core.instrument.Measurement::getValue).sum();
    }

    @Override
    public void close() {
        close(closeables, vertx);
    }

    private static void close(final List<AutoCloseable> closeables, final Vertx vertx) {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (final Exception e) {
                // Closing what a test started: the next test has its own.
            }
        }
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }
}
