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
import dev.eddy.trends.TrendQuery;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Runs funnel queries over this instance's event timelines: the project's timelines are read person by person (the
 * store's key order), each person's events in time order, as the funnel engines need them.
 */
public final class FunnelService {
    private final LocalStores stores;

    public FunnelService(final LocalStores stores) {
        this.stores = stores;
    }

    public Future<ArrayNode> funnel(final Project project, final JsonNode query) {
        final ProjectTime time;
        try {
            time = ProjectTime.of(project);
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", e.getMessage(), null));
        }
        return stores.readAll(List.of(StoreNames.EVENT_TIMELINES, StoreNames.PERSONS), reader -> {
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = reader.store(StoreNames.EVENT_TIMELINES, QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, PersonState> persons = reader.store(StoreNames.PERSONS, QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, GroupState> groups = reader.store(StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.keyValueStore());
            final Instant now = Instant.now();
            final FunnelQuery funnel;
            try {
                funnel = FunnelQuery.parse(query, time.zone(), time.weekStart(), project.testAccountFilters(), now,
                        () -> TimelineScans.earliest(timelines, project.id()));
            } catch (final IllegalArgumentException e) {
                throw ApiError.badRequest("invalid_input", e.getMessage(), null);
            }
            final FunnelQuery.Partial partial = funnel.partial();
            final TrendQuery.Properties properties = TimelineScans.properties(project.id(), persons, groups);
            UUID current = null;
            final List<TimelineEvent> events = new ArrayList<>();
            try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.projectStart(project.id()),
                    TimelineKeys.projectEnd(project.id()))) {
                while (it.hasNext()) {
                    final KeyValue<Bytes, byte[]> entry = it.next();
                    final UUID person = TimelineKeys.person(entry.key);
                    if (!person.equals(current)) {
                        evaluate(funnel, partial, current, events, properties, now);
                        current = person;
                        events.clear();
                    }
                    events.add(TimelineEvent.decode(entry.value));
                }
            }
            evaluate(funnel, partial, current, events, properties, now);
            return funnel.result(partial);
        });
    }

    private static void evaluate(final FunnelQuery funnel, final FunnelQuery.Partial partial, final UUID person,
                                 final List<TimelineEvent> events, final TrendQuery.Properties properties, final Instant now) {
        if (person == null || events.isEmpty()) {
            return;
        }
        final String id = person.toString();
        funnel.add(partial, events, e -> new TrendQuery.EventSource(id, e, properties), now);
    }
}
