package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.TestEddy;
import io.micrometer.core.instrument.Statistic;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** {@code POST /insights/timing}: PostHog's web app's time to see data, recorded in a timer with bounded tags. */
class ClientTimingTest extends RouteTest {
    private static final String PATH = "/api/projects/1/insights/timing/";
    private static final String METER = "eddy.insights.client.timing";

    @Test
    void reportsAreRecordedInTheTimerAndBadOnesRefusedNamingTheField() {
        // What captureTimeToSeeData sends (frontend/src/lib/internalMetrics.ts), extra fields and all.
        final HttpResponse<String> first = post("{\"session_id\":\"s1\",\"current_url\":\"http://x/insights/abc\",\"type\":\"insight_load\","
                + "\"context\":\"insight\",\"time_to_see_data_ms\":250,\"status\":\"success\",\"insights_fetched\":1,"
                + "\"insights_fetched_cached\":0,\"primary_interaction_id\":\"p1\",\"is_primary_interaction\":true}");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(post("{\"type\":\"dashboard_load\",\"context\":\"dashboard\",\"time_to_see_data_ms\":1500.5,\"status\":null}").statusCode())
                .isEqualTo(200);

        assertThat(eddy.meter(METER, Statistic.COUNT)).isEqualTo(2);
        assertThat(eddy.meter(METER, Statistic.TOTAL_TIME)).isCloseTo(1.7505, org.assertj.core.data.Offset.offset(1e-9));

        for (final String[] bad : new String[][] {
                {"{\"type\":\"insight_load\",\"context\":\"insight\"}", "time_to_see_data_ms"},
                {"{\"type\":\"insight_load\",\"context\":\"insight\",\"time_to_see_data_ms\":-1}", "time_to_see_data_ms"},
                {"{\"type\":\"insight_load\",\"context\":\"insight\",\"time_to_see_data_ms\":\"fast\"}", "time_to_see_data_ms"},
                {"{\"type\":\"page_load\",\"context\":\"insight\",\"time_to_see_data_ms\":1}", "type"},
                {"{\"type\":\"insight_load\",\"context\":\"everywhere\",\"time_to_see_data_ms\":1}", "context"},
                {"{\"type\":\"insight_load\",\"context\":\"insight\",\"time_to_see_data_ms\":1,\"status\":\"maybe\"}", "status"}}) {
            final HttpResponse<String> refused = post(bad[0]);
            assertThat(refused.statusCode()).as(bad[0]).isEqualTo(400);
            assertThat(TestEddy.json(refused).get("attr").asText()).as(bad[0]).isEqualTo(bad[1]);
        }
        assertThat(eddy.meter(METER, Statistic.COUNT)).as("nothing recorded of them").isEqualTo(2);
    }

    private static HttpResponse<String> post(final String body) {
        return eddy.request(eddy.personalKey(), "POST", PATH, body);
    }
}
