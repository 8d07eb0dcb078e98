package dev.eddy.topology.trends;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import dev.eddy.trends.HourlyEventKey;
import dev.eddy.trends.UniqueMarkers;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The rollups alone: counts, markers and change counters as events enter and leave, without a processor. */
class RollupsTest {
    private static final long PROJECT = 3;
    private static final UUID PERSON = new UUID(7, 7);
    private static final Instant NOW = Instant.parse("2026-11-28T12:30:00Z");
    /** The hour before the current one: not settled yet (nor is the current one, an hour later). */
    private static final Instant H10 = Instant.parse("2026-11-28T11:05:00Z");
    private static final Instant LAST_WEEK = Instant.parse("2026-11-21T09:00:00Z");

    private final KeyValueStore<HourlyEventKey, Long> counts = memory("counts", HourlyEventKey.serde(), Serdes.Long());
    private final KeyValueStore<Bytes, byte[]> markers = memory("markers", Serdes.Bytes(), Serdes.ByteArray());
    private final KeyValueStore<Bytes, byte[]> timelines = memory("timelines", Serdes.Bytes(), Serdes.ByteArray());
    private final Rollups rollups = new Rollups(counts, markers, NOW::toEpochMilli);

    @Test
    void eventsCountInTheirHourAndMarkTheirPersonOnce() {
        rollups.index(PROJECT, PERSON, event("$pageview", H10));
        rollups.index(PROJECT, PERSON, event("$pageview", H10.plusSeconds(60)));
        rollups.index(PROJECT, PERSON, event("signup", H10.plusSeconds(3600)));

        assertThat(counts.get(HourlyEventKey.of(PROJECT, H10, "$pageview"))).isEqualTo(2L);
        assertThat(counts.get(HourlyEventKey.of(PROJECT, H10.plusSeconds(3600), "signup"))).isEqualTo(1L);
        final long day = UniqueMarkers.dayOf(H10);
        assertThat(UniqueMarkers.hours(markers.get(UniqueMarkers.key(PROJECT, "$pageview", day, PERSON))))
                .isEqualTo(UniqueMarkers.hourBit(H10));
        assertThat(UniqueMarkers.hours(markers.get(UniqueMarkers.key(PROJECT, UniqueMarkers.ALL_EVENTS, day, PERSON))))
                .isEqualTo(UniqueMarkers.hourBit(H10) | UniqueMarkers.hourBit(H10.plusSeconds(3600)));
        assertThat(counts.get(HourlyEventKey.settled(PROJECT))).as("the last two hours are not settled").isNull();
    }

    @Test
    void anEventLeavingTakesItsCountAndAnEmptyCellGoes() {
        final TimelineEvent event = event("$pageview", H10);
        rollups.index(PROJECT, PERSON, event);
        rollups.index(PROJECT, PERSON, event);
        rollups.uncount(PROJECT, event);
        assertThat(counts.get(HourlyEventKey.of(PROJECT, H10, "$pageview"))).isEqualTo(1L);
        rollups.uncount(PROJECT, event);
        assertThat(counts.get(HourlyEventKey.of(PROJECT, H10, "$pageview"))).isNull();
    }

    @Test
    void aCountOfASettledHourCountsAChangeOfTheSettledHours() {
        rollups.index(PROJECT, PERSON, event("$pageview", LAST_WEEK));
        rollups.uncount(PROJECT, event("$pageview", LAST_WEEK));
        assertThat(counts.get(HourlyEventKey.settled(PROJECT))).isEqualTo(2L);
        rollups.changed(PROJECT, 5);
        rollups.changed(PROJECT, 1);
        assertThat(counts.get(HourlyEventKey.changes(PROJECT))).isEqualTo(6L);
    }

    @Test
    void markersAreRecomputedFromWhatTheTimelineStillHolds() {
        final TimelineEvent kept = event("signup", H10);
        final TimelineEvent gone = event("$pageview", H10.plusSeconds(3600));
        rollups.index(PROJECT, PERSON, kept);
        rollups.index(PROJECT, PERSON, gone);
        timelines.put(TimelineKeys.of(PROJECT, PERSON, kept.timeMicros(), kept.uuid()), kept.encode());

        final long day = UniqueMarkers.dayOf(H10);
        rollups.remark(timelines, PROJECT, PERSON, day, Set.of("$pageview"));

        assertThat(markers.get(UniqueMarkers.key(PROJECT, "$pageview", day, PERSON))).as("no $pageview left that day").isNull();
        assertThat(UniqueMarkers.hours(markers.get(UniqueMarkers.key(PROJECT, UniqueMarkers.ALL_EVENTS, day, PERSON))))
                .isEqualTo(UniqueMarkers.hourBit(H10));

        final Set<Bytes> keys = new java.util.HashSet<>();
        Rollups.addMarkerKeys(keys, PROJECT, PERSON, kept);
        rollups.unmark(keys);
        assertThat(markers.get(UniqueMarkers.key(PROJECT, "signup", day, PERSON))).isNull();
        assertThat(markers.get(UniqueMarkers.key(PROJECT, UniqueMarkers.ALL_EVENTS, day, PERSON))).isNull();
    }

    private static TimelineEvent event(final String name, final Instant at) {
        return new TimelineEvent(TimelineEvent.micros(at), UUID.nameUUIDFromBytes((name + at).getBytes(StandardCharsets.UTF_8)), name,
                "d", Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
    }

    static <K, V> KeyValueStore<K, V> memory(final String name, final org.apache.kafka.common.serialization.Serde<K> keys,
                                             final org.apache.kafka.common.serialization.Serde<V> values) {
        final KeyValueStore<K, V> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values)
                .withLoggingDisabled().build();
        store.init(new org.apache.kafka.streams.processor.api.MockProcessorContext<>().getStateStoreContext(), store);
        return store;
    }
}
