package dev.eddy.query.insights;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.groups.GroupState;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.PropertyLookup;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** What trend and funnel queries read besides the timelines themselves, within one blocking store call. */
final class TimelineScans {
    private TimelineScans() {
    }

    /** The project's earliest event time, for {@code date_from: all}. */
    static Optional<Instant> earliest(final ReadOnlyKeyValueStore<Bytes, byte[]> timelines, final long projectId) {
        long min = Long.MAX_VALUE;
        try (KeyValueIterator<Bytes, byte[]> it = timelines.range(TimelineKeys.projectStart(projectId), TimelineKeys.projectEnd(projectId))) {
            while (it.hasNext()) {
                min = Math.min(min, TimelineEvent.timeOf(it.next().value));
            }
        }
        return min == Long.MAX_VALUE ? Optional.empty()
                : Optional.of(TimelineEvent.instant(min));
    }

    /** Persons' and groups' current properties, each read once per query. */
    static PropertyLookup properties(final long projectId, final ReadOnlyKeyValueStore<String, PersonState> persons,
                                            final ReadOnlyKeyValueStore<String, GroupState> groups) {
        final Map<String, ObjectNode> personCache = new HashMap<>();
        final Map<String, ObjectNode> groupCache = new HashMap<>();
        return new PropertyLookup() {
            @Override
            public ObjectNode person(final String personUuid) {
                return personCache.computeIfAbsent(personUuid, uuid -> Optional.ofNullable(persons.get(projectId + ":" + uuid))
                        .map(PersonState::properties).orElseGet(() -> Json.mapper().createObjectNode()));
            }

            @Override
            public Optional<Instant> personCreatedAt(final String personUuid) {
                return Optional.ofNullable(persons.get(projectId + ":" + personUuid)).map(PersonState::createdAt);
            }

            @Override
            public java.util.List<String> personDistinctIds(final String personUuid) {
                return Optional.ofNullable(persons.get(projectId + ":" + personUuid)).map(PersonState::distinctIds).orElse(java.util.List.of());
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
