package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.eddy.funnels.FunnelQuery;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.LocalStores;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.TimelineEventSource;
import dev.eddy.trends.TrendQuery;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Runs trend and funnel queries over this instance's event timelines, with each person's current properties from the
 * persons store and groups' from the global groups store, in one blocking call on a worker thread. While queries are
 * not scattered over instances, timelines spread over several instances answer 503 ({@link LocalStores}).
 */
public final class InsightQueryService {
    /** Scans check their {@link QueryControl} once per this many timeline entries. */
    private static final int CHECK_EVERY = 4096;

    private final LocalStores stores;
    private final java.time.Duration timeout;

    /**
     * @param timeout how long a calculation may run before it is abandoned ({@code insights.query-timeout})
     */
    public InsightQueryService(final LocalStores stores, final java.time.Duration timeout) {
        this.stores = stores;
        this.timeout = timeout;
    }

    /** A fresh control for one calculation, with the configured time limit. */
    public QueryControl control() {
        return QueryControl.within(timeout);
    }

    /** What a query reads: the project's calendar, its timelines, and persons' and groups' properties. */
    private record Scan(Project project, ProjectTime time, Instant now, ReadOnlyKeyValueStore<Bytes, byte[]> timelines,
                        PropertyLookup properties) {
        Optional<Instant> earliest() {
            return TimelineScans.earliest(timelines, project.id());
        }

        KeyValueIterator<Bytes, byte[]> events() {
            return timelines.range(TimelineKeys.projectStart(project.id()), TimelineKeys.projectEnd(project.id()));
        }
    }

    /** A trend: PostHog's result items. */
    public Future<ArrayNode> trend(final Project project, final JsonNode query) {
        return trend(project, query, control());
    }

    /** A trend, stopped when {@code control} is cancelled or runs out of time. */
    public Future<ArrayNode> trend(final Project project, final JsonNode query, final QueryControl control) {
        return scan(project, scan -> {
            final TrendQuery trend = parsed(() -> TrendQuery.parse(query, scan.time().zone(), scan.time().weekStart(),
                    project.testAccountFilters(), scan.now(), scan::earliest));
            final TrendQuery.Partial partial = trend.partial();
            int seen = 0;
            try (KeyValueIterator<Bytes, byte[]> it = scan.events()) {
                while (it.hasNext()) {
                    final KeyValue<Bytes, byte[]> entry = it.next();
                    if (++seen % CHECK_EVERY == 0) {
                        control.check();
                    }
                    if (!trend.relevant(TimelineEvent.timeOf(entry.value))) {
                        continue;
                    }
                    trend.add(partial, TimelineKeys.person(entry.key).toString(), TimelineEvent.decode(entry.value), scan.properties(), scan.now());
                }
            }
            return trend.result(partial);
        });
    }

    /**
     * A funnel: PostHog's steps, or its time-to-convert histogram. The timelines are read person by person (the
     * store's key order), each in time order.
     */
    public Future<JsonNode> funnel(final Project project, final JsonNode query) {
        return funnel(project, query, control());
    }

    /** A funnel, stopped when {@code control} is cancelled or runs out of time. */
    public Future<JsonNode> funnel(final Project project, final JsonNode query, final QueryControl control) {
        return scan(project, scan -> {
            final FunnelQuery funnel = parsed(() -> FunnelQuery.parse(query, scan.time().zone(), scan.time().weekStart(),
                    project.testAccountFilters(), scan.now(), scan::earliest));
            final FunnelQuery.Partial partial = funnel.partial();
            UUID current = null;
            final List<TimelineEvent> events = new ArrayList<>();
            int seen = 0;
            try (KeyValueIterator<Bytes, byte[]> it = scan.events()) {
                while (it.hasNext()) {
                    final KeyValue<Bytes, byte[]> entry = it.next();
                    if (++seen % CHECK_EVERY == 0) {
                        control.check();
                    }
                    final UUID person = TimelineKeys.person(entry.key);
                    if (!person.equals(current)) {
                        evaluate(funnel, partial, current, events, scan);
                        current = person;
                        events.clear();
                    }
                    if (funnel.relevant(TimelineEvent.timeOf(entry.value))) {
                        events.add(TimelineEvent.decode(entry.value));
                    }
                }
            }
            evaluate(funnel, partial, current, events, scan);
            return funnel.result(partial);
        });
    }

    private static void evaluate(final FunnelQuery funnel, final FunnelQuery.Partial partial, final UUID person,
                                 final List<TimelineEvent> events, final Scan scan) {
        if (person == null || events.isEmpty()) {
            return;
        }
        final String id = person.toString();
        funnel.add(partial, events, e -> new TimelineEventSource(id, e, scan.properties()), scan.now());
    }

    private <T> Future<T> scan(final Project project, final Function<Scan, T> query) {
        final ProjectTime time;
        try {
            time = ProjectTime.of(project);
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", e.getMessage(), null));
        }
        return stores.readAll(List.of(StoreNames.EVENT_TIMELINES, StoreNames.PERSONS), reader -> {
            final ReadOnlyKeyValueStore<String, PersonState> persons = reader.store(StoreNames.PERSONS, QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, GroupState> groups = reader.store(StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.keyValueStore());
            return query.apply(new Scan(project, time, Instant.now(), reader.store(StoreNames.EVENT_TIMELINES, QueryableStoreTypes.keyValueStore()),
                    TimelineScans.properties(project.id(), persons, groups)));
        });
    }

    /** A query as parsed, or the reason PostHog would refuse it as a 400. */
    private static <Q> Q parsed(final java.util.function.Supplier<Q> parse) {
        try {
            return parse.get();
        } catch (final IllegalArgumentException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage(), null);
        }
    }
}
