package dev.eddy.gateway;

import dev.eddy.config.EddyConfig;
import dev.eddy.config.HttpConfig;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.capture.EventProducer;
import dev.eddy.gateway.bootstrap.Bootstrap;
import dev.eddy.gateway.db.Database;
import dev.eddy.gateway.http.ErrorHandler;
import dev.eddy.gateway.http.HttpServerVerticle;
import dev.eddy.gateway.ops.HealthRoutes;
import dev.eddy.gateway.ops.HttpMetrics;
import dev.eddy.gateway.streams.InternalSecret;
import dev.eddy.gateway.streams.Instances;
import dev.eddy.query.StoreMeters;
import dev.eddy.topology.EddyTopics;
import dev.eddy.topology.StateDirFailure;
import dev.eddy.topology.StreamsApp;
import dev.eddy.topology.TopicProvisioner;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Eddy process: wires the parts its role runs (gateway: PostgreSQL, producer, public and
 * management routes; streams: the Kafka Streams instance), serves them on one HTTP port, and closes them in
 * reverse order. {@code Main} and the integration tests start it the same way.
 */
public final class Eddy implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Eddy.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** Bytes of one HTTP header block; larger ones are refused before any route runs. */
    private static final int MAX_HEADER_BYTES = 16 * 1024;

    private final EddyConfig config;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final AtomicReference<StreamsApp> streams = new AtomicReference<>();
    /** Why the streams instance could not start (its state directory), if it could not. */
    private final AtomicReference<String> streamsFailure = new AtomicReference<>();
    /** One of the event loops' routers (they are identical): what {@link #routes()} lists. */
    private final AtomicReference<Router> anyRouter = new AtomicReference<>();
    private Vertx vertx;
    private int port;
    private int adminPort;
    /** Null until the routes exist (a start that failed before has nothing to drain). */
    private volatile HealthRoutes health;
    private Optional<Bootstrap.Result> bootstrap = Optional.empty();

    private Eddy(final EddyConfig config) {
        this.config = config;
    }

    /** Starts every part of {@code config.role()}; returns once the HTTP port is bound (streams may still be restoring). */
    public static Eddy start(final EddyConfig config) throws Exception {
        final Eddy eddy = new Eddy(config);
        try {
            eddy.startParts();
            return eddy;
        } catch (final Exception | Error e) {
            eddy.close();
            throw e;
        }
    }

    private void startParts() throws Exception {
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        HttpMetrics.configure(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        final JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        closeables.add(gc);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);

        vertx = Vertx.builder()
                .with(new VertxOptions().setMetricsOptions(HttpMetrics.options()))
                .withMetrics(new MicrometerMetricsFactory(registry))
                .build();

        final EddyTopics topics = EddyTopics.of(config.kafka());
        TopicProvisioner.ensure(config.kafka(), topics.all(), Duration.ofSeconds(30));

        Optional<Pool> pool = Optional.empty();
        Optional<EventProducer> producer = Optional.empty();
        if (config.role().runsGateway()) {
            Database.migrate(config.pg());
            final Pool p = Database.pool(vertx, config.pg());
            closeables.add(p::close);
            pool = Optional.of(p);
            bootstrap = Optional.of(await(Bootstrap.run(p, config.bootstrap())));
            final EventProducer eventProducer = EventProducer.create(config.kafka());
            closeables.add(eventProducer);
            final KafkaClientMetrics producerMetrics = new KafkaClientMetrics(eventProducer.client());
            producerMetrics.bindTo(registry);
            closeables.add(producerMetrics);
            producer = Optional.of(eventProducer);
        }

        final Routes routes = routes(topics, pool, producer, registry);
        final HttpConfig http = config.http();
        final HttpServerOptions options = publicServerOptions(http);
        // One server per event loop on one port; Vert.x shares the bound socket among them. Servers asking for
        // port 0 would each get their own random port, so port 0 is first resolved to a free port (tests).
        final int loops = http.effectiveEventLoops();
        port = http.port() != 0 ? http.port() : freePort(http.host());
        final List<Consumer<Router>> main = new ArrayList<>(http.hasAdminPort() ? routes.probes() : routes.admin());
        main.addAll(routes.api());
        await(vertx.deployVerticle(() -> new HttpServerVerticle(options, port, v -> {
                    final Router router = router(v, main);
                    anyRouter.compareAndSet(null, router);
                    return router;
                }, http.drainTimeout()),
                new DeploymentOptions().setInstances(loops)));
        LOG.info("HTTP{} listening on {}:{} with {} event loops (role {})", http.tls().isPresent() ? "S" : "", http.host(), port,
                loops, config.role());
        if (http.hasAdminPort()) {
            adminPort = http.adminPort() != 0 ? http.adminPort() : freePort(http.host());
            final HttpServerOptions adminOptions = new HttpServerOptions().setHost(http.host()).setMaxHeaderSize(MAX_HEADER_BYTES);
            await(vertx.deployVerticle(() -> new HttpServerVerticle(adminOptions, adminPort, v -> router(v, routes.admin()),
                    http.drainTimeout()), new DeploymentOptions().setInstances(loops)));
            LOG.info("admin HTTP (/metrics, /_internal, /_health) listening on {}:{}", http.host(), adminPort);
        }

        if (config.role().runsStreams()) {
            // The advertised port is known only now that the server is bound (port 0 in tests).
            final StreamsApp app;
            try {
                app = StreamsApp.start(config, advertised());
            } catch (final StateDirFailure e) {
                // The process keeps serving what needs no local state (capture lands in Kafka and waits there); it
                // reports not ready with the reason until it is restarted on a usable directory.
                streamsFailure.set(e.getMessage());
                LOG.error("FATAL: {}. No stream processing on this instance; it reports not ready. Fix the directory "
                        + "(space, permissions, mount) and restart Eddy.", e.getMessage(), e);
                return;
            }
            streams.set(app);
            closeables.add(app);
            closeables.add(StoreMeters.bind(app, registry));
            // Closed before the streams instance: its tombstone tells gateways to stop asking it at once.
            closeables.add(new Instances.Announcer(config.kafka(), topics.instances().name(), advertised(), app::isQueryable));
        }
    }

    /**
     * The route groups of one process.
     *
     * @param admin  what operators and other instances call: the probes, {@code /metrics}, {@code /_internal}
     * @param probes the probes alone: served on the public port too when the admin routes have a port of their own
     * @param api    the public and management routes
     */
    private record Routes(List<Consumer<Router>> admin, List<Consumer<Router>> probes, List<Consumer<Router>> api) {
    }

    /**
     * The route groups this role serves, created once: their caches, limiters and counters are shared by
     * every event loop's router.
     */
    private Routes routes(final EddyTopics topics, final Optional<Pool> pool,
                          final Optional<EventProducer> producer, final PrometheusMeterRegistry registry) throws Exception {
        final List<Consumer<Router>> admin = new ArrayList<>();
        final List<Consumer<Router>> routes = new ArrayList<>();
        // A gateway-only process finds the streams instances to hand its reads to on the instances topic.
        final Optional<Instances.Directory> directory = config.role().runsStreams() ? Optional.empty()
                : Optional.of(Instances.Directory.start(config.kafka(), topics.instances().name()));
        directory.ifPresent(closeables::add);
        final HealthRoutes health = new HealthRoutes(pool, () -> Optional.ofNullable(streams.get()),
                () -> Optional.ofNullable(streamsFailure.get()).or(() -> Optional.ofNullable(streams.get()).flatMap(StreamsApp::failure)),
                directory.map(d -> d::live), registry);
        this.health = health;
        final Consumer<Router> probes = router -> health.mountProbes(router, config.role().runsStreams());
        admin.add(probes);
        admin.add(health::mountMetrics);
        // One per process: an address that guessed personal keys or the internal secret is as suspect on the public
        // routes, and back.
        final AuthFailureLimiter failures = new AuthFailureLimiter(config.rateLimits().authFailures());
        final InternalSecret internalSecret = new InternalSecret(config.http().internalSecret().isEmpty()
                ? dev.eddy.gateway.auth.ApiKeys.newInternalSecret() : config.http().internalSecret(), failures);
        final Reads reads = Reads.of(vertx, config, () -> Optional.ofNullable(streams.get()), this::advertised, internalSecret, directory,
                internalTransport(config.http()), pool, registry);
        if (config.role().runsStreams()) {
            admin.add(reads.keyed()::mount);
            admin.add(reads.scatter()::mount);
        }
        if (pool.isPresent() && producer.isPresent()) {
            final GatewayRoutes gateway = new GatewayRoutes(new GatewayRoutes.Shared(vertx, config, pool.get(), producer.get(), topics,
                    registry, failures, reads), closeables::add);
            routes.addAll(gateway.inMatchingOrder());
        }
        return new Routes(admin, List.of(probes), routes);
    }

    /**
     * How this process reaches other instances' {@code /_internal} routes: plain HTTP on their admin port, or, when the
     * public port serves HTTPS and there is no admin port, HTTPS trusting exactly the deployment's certificate (pinned:
     * the advertised host need not be one of its names, and no other certificate passes; only the first certificate of
     * the file is trusted, not the intermediates after it, which sign other servers' certificates too).
     */
    private static HttpClientOptions internalTransport(final HttpConfig http) throws IOException {
        final HttpClientOptions options = new HttpClientOptions();
        if (http.tls().isPresent() && !http.hasAdminPort()) {
            final String chain = Files.readString(Path.of(http.tls().get().certFile()));
            final String end = "-----END CERTIFICATE-----";
            final int first = chain.indexOf("-----BEGIN CERTIFICATE-----");
            final int last = chain.indexOf(end, Math.max(first, 0));
            if (first < 0 || last < 0) {
                throw new IOException("http.tls.cert-file " + http.tls().get().certFile() + " holds no PEM certificate");
            }
            options.setSsl(true).setVerifyHost(false)
                    .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(chain.substring(first, last + end.length()))));
        }
        return options;
    }

    /** The public port's server: header limit, compression, TLS when configured. */
    static HttpServerOptions publicServerOptions(final HttpConfig http) {
        final HttpServerOptions options = new HttpServerOptions()
                .setHost(http.host())
                .setMaxHeaderSize(MAX_HEADER_BYTES)
                .setCompressionSupported(true);
        http.tls().ifPresent(tls -> options.setSsl(true)
                .setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.certFile()).setKeyPath(tls.keyFile())));
        return options;
    }

    /** One event loop's router: {@code routes} in order, then the one error path every failure and 404/405/413 takes. */
    static Router router(final Vertx loop, final List<Consumer<Router>> routes) {
        final Router router = Router.router(loop);
        routes.forEach(mount -> mount.accept(router));
        router.route().failureHandler(ErrorHandler::handle);
        for (final int status : new int[] {404, 405, 413}) {
            router.errorHandler(status, ErrorHandler::handle);
        }
        return router;
    }

    private static int freePort(final String host) throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }

    /** This instance's address for other instances: where its {@code /_internal} routes are served. */
    public String advertised() {
        return config.http().advertisedHost() + ":" + (config.http().hasAdminPort() ? adminPort : port);
    }

    public int port() {
        return port;
    }

    /** The admin server's port, if it has one ({@code http.admin-port}). */
    public OptionalInt adminPort() {
        return config.http().hasAdminPort() ? OptionalInt.of(adminPort) : OptionalInt.empty();
    }

    public EddyConfig config() {
        return config;
    }

    /** The routes this process serves, in matching order (every event loop's router has the same). */
    public List<io.vertx.ext.web.Route> routes() {
        final Router router = anyRouter.get();
        return router == null ? List.of() : router.getRoutes();
    }

    /** What the first-start bootstrap created or confirmed; empty for a streams-only process. */
    public Optional<Bootstrap.Result> bootstrap() {
        return bootstrap;
    }

    public Optional<StreamsApp> streams() {
        return Optional.ofNullable(streams.get());
    }

    static <T> T await(final io.vertx.core.Future<T> future) throws Exception {
        return await(future, START_TIMEOUT);
    }

    private static <T> T await(final io.vertx.core.Future<T> future, final Duration timeout) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    /**
     * Stops in the order that loses no request: readiness answers 503 while the servers keep serving for
     * {@code http.drain-delay-ms}; the servers stop accepting and let requests in flight finish (up to
     * {@code http.drain-timeout-ms}); then the parts close in reverse order, the producer (after its last acks) and
     * the Streams instance among them.
     */
    @Override
    public void close() {
        final HealthRoutes draining = health;
        if (draining != null && !vertx.deploymentIDs().isEmpty()) {
            draining.drain();
            final Duration delay = config.http().drainDelay();
            if (!delay.isZero()) {
                LOG.info("stopping: readiness answers 503; serving {} ms more before refusing connections", delay.toMillis());
                try {
                    Thread.sleep(delay.toMillis());
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (vertx != null) {
            // Stop taking requests first: undeploying the HTTP verticles drains and closes their servers.
            for (final String deployment : vertx.deploymentIDs()) {
                try {
                    await(vertx.undeploy(deployment), config.http().drainTimeout().plus(START_TIMEOUT));
                } catch (final Exception e) {
                    LOG.warn("closing an HTTP server: {}", e.toString());
                }
            }
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (final Exception e) {
                LOG.warn("closing {}: {}", closeables.get(i), e.toString());
            }
        }
        if (vertx != null) {
            try {
                await(vertx.close());
            } catch (final Exception e) {
                LOG.warn("closing Vert.x: {}", e.toString());
            }
        }
    }
}
