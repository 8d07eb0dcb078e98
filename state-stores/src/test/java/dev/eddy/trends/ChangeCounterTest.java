package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;

/**
 * A partition's change counters ({@link HourlyEventKey#changes}) share the hourly counts' store with the counts:
 * no reader of a project's counts may take a counter for events, whatever range it asks for.
 */
class ChangeCounterTest {
    private static final Instant H10 = Instant.parse("2026-11-22T10:00:00Z");
    /** A counter's key keeps the project id where the hour goes: project 1's counter sits at 1970-01-01T01:00. */
    private static final Instant EPOCH = Instant.EPOCH;

    @Test
    void theCounterIsInTheBookkeepingProjectKeyedByProject() {
        assertThat(HourlyEventKey.changes(42)).isEqualTo(new HourlyEventKey(0, 42, "#changes"));
        assertThat(HourlyEventKey.changes(42)).isNotEqualTo(HourlyEventKey.changes(43)).isNotEqualTo(HourlyEventKey.settled(42));
    }

    @Test
    void hourlyCountQueriesNeverReadTheCounters() {
        final SortedStore<HourlyEventKey, Long> store = storeWithCounters();

        assertThat(new HourlyCountQuery(1, EPOCH, H10.plusSeconds(3600), Optional.empty()).run(store)).containsExactly(
                new HourlyCount("$pageview", EPOCH.plusSeconds(3600), 1),
                new HourlyCount("$pageview", H10, 2),
                new HourlyCount("signup", H10, 5));
        assertThat(new HourlyCountQuery(1, EPOCH, EPOCH.plusSeconds(7200), Optional.of("#changes")).run(store)).isEmpty();
    }

    @Test
    void trendsAnsweredFromRollupsNeverCountTheCounters() {
        final SortedStore<HourlyEventKey, Long> hourly = storeWithCounters();
        // Every event, daily, over the first two days of 1970: where the counters' keys would fall as hours.
        final TrendQuery trend = TrendQuery.parse(json("{\"events\":[{\"id\":null}],\"date_from\":\"1970-01-01\",\"date_to\":\"1970-01-02\"}"),
                ZoneOffset.UTC, DayOfWeek.SUNDAY, Json.mapper().createArrayNode(), H10, Optional::empty);
        final TrendQuery.Partial partial = trend.partial();

        assertThat(trend.answerableFromRollups()).as("rollups").isTrue();
        assertThat(trend.countInto(partial, HourlyCells.of(hourly, built()), new SortedStore<>(Serdes.Bytes()), 1)).isTrue();

        final JsonNode data = trend.result(partial).get(0).get("data");
        assertThat(data).hasSize(2);
        assertThat(data.get(0).asInt()).as("the 01:00 event of project 1, not its counter (42) at that hour").isEqualTo(1);
        assertThat(trend.result(partial).get(0).get("count").asInt()).isEqualTo(1);
    }

    /** A partition's metadata saying its rollups are built. */
    static SortedStore<String, String> built() {
        final SortedStore<String, String> metadata = new SortedStore<>(Serdes.String());
        metadata.put(TimelineMetadata.ROLLUPS_BUILT, "1");
        return metadata;
    }

    /** Project 1's counts, with the bookkeeping entries every partition has: counters of projects 1 and 2. */
    private static SortedStore<HourlyEventKey, Long> storeWithCounters() {
        final SortedStore<HourlyEventKey, Long> store = new SortedStore<>(HourlyEventKey.serde());
        store.put(HourlyEventKey.changes(1), 42L);
        store.put(HourlyEventKey.changes(2), 7L);
        store.put(HourlyEventKey.of(1, EPOCH.plusSeconds(3600), "$pageview"), 1L);
        store.put(HourlyEventKey.of(1, H10, "$pageview"), 2L);
        store.put(HourlyEventKey.of(1, H10, "signup"), 5L);
        return store;
    }

    private static JsonNode json(final String text) {
        try {
            return Json.mapper().readTree(text);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
