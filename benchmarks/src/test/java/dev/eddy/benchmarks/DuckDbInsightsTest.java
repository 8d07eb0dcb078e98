package dev.eddy.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The baseline's SQL against plain Java over the same generated events: per-day counts, the filtered breakdown, and
 * the ordered funnel computed as PostHog steps it (each step-1 event starts a chain, a later step extends the latest
 * chain that can still reach it within the window), so the SQL is checked by a different algorithm.
 */
class DuckDbInsightsTest {
    private static final LocalDate LAST_DAY = LocalDate.of(2024, 3, 10);
    private static final long WINDOW_MILLIS = 14 * 86_400_000L;

    @Test
    void dailyCountsAndTheFilteredBreakdownEqualCountingTheColumns() throws Exception {
        final InsightsEvents events = new InsightsEvents(20_000, 400, 30, LAST_DAY, 7);
        try (DuckDbInsights duck = new DuckDbInsights(events)) {
            final long[] all = new long[30];
            final long[] pageviews = new long[30];
            final Map<String, long[]> byUrl = new HashMap<>();
            for (int i = 0; i < events.count; i++) {
                final int day = (int) ((events.millis[i] - events.startMillis) / 86_400_000L);
                all[day]++;
                if (events.name[i] == 0) {
                    pageviews[day]++;
                    if (events.browser[i] != 1) {
                        final String url = events.url[i] == InsightsEvents.MISSING ? DuckDbInsights.NULL_BREAKDOWN : InsightsEvents.URLS[events.url[i]];
                        byUrl.computeIfAbsent(url, u -> new long[30])[day]++;
                    }
                }
            }
            assertThat(duck.dailyCount(null).series()).containsOnlyKeys("").containsEntry("", all);
            assertThat(Arrays.stream(all).sum()).isEqualTo(20_000);
            assertThat(duck.dailyCount("$pageview").series().get("")).isEqualTo(pageviews);
            final Map<String, long[]> sql = duck.pageviewsNotSafariByUrl().series();
            assertThat(sql).hasSize(21).containsKey(DuckDbInsights.NULL_BREAKDOWN);
            sql.forEach((url, days) -> assertThat(days).as(url).isEqualTo(byUrl.get(url)));
        }
    }

    @Test
    void theFunnelSqlEqualsPostHogsChainStepping() throws Exception {
        for (final long seed : new long[] {1, 2, 3}) {
            final InsightsEvents events = new InsightsEvents(30_000, 1_500, 30, LAST_DAY, seed);
            try (DuckDbInsights duck = new DuckDbInsights(events)) {
                final long[] expected = chainStepping(events);
                assertThat(duck.pageviewSignupPurchaseFunnel()).as("seed %d", seed).isEqualTo(expected);
                assertThat(expected[2]).as("some persons buy, not all who sign up").isPositive().isLessThan(expected[1]);
            }
        }
    }

    @Test
    void eventsAreSeededDistinctInTimeAndWithinTheDays() {
        final InsightsEvents a = new InsightsEvents(5_000, 100, 3, LAST_DAY, 9);
        final InsightsEvents b = new InsightsEvents(5_000, 100, 3, LAST_DAY, 9);
        assertThat(a.millis).isEqualTo(b.millis);
        assertThat(a.person).isEqualTo(b.person);
        assertThat(a.millis[0]).isGreaterThanOrEqualTo(Instant.parse("2024-03-08T00:00:00Z").toEpochMilli());
        assertThat(a.millis[4_999]).isLessThan(Instant.parse("2024-03-11T00:00:00Z").toEpochMilli());
        for (int i = 1; i < a.count; i++) {
            assertThat(a.millis[i]).isGreaterThan(a.millis[i - 1]);
        }
    }

    @Test
    void aBatchIsHistoricalJsonWithTheEventsProperties() throws Exception {
        final InsightsEvents events = new InsightsEvents(1_000, 50, 2, LAST_DAY, 5);
        final JsonNode body = Json.mapper().readTree(events.batch("phc_x", 10, 20, true));
        assertThat(body.get("historical_migration").asBoolean()).isTrue();
        assertThat(Json.mapper().readTree(events.batch("phc_x", 10, 20, false)).has("historical_migration")).isFalse();
        assertThat(body.get("batch")).hasSize(10);
        int purchases = 0;
        for (int i = 10; i < 20; i++) {
            final JsonNode e = body.get("batch").get(i - 10);
            assertThat(e.get("event").asText()).isEqualTo(InsightsEvents.NAMES[events.name[i]]);
            assertThat(e.get("distinct_id").asText()).isEqualTo("person-" + events.person[i]);
            assertThat(Instant.parse(e.get("timestamp").asText()).toEpochMilli()).isEqualTo(events.millis[i]);
            assertThat(e.get("uuid").asText()).isEqualTo(events.uuid(i).toString());
            assertThat(e.get("properties").has("$browser")).isEqualTo(events.browser[i] != InsightsEvents.MISSING);
            if (events.amountCents[i] > 0) {
                purchases++;
                assertThat(e.get("properties").get("amount").decimalValue().movePointRight(2).intValueExact()).isEqualTo(events.amountCents[i]);
            }
        }
        assertThat(events.uuid(1)).isNotEqualTo(events.uuid(2));
        assertThat(purchases).isLessThanOrEqualTo(10);
    }

    /** Persons reaching each step of $pageview → signup → purchase, stepping each person's events in time order. */
    private static long[] chainStepping(final InsightsEvents events) {
        final Map<Integer, List<Integer>> byPerson = new HashMap<>();
        for (int i = 0; i < events.count; i++) {
            byPerson.computeIfAbsent(events.person[i], p -> new ArrayList<>()).add(i);
        }
        final long[] reached = new long[3];
        for (final List<Integer> timeline : byPerson.values()) {
            // chainStart[k]: the start of the latest chain that has completed k + 1 steps, or -1.
            final long[] chainStart = {-1, -1, -1};
            int furthest = 0;
            for (final int i : timeline) {
                final long t = events.millis[i];
                final int step = switch (InsightsEvents.NAMES[events.name[i]]) {
                    case "$pageview" -> 0;
                    case "signup" -> 1;
                    case "purchase" -> 2;
                    default -> -1;
                };
                if (step == 0) {
                    chainStart[0] = t;
                } else if (step > 0 && chainStart[step - 1] >= 0 && t - chainStart[step - 1] <= WINDOW_MILLIS
                        && chainStart[step] != chainStart[step - 1]) {
                    chainStart[step] = chainStart[step - 1];
                }
                for (int k = 0; k < 3; k++) {
                    if (chainStart[k] >= 0) {
                        furthest = Math.max(furthest, k + 1);
                    }
                }
            }
            for (int k = 0; k < furthest; k++) {
                reached[k]++;
            }
        }
        return reached;
    }
}
