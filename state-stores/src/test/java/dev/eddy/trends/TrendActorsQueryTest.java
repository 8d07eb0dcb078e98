package dev.eddy.trends;

import static dev.eddy.trends.TrendTesting.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.timelines.TimelineEvent;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The persons behind a trend's number: who had the series' events in a data point's interval, most events first. */
class TrendActorsQueryTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:00:00Z");

    /** (person, day, hour, browser) pageviews, read as two instances would. */
    private static JsonNode run(final String json) {
        final TrendActorsQuery query = TrendActorsQuery.parse(read(json), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        final TrendQuery trend = query.trend();
        final List<TrendQuery.Partial> partials = List.of(trend.partial(), trend.partial());
        final String[][] views = {{"p1", "12", "10", "Chrome"}, {"p1", "12", "11", "Chrome"}, {"p1", "13", "10", "Chrome"},
            {"p2", "12", "23", "Safari"}, {"p3", "11", "10", "Safari"}};
        for (final String[] v : views) {
            final TimelineEvent event = new TimelineEvent(Instant.parse("2020-01-" + v[1] + "T" + v[2] + ":00:00Z").toEpochMilli() * 1000,
                    UUID.randomUUID(), "$pageview", v[0], Map.of(), ("{\"$browser\":\"" + v[3] + "\"}").getBytes(StandardCharsets.UTF_8));
            trend.add(partials.get(v[0].equals("p1") ? 0 : 1), v[0], event, TrendTesting.NO_PROPERTIES, NOW);
        }
        return query.result(partials.get(0).merge(trend.decode(partials.get(1).encode())));
    }

    @Test
    void aDayOfPageviewsIsItsPersonsMostEventsFirst() {
        final JsonNode day = run("{\"entity_id\":\"$pageview\",\"entity_type\":\"events\",\"date_from\":\"2020-01-12T00:00:00Z\","
                + "\"date_to\":\"2020-01-12T23:59:59.999999Z\"}");
        assertThat(day.get("count").asInt()).isEqualTo(2);
        assertThat(day.get("actors").toString()).isEqualTo("[[\"p1\",2],[\"p2\",1]]");
        final JsonNode hour = run("{\"entity_id\":\"$pageview\",\"interval\":\"hour\",\"date_from\":\"2020-01-12T10:00:00Z\",\"date_to\":\"2020-01-12T10:59:59.999999Z\"}");
        assertThat(hour.get("actors").toString()).as("the hour's bounds as given").isEqualTo("[[\"p1\",1]]");
        final JsonNode safari = run("{\"entity_id\":\"$pageview\",\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-30\",\"breakdown\":\"$browser\","
                + "\"breakdown_value\":\"Safari\",\"limit\":1}");
        assertThat(safari.get("count").asInt()).isEqualTo(2);
        assertThat(safari.get("actors")).hasSize(1);
        final JsonNode wholeDays = run("{\"entity_id\":\"$pageview\",\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-12\"}");
        assertThat(wholeDays.get("count").asInt()).as("a date alone ends at the end of its day").isEqualTo(2);
    }

    @Test
    void whatIsNotListedIsRefused() {
        assertThatThrownBy(() -> TrendActorsQuery.parse(read("{}"), ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty))
                .hasMessageContaining("entity_id is required");
        assertThatThrownBy(() -> TrendActorsQuery.parse(read("{\"entity_id\":\"a\",\"entity_math\":\"unique_group\"}"), ZoneOffset.UTC,
                DayOfWeek.SUNDAY, null, NOW, Optional::empty)).hasMessageContaining("groups");
    }
}
