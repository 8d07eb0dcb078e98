package dev.eddy.gateway;

import dev.eddy.config.EddyConfig;
import dev.eddy.gateway.actions.ActionRepository;
import dev.eddy.gateway.actions.ActionRoutes;
import dev.eddy.gateway.activity.ActivityLog;
import dev.eddy.gateway.activity.ActivityRoutes;
import dev.eddy.gateway.auth.AccessChanges;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.auth.PersonalApiKeyRepository;
import dev.eddy.gateway.auth.PersonalApiKeyRoutes;
import dev.eddy.gateway.capture.CaptureRoutes;
import dev.eddy.gateway.capture.EventProducer;
import dev.eddy.gateway.capture.GeoIpTransformation;
import dev.eddy.gateway.capture.ProjectTokens;
import dev.eddy.gateway.cohorts.CohortDefinitions;
import dev.eddy.gateway.cohorts.CohortRepository;
import dev.eddy.gateway.cohorts.CohortRoutes;
import dev.eddy.gateway.dashboards.CollaboratorRoutes;
import dev.eddy.gateway.dashboards.Collaborators;
import dev.eddy.gateway.dashboards.Dashboard;
import dev.eddy.gateway.dashboards.DashboardRepository;
import dev.eddy.gateway.dashboards.DashboardRoutes;
import dev.eddy.gateway.db.Database;
import dev.eddy.gateway.flags.DecideRoutes;
import dev.eddy.gateway.flags.FeatureFlagRepository;
import dev.eddy.gateway.flags.FeatureFlagRoutes;
import dev.eddy.gateway.flags.FlagPublisher;
import dev.eddy.gateway.flags.FlagsRateLimiter;
import dev.eddy.gateway.flags.FlagsService;
import dev.eddy.gateway.flags.HashKeyOverrides;
import dev.eddy.gateway.flags.LocalEvaluationRoutes;
import dev.eddy.gateway.geoip.GeoIp;
import dev.eddy.gateway.http.ApiContract;
import dev.eddy.gateway.insights.InsightCalculations;
import dev.eddy.gateway.insights.InsightRepository;
import dev.eddy.gateway.insights.InsightRoutes;
import dev.eddy.gateway.live.DashboardViews;
import dev.eddy.gateway.live.LiveDashboards;
import dev.eddy.gateway.live.LiveRoutes;
import dev.eddy.gateway.persons.PersonsRoutes;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.projects.ProjectAddressing;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.gateway.projects.ProjectRoutes;
import dev.eddy.gateway.query.ListQueries;
import dev.eddy.gateway.query.QueryRoutes;
import dev.eddy.gateway.sdk.PostHogJsBundles;
import dev.eddy.gateway.sdk.RemoteConfigRoutes;
import dev.eddy.gateway.sharing.SharedLinks;
import dev.eddy.gateway.sharing.SharedPage;
import dev.eddy.gateway.sharing.SharingRepository;
import dev.eddy.gateway.sharing.SharingRoutes;
import dev.eddy.gateway.trends.EventCountRoutes;
import dev.eddy.gateway.trends.InsightActors;
import dev.eddy.gateway.trends.InsightPersonsRoutes;
import dev.eddy.gateway.trends.InsightQueryRoutes;
import dev.eddy.gateway.trends.InsightQueryService;
import dev.eddy.gateway.users.UserRepository;
import dev.eddy.gateway.users.UserRoutes;
import dev.eddy.serde.Json;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway's routes, wired by area. Each area lists its routes in their matching order, and
 * {@link #inMatchingOrder} puts the areas in the order a request meets them: capture; flags (the busiest routes after
 * capture, so a request is matched against few routes); the management API (body limits, schema, key, validation, then
 * its resources); the SDKs' assets and remote config; sharing and live dashboards. Repositories and services are made
 * once, here, and shared by every event loop's router.
 */
final class GatewayRoutes {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayRoutes.class);
    /** Largest management request body (dashboards and insights with their filters and queries). */
    private static final long MAX_API_BODY_BYTES = 1024 * 1024;
    /** How long /decide waits for the continuity flags' hash keys before leaving those flags out. */
    private static final Duration HASH_KEY_OVERRIDES_TIMEOUT = Duration.ofMillis(500);

    /** What the gateway shares with the reads every role serves. */
    record Shared(Vertx vertx, EddyConfig config, Pool pool, EventProducer producer, EddyTopics topics, MeterRegistry registry,
                  AuthFailureLimiter failures, Reads reads) {
    }

    private final Shared shared;
    private final Reads reads;
    private final ActionRepository actions;
    private final CohortRepository cohorts;
    private final AccessChanges access;
    private final ProjectRepository projects;
    private final ProjectTokens tokens;
    private final PersonalApiKeyAuth auth;
    private final ApiContract contract;
    private final Path uploads;
    private final UserRepository users;
    private final InsightRepository insights;
    private final DashboardRepository dashboards;
    private final InsightCalculations calculations;
    private final LiveDashboards live;
    private final FeatureFlagRepository flags;
    private final FlagPublisher publisher;
    private final CohortDefinitions cohortDefinitions;
    private final FlagsService evaluation;
    private final GeoIp geoIp;
    private final PostHogJsBundles bundles;
    private final SharingRepository sharing;

    /** Makes the gateway's repositories and services; {@code closeables} takes what must be closed with the process. */
    GatewayRoutes(final Shared shared, final Consumer<AutoCloseable> closeables) throws Exception {
        this.shared = shared;
        this.reads = shared.reads();
        // A gateway has PostgreSQL, so the reads have the saved actions and cohorts to inline.
        this.actions = reads.actions().orElseThrow();
        this.cohorts = reads.cohorts().orElseThrow();
        final Pool pool = shared.pool();
        access = AccessChanges.listen(shared.vertx(), Database.connectOptions(shared.config().pg()), shared.registry());
        closeables.accept(access);
        projects = new ProjectRepository(pool, access);
        tokens = new ProjectTokens(projects::idForToken);
        auth = new PersonalApiKeyAuth(new PersonalApiKeyRepository(pool, access), shared.failures());
        contract = Eddy.await(ApiContract.load(shared.vertx()));
        uploads = uploadsDirectory();
        users = new UserRepository(pool);
        insights = new InsightRepository(pool);
        dashboards = new DashboardRepository(pool);
        // Statuses and results shared with the other gateways through PostgreSQL.
        calculations = InsightCalculations.shared(InsightCalculations.Engine.of(reads.insightQueries()), shared.config().insights(),
                Clock.systemUTC(), shared.vertx(), pool, Database.connectOptions(shared.config().pg()), closeables);
        live = new LiveDashboards(shared.vertx(), new DashboardViews(reads.changes(), projects, dashboards, calculations),
                shared.config().dashboards(), shared.registry());
        flags = new FeatureFlagRepository(pool);
        publisher = new FlagPublisher(shared.vertx(), shared.producer(), shared.topics().flagDefinitions().name(), flags);
        // The topic is rebuilt from PostgreSQL at every start: whatever a crash left unpublished converges.
        Eddy.await(publisher.republishAll());
        cohortDefinitions = new CohortDefinitions(cohorts);
        evaluation = new FlagsService(reads.scatter(), reads.persons(), flags, new HashKeyOverrides(pool, HASH_KEY_OVERRIDES_TIMEOUT),
                cohortDefinitions);
        geoIp = openGeoIp(shared.config());
        closeables.accept(geoIp);
        bundles = PostHogJsBundles.load();
        sharing = new SharingRepository(pool);
    }

    List<Consumer<Router>> inMatchingOrder() {
        final List<Consumer<Router>> routes = new ArrayList<>();
        routes.addAll(capture());
        routes.addAll(flags());
        routes.addAll(management());
        routes.addAll(sdk());
        routes.addAll(sharingAndLive());
        return routes;
    }

    /** {@code /capture/}, {@code /batch/}, {@code /e/} and the other ingestion paths. */
    private List<Consumer<Router>> capture() {
        return List.of(new CaptureRoutes(tokens, shared.failures(), shared.producer(), shared.topics(), shared.config().capture(),
                shared.registry(), GeoIpTransformation.of(geoIp))::mount);
    }

    /** {@code /decide} and {@code /flags}: a project API key, no management key. */
    private List<Consumer<Router>> flags() {
        return List.of(new DecideRoutes(tokens, shared.failures(), new FlagsRateLimiter(shared.config().rateLimits().flags(),
                shared.registry()), evaluation, geoIp)::mount);
    }

    /**
     * {@code /api/...}: PostHog's environment paths answered as their projects' first; then bodies bounded (a cohort's
     * CSV may be a form's file, streamed to a temporary file deleted when the request ends; other bodies are small JSON
     * documents, never written to disk), the schema route (open), the personal API key, {@code @current} resolved, the
     * request's validation against the API description, then the resources. Insight queries come before the saved
     * insights, whose {@code /insights/:id} would take "trend" for an id.
     */
    private List<Consumer<Router>> management() {
        final PersonsService persons = reads.persons();
        final InsightQueryService insightQueries = reads.insightQueries();
        final InsightActors insightActors = new InsightActors(insightQueries, persons);
        final ProjectAddressing addressing = new ProjectAddressing(projects);
        return List.of(
                ProjectAddressing::mountEnvironments,
                router -> router.routeWithRegex("^/api/projects/[^/]+/cohorts(/.*)?$").handler(CohortRoutes.bodyHandler(uploads)),
                router -> router.route("/api/*").handler(BodyHandler.create(false).setBodyLimit(MAX_API_BODY_BYTES)),
                contract::mountSchema,
                router -> router.route("/api/*").handler(auth),
                addressing::mountCurrent,
                contract::mountValidation,
                new ProjectRoutes(projects)::mount,
                new EventCountRoutes(projects, reads.eventCounts())::mount,
                new InsightPersonsRoutes(projects, insightActors)::mount,
                new PersonsRoutes(projects, persons)::mount,
                new InsightQueryRoutes(projects, insightQueries)::mount,
                new InsightRoutes(projects, insights, new ActivityLog(shared.pool()), (project, dashboard) -> dashboards
                        .find(project, 0, dashboard).map(d -> d.filter(x -> !x.deleted()).map(Dashboard::filters)
                                .orElseGet(() -> Json.mapper().createObjectNode())), calculations, shared.registry())::mount,
                new DashboardRoutes(projects, dashboards, calculations, live::viewed)::mount,
                new QueryRoutes(projects, calculations, new ListQueries(persons, insightActors, reads.inliner(), reads.scatter(),
                        shared.config().insights().queryTimeout()))::mount,
                new ActivityRoutes(projects, new ActivityLog(shared.pool()))::mount,
                new CollaboratorRoutes(projects, dashboards, new Collaborators(shared.pool()), users)::mount,
                new UserRoutes(users)::mount,
                new FeatureFlagRoutes(projects, flags, publisher, cohorts)::mount,
                new ActionRoutes(projects, actions)::mount,
                new CohortRoutes(projects, cohorts, persons, flags)::mount,
                new LocalEvaluationRoutes(tokens, projects, flags, evaluation, auth, cohortDefinitions)::mount);
    }

    /**
     * What the SDKs load: posthog-js's bundles (before the shared page's assets, which share {@code /static/}), remote
     * config, and the personal API key routes PostHog serves outside {@code /api/projects}.
     */
    private List<Consumer<Router>> sdk() {
        return List.of(bundles::mount,
                new RemoteConfigRoutes(tokens, shared.failures(), evaluation::hasActiveFlags, bundles)::mount,
                new PersonalApiKeyRoutes(shared.pool(), access)::mount);
    }

    /** Shared dashboards and insights, and the live streams of dashboards. */
    private List<Consumer<Router>> sharingAndLive() {
        return List.of(new SharingRoutes(projects, dashboards, insights, sharing, calculations, SharedPage.load())::mount,
                new LiveRoutes(projects, dashboards, new SharedLinks(sharing, dashboards, insights), auth, live)::mount);
    }

    private static GeoIp openGeoIp(final EddyConfig config) throws IOException {
        if (config.geoip().database().isEmpty()) {
            LOG.info("no geoip.database configured: neither capture nor /decide derives $geoip_* properties");
            return GeoIp.disabled();
        }
        final GeoIp geoIp = GeoIp.open(config.geoip().database().get());
        LOG.info("GeoIP database {}", geoIp);
        return geoIp;
    }

    /** A directory of this process's own for uploads in flight (each file deleted when its request ends). */
    private static Path uploadsDirectory() throws IOException {
        final Path directory = Files.createTempDirectory("eddy-uploads-");
        directory.toFile().deleteOnExit();
        return directory;
    }
}
