package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.LocalStores;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.TrendQuery;
import io.vertx.core.Future;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
        final ZoneId zone;
        try {
            zone = ZoneId.of(project.timezone());
        } catch (final java.time.DateTimeException e) {
            return Future.failedFuture(ApiError.badRequest("invalid_timezone", "The project's timezone is not valid.", null));
        }
        final DayOfWeek weekStart = project.weekStartDay() == 1 ? DayOfWeek.MONDAY : DayOfWeek.SUNDAY;
        return stores.readAll(List.of(StoreNames.EVENT_TIMELINES, StoreNames.PERSONS), reader -> {
            final ReadOnlyKeyValueStore<Bytes, byte[]> timelines = reader.store(StoreNames.EVENT_TIMELINES,
                    QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, PersonState> persons = reader.store(StoreNames.PERSONS, QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, GroupState> groups = reader.store(StoreNames.GROUPS_GLOBAL, QueryableStoreTypes.keyValueStore());
            final Instant now = Instant.now();
            final TrendQuery trend;
            try {
                trend = TrendQuery.parse(query, zone, weekStart, project.testAccountFilters(), now,
                        () -> earliest(timelines, project.id()));
            } catch (final IllegalArgumentException e) {
                throw ApiError.badRequest("invalid_input", e.getMessage(), null);
            }
            final TrendQuery.Partial partial = trend.partial();
            final TrendQuery.Properties properties = properties(project.id(), persons, groups);
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

    /** The project's earliest event time, for {@code date_from: all}. */
    private static Optional<Instant> earliest(final ReadOnlyKeyValueStore<Bytes, byte[]> timelines, final long projectId) {
        long min = Long.MAX_VALUE;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.projectStart(projectId), TimelineKeys.projectEnd(projectId))) {
            while (it.hasNext()) {
                min = Math.min(min, TimelineEvent.timeOf(it.next().value));
            }
        }
        return min == Long.MAX_VALUE ? Optional.empty()
                : Optional.of(Instant.ofEpochSecond(Math.floorDiv(min, 1_000_000L), Math.floorMod(min, 1_000_000L) * 1000L));
    }

    /** Persons' and groups' properties, each read once per query. */
    private static TrendQuery.Properties properties(final long projectId, final ReadOnlyKeyValueStore<String, PersonState> persons,
                                                    final ReadOnlyKeyValueStore<String, GroupState> groups) {
        final Map<String, ObjectNode> personCache = new HashMap<>();
        final Map<String, ObjectNode> groupCache = new HashMap<>();
        return new TrendQuery.Properties() {
            @Override
            public ObjectNode person(final String personUuid) {
                return personCache.computeIfAbsent(personUuid, uuid -> Optional.ofNullable(persons.get(projectId + ":" + uuid))
                        .map(PersonState::properties).orElseGet(() -> Json.mapper().createObjectNode()));
            }

            @Override
            public ObjectNode group(final int typeIndex, final String groupKey) {
                return groupCache.computeIfAbsent(typeIndex + ":" + groupKey, k -> Optional.ofNullable(
                        groups.get(GroupState.key(projectId, typeIndex, groupKey))).map(GroupState::properties)
                        .orElseGet(() -> Json.mapper().createObjectNode()));
            }
        };
    }
}
