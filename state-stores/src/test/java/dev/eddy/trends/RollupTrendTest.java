package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;

/**
 * Trends answered from the hourly counts equal the counts summed the plain way, through both of their paths: each
 * event's hours as one array per partition, and cell by cell for spans too long for an array (a range from 1990).
 */
class RollupTrendTest {
    private static final Instant NOW = Instant.parse("2026-11-22T15:30:00Z");
    private static final List<String> EVENTS = List.of("$pageview", "signup", "buy");

    private final SortedStore<HourlyEventKey, Long> store = new SortedStore<>(HourlyEventKey.serde());
    /** Each event's count per UTC day, as the cells were written. */
    private final Map<String, TreeMap<LocalDate, Long>> daily = new TreeMap<>();

    RollupTrendTest() {
        final Random random = new Random(18);
        final long first = Instant.parse("2026-09-01T00:00:00Z").getEpochSecond() / 3600;
        final long last = NOW.getEpochSecond() / 3600;
        for (int i = 0; i < 3_000; i++) {
            final String event = EVENTS.get(random.nextInt(EVENTS.size()));
            final long hour = first + random.nextInt((int) (last - first + 1));
            final long count = 1 + random.nextInt(5);
            final HourlyEventKey key = new HourlyEventKey(1, hour, event);
            final Long before = store.get(key);
            store.put(key, (before == null ? 0 : before) + count);
            daily.computeIfAbsent(event, e -> new TreeMap<>()).merge(LocalDate.ofEpochDay(hour / 24), count, Long::sum);
        }
        // Another project's cells in the same hours, never counted.
        store.put(new HourlyEventKey(2, first + 5, "$pageview"), 1_000L);
    }

    @Test
    void dailyCountsOfEventsAndOfEveryEventAreTheCellsSummed() throws Exception {
        final JsonNode result = count("{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"signup\"},{\"id\":null}],\"interval\":\"day\","
                + "\"date_from\":\"2026-09-01\",\"date_to\":\"2026-11-22\"}");
        assertThat(byDay(result.get(0))).isEqualTo(daily.get("$pageview"));
        assertThat(byDay(result.get(1))).isEqualTo(daily.get("signup"));
        final TreeMap<LocalDate, Long> every = new TreeMap<>();
        daily.values().forEach(days -> days.forEach((day, n) -> every.merge(day, n, Long::sum)));
        assertThat(byDay(result.get(2))).isEqualTo(every);
    }

    @Test
    void aSpanTooLongForAnArrayCountsCellByCellAlike() throws Exception {
        final JsonNode arrays = count("{\"events\":[{\"id\":\"buy\"},{\"id\":null}],\"interval\":\"month\",\"date_from\":\"2026-01-01\","
                + "\"date_to\":\"2026-11-22\"}");
        final JsonNode cells = count("{\"events\":[{\"id\":\"buy\"},{\"id\":null}],\"interval\":\"month\",\"date_from\":\"1990-01-01\","
                + "\"date_to\":\"2026-11-22\"}");
        for (int s = 0; s < 2; s++) {
            final JsonNode recent = arrays.get(s).get("data");
            final JsonNode all = cells.get(s).get("data");
            assertThat(all.size()).isGreaterThan(400);
            final List<Long> tail = new ArrayList<>();
            for (int i = all.size() - recent.size(); i < all.size(); i++) {
                tail.add(all.get(i).asLong());
            }
            final List<Long> expected = new ArrayList<>();
            recent.forEach(n -> expected.add(n.asLong()));
            assertThat(tail).isEqualTo(expected);
            assertThat(expected.stream().mapToLong(Long::longValue).sum()).isPositive();
        }
    }

    private JsonNode count(final String query) throws java.io.IOException {
        final TrendQuery trend = TrendQuery.parse(Json.mapper().readTree(query), ZoneOffset.UTC, DayOfWeek.SUNDAY,
                Json.mapper().createArrayNode(), NOW, Optional::empty);
        final TrendQuery.Partial partial = trend.partial();
        assertThat(trend.countInto(partial, HourlyCells.of(store, ChangeCounterTest.built()), new SortedStore<>(Serdes.Bytes()), 1)).isTrue();
        return trend.result(partial);
    }

    /** A series' days with a count other than 0. */
    private static TreeMap<LocalDate, Long> byDay(final JsonNode series) {
        final TreeMap<LocalDate, Long> days = new TreeMap<>();
        for (int i = 0; i < series.get("days").size(); i++) {
            if (series.get("data").get(i).asLong() != 0) {
                days.put(LocalDate.parse(series.get("days").get(i).asText()), series.get("data").get(i).asLong());
            }
        }
        return days;
    }
}
