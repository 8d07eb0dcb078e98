package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Runs trend queries over this instance's event timelines, with each person's current properties from the persons
 * store and groups' from the global groups store, in one blocking call on a worker thread. While queries are not
 * scattered over instances, timelines spread over several instances answer 503 ({@link LocalStores}).
 */
public final class TrendService {
    private final LocalStores stores;

    public TrendService(final LocalStores stores) {
        this.stores = stores;
    }

    /**
     * @param query the request in PostHog's filter format
     * @return PostHog's result items
     */
    public Future<ArrayNode> trend(final Project project, final JsonNode query) {
        final ProjectTime time;
        try {
            time = ProjectTime.of(project);
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", e.getMessage(), null));
        }
        return stores.readAll(List.of(StoreNames.EVENT_TIMELINES, StoreNames.PERSONS), reader -> {
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = reader.store(StoreNames.EVENT_TIMELINES,
                    QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, PersonState> persons = reader.store(StoreNames.PERSONS, QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, GroupState> groups = reader.store(StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.keyValueStore());
            final Instant now = Instant.now();
            final TrendQuery trend;
            try {
                trend = TrendQuery.parse(query, time.zone(), time.weekStart(), project.testAccountFilters(), now,
                        () -> TimelineScans.earliest(timelines, project.id()));
            } catch (final IllegalArgumentException e) {
                throw ApiError.badRequest("invalid_input", e.getMessage(), null);
            }
            final TrendQuery.Partial partial = trend.partial();
            final TrendQuery.Properties properties = TimelineScans.properties(project.id(), persons, groups);
            try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.projectStart(project.id()),
                    TimelineKeys.projectEnd(project.id()))) {
                while (it.hasNext()) {
                    final KeyValue<Bytes, byte[]> entry = it.next();
                    trend.add(partial, TimelineKeys.person(entry.key).toString(), TimelineEvent.decode(entry.value), properties, now);
                }
            }
            return trend.result(partial);
        });
    }
}
