package dev.eddy.gateway.insights;

import static dev.eddy.gateway.insights.QueryTranslationTest.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** A dashboard's filters on its insights, as PostHog's {@code apply_dashboard_filters}. */
class DashboardOverrideTest {

    @Test
    void aDashboardDateRangeReplacesTheInsightsWholeRange() {
        final ObjectNode filters = DashboardOverride.legacy((ObjectNode) json("{\"date_from\":\"-7d\",\"date_to\":\"-1d\",\"interval\":\"day\"}"),
                json("{\"date_from\":\"-30d\",\"interval\":\"month\"}"));
        assertThat(filters).isEqualTo(json("{\"date_from\":\"-30d\",\"interval\":\"day\"}"));
        assertThat(DashboardOverride.legacy((ObjectNode) json("{\"date_from\":\"-7d\"}"), json("{\"properties\":[]}")))
                .as("no range, no properties: unchanged").isEqualTo(json("{\"date_from\":\"-7d\"}"));
    }

    @Test
    void allTimeTurnsOffTheComparisonToThePreviousPeriod() {
        assertThat(DashboardOverride.legacy((ObjectNode) json("{\"compare\":true}"), json("{\"date_from\":\"all\"}")))
                .isEqualTo(json("{\"compare\":false,\"date_from\":\"all\"}"));
    }

    @Test
    void dashboardPropertiesNarrowTheInsights() {
        final String chrome = "{\"key\":\"$browser\",\"value\":\"Chrome\"}";
        final String mac = "{\"key\":\"$os\",\"value\":\"Mac\"}";
        assertThat(DashboardOverride.combined(json("[" + mac + "]"), json("[" + chrome + "]"))).isEqualTo(json("[" + mac + "," + chrome + "]"));
        assertThat(DashboardOverride.combined(json("[]"), json("[" + chrome + "]"))).isEqualTo(json("[" + chrome + "]"));
        assertThat(DashboardOverride.combined(json("{\"type\":\"OR\",\"values\":[" + mac + "]}"), json("[" + chrome + "]")))
                .isEqualTo(json("{\"type\":\"AND\",\"values\":[{\"type\":\"OR\",\"values\":[" + mac + "]},"
                        + "{\"type\":\"AND\",\"values\":[" + chrome + "]}]}"));
    }

    @Test
    void aQuerysSourceGetsTheSameOverrides() {
        final ObjectNode query = DashboardOverride.query((ObjectNode) json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"TrendsQuery\","
                + "\"dateRange\":{\"date_from\":\"-7d\",\"date_to\":\"-1d\"},\"compareFilter\":{\"compare\":true}}}"),
                json("{\"date_from\":\"all\",\"properties\":[{\"key\":\"a\",\"value\":\"b\"}]}"));
        assertThat(query).isEqualTo(json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"TrendsQuery\","
                + "\"dateRange\":{\"date_from\":\"all\"},\"compareFilter\":{\"compare\":false},\"properties\":[{\"key\":\"a\",\"value\":\"b\"}]}}"));
    }
}
