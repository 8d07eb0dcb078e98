package dev.eddy.gateway;

import dev.eddy.config.EddyConfig;
import dev.eddy.gateway.actions.ActionInliner;
import dev.eddy.gateway.actions.ActionRepository;
import dev.eddy.gateway.cohorts.CohortDefinitions;
import dev.eddy.gateway.cohorts.CohortRepository;
import dev.eddy.gateway.flags.FlagsService;
import dev.eddy.gateway.live.ProjectChanges;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.streams.InstanceClient;
import dev.eddy.gateway.streams.Instances;
import dev.eddy.gateway.streams.InternalSecret;
import dev.eddy.gateway.streams.KeyReads;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.trends.EventCountService;
import dev.eddy.gateway.trends.InsightQueryService;
import dev.eddy.gateway.trends.QueryInliner;
import dev.eddy.query.insights.EventListRead;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.topology.StreamsApp;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.sqlclient.Pool;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The reads of the Streams instances' state, and the services built on them: keyed reads (flags, a person) and
 * scatters (every partition: trends, funnels, persons lists, event counts). Every role makes them: a streams instance
 * answers the others' partials with them, a gateway asks with them.
 *
 * @param actions the saved actions a query inlines, when this process has PostgreSQL
 * @param cohorts the saved cohorts a query inlines, when this process has PostgreSQL
 * @param inliner puts the definitions of the actions and cohorts a query names into it
 */
record Reads(KeyReads keyed, Scatter scatter, PersonsService persons, InsightQueryService insightQueries,
             EventCountService eventCounts, ProjectChanges changes, Optional<ActionRepository> actions,
             Optional<CohortRepository> cohorts, QueryInliner inliner) {

    /**
     * @param streams    the streams instance in this process, once started (always empty for a gateway)
     * @param advertised this instance's {@code host:port} for the others
     * @param directory  the streams instances to hand reads to, for a process that runs none
     * @param transport  how this process reaches other instances' {@code /_internal} routes
     */
    static Reads of(final Vertx vertx, final EddyConfig config, final Supplier<Optional<StreamsApp>> streams,
                    final Supplier<String> advertised, final InternalSecret secret, final Optional<Instances.Directory> directory,
                    final HttpClientOptions transport, final Optional<Pool> pool, final MeterRegistry registry) {
        // Keyed reads get connections of their own: never queued behind long scatter requests.
        final KeyReads keyed = new KeyReads(vertx, streams, advertised, secret, directory, config.http().internalTimeout(),
                new InstanceClient(vertx, secret, transport, 16), registry);
        final Scatter scatter = new Scatter(vertx, streams, advertised, secret, directory,
                new InstanceClient(vertx, secret, transport, 8), registry);
        // Every role registers its partials: a streams-only instance answers them for the others.
        final Optional<ActionRepository> actions = pool.map(ActionRepository::new);
        final Optional<CohortRepository> cohorts = pool.map(CohortRepository::new);
        final QueryInliner inliner = pool.isEmpty() ? QueryInliner.NONE
                : new ActionInliner(actions.orElseThrow()).then(new CohortDefinitions(cohorts.orElseThrow()));
        final InsightQueryService insightQueries = new InsightQueryService(scatter, config.insights().queryTimeout(),
                new InsightEngine(config.insights().blockCache(), config.insights().answerCache(), registry), inliner, registry);
        final ProjectChanges changes = ProjectChanges.register(scatter);
        final PersonsService persons = new PersonsService(scatter, keyed, config.insights().queryTimeout());
        final EventCountService eventCounts = new EventCountService(scatter, config.insights().queryTimeout());
        FlagsService.registerReads(scatter);
        scatter.register(EventListRead.KIND, new EventListRead());
        return new Reads(keyed, scatter, persons, insightQueries, eventCounts, changes, actions, cohorts, inliner);
    }
}
