package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyFilter;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Funnel queries in PostHog's filter format: time to convert (test_funnel_time_to_convert.py) and validation. */
class FunnelQueryTest {
    private static final Instant NOW = Instant.parse("2021-06-30T00:00:00Z");
    private static final String STEPS = "{\"events\":[{\"id\":\"step one\",\"order\":0},{\"id\":\"step two\",\"order\":1}],"
            + "\"date_from\":\"2021-06-07\",\"date_to\":\"2021-06-13\",\"funnel_window_interval\":7,\"funnel_window_interval_unit\":\"day\","
            + "\"funnel_viz_type\":\"time_to_convert\"";

    @Test
    void timeToConvertBinsTheConversionTimes() {
        // a converts in 1 h, b in 37 min, c in 23 h.
        final JsonNode auto = run(STEPS + "}");
        assertThat(auto.get("bins").toString()).isEqualTo("[[2220,2],[42510,0],[82800,1]]");
        assertThat(auto.get("average_conversion_time").asDouble()).isEqualTo(29540);
        final JsonNode seven = run(STEPS + ",\"bin_count\":7}");
        assertThat(seven.get("bins").toString())
                .isEqualTo("[[2220,2],[13732,0],[25244,0],[36756,0],[48268,0],[59780,0],[71292,1],[82804,0]]");
    }

    @Test
    void timeToConvertNeedsAStepToConvertTo() {
        // PostHog checks the step range of every funnel before the time-to-convert rule.
        assertThatThrownBy(() -> run(STEPS + ",\"funnel_to_step\":2}"))
                .hasMessage("funnelToStep is out of bounds. It must be between 1 and 1.");
        assertThatThrownBy(() -> run(STEPS + ",\"funnel_from_step\":1}"))
                .hasMessage("funnelFromStep is out of bounds. It must be between 0 and 0.");
        final JsonNode nobody = run(STEPS.replace("2021-06-07", "2021-06-10").replace("2021-06-13", "2021-06-10") + "}");
        assertThat(nobody.get("bins")).as("no one converted that day").isEmpty();
        assertThat(nobody.get("average_conversion_time").isNull()).isTrue();
        assertThatThrownBy(() -> run(STEPS.replace("time_to_convert", "lifecycle") + "}")).hasMessageContaining("funnel_viz_type");
    }

    @Test
    void aFunnelHasAtMostAHundredSteps() {
        final StringBuilder steps = new StringBuilder("{\"events\":[");
        for (int i = 0; i <= FunnelQuery.MAX_STEPS; i++) {
            steps.append(i == 0 ? "" : ",").append("{\"id\":\"s").append(i).append("\",\"order\":").append(i).append('}');
        }
        assertThatThrownBy(() -> run(steps.append("]}").toString())).hasMessage("Funnels have at most 100 steps, got 101.");
    }

    private static JsonNode run(final String json) {
        final JsonNode query;
        try {
            query = Json.mapper().readTree(json);
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
        final FunnelQuery funnel = FunnelQuery.parse(query, ZoneOffset.UTC, DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        final FunnelQuery.Partial partial = funnel.partial();
        add(funnel, partial, "2021-06-08T18:00:00Z", "2021-06-08T19:00:00Z");
        add(funnel, partial, "2021-06-09T13:00:00Z", "2021-06-09T13:37:00Z");
        add(funnel, partial, "2021-06-11T07:00:00Z", "2021-06-12T06:00:00Z");
        return funnel.result(partial);
    }

    private static void add(final FunnelQuery funnel, final FunnelQuery.Partial partial, final String one, final String two) {
        final List<TimelineEvent> events = List.of(event("step one", one), event("step two", two));
        final PropertyFilter.Source none = PropertyFilter.Source.ofEvent(Json.mapper().createObjectNode());
        funnel.add(partial, "p", events, e -> none, NOW);
    }

    private static TimelineEvent event(final String name, final String time) {
        return new TimelineEvent(Instant.parse(time).toEpochMilli() * 1000, UUID.randomUUID(), name, "p", Map.of(),
                "{}".getBytes(StandardCharsets.UTF_8));
    }
}
