package dev.eddy.gateway.trends;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * Insight results as PostHog's CSV export writes them; expected lines from PostHog's
 * {@code posthog/tasks/exports/test/test_csv_exporter.py} where it has them.
 */
class InsightResultCsvTest {
    private static final String DAYS = "[\"21-Mar-2023\",\"22-Mar-2023\",\"23-Mar-2023\",\"24-Mar-2023\",\"25-Mar-2023\",\"26-Mar-2023\","
            + "\"27-Mar-2023\",\"28-Mar-2023\"]";
    private static final String EARLIER = "[\"14-Mar-2023\",\"15-Mar-2023\",\"16-Mar-2023\",\"17-Mar-2023\",\"18-Mar-2023\",\"19-Mar-2023\","
            + "\"20-Mar-2023\",\"21-Mar-2023\"]";

    @Test
    void comparedTrendSeriesAreRowsUnderTheCurrentPeriodsDatesWithTheirBreakdownValue() throws IOException {
        // test_csv_exporter_trends_query_with_compare_previous_option, with the breakdown column of PostHog's newer export.
        final StringBuilder items = new StringBuilder("[");
        final String[][] series = {{"Chrome", "current", "2.0,0.0,0.0,0.0,0.0,0.0,0.0,3.0"}, {"Firefox", "current", "1.0,0.0,0.0,0.0,0.0,0.0,0.0,2.0"},
                {"Safari", "current", "1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0"}, {"Chrome", "previous", "0.0,0.0,0.0,0.0,0.0,0.0,0.0,2.0"},
                {"Firefox", "previous", "0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0"}, {"Safari", "previous", "0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0"}};
        for (final String[] s : series) {
            items.append(items.length() > 1 ? "," : "").append("{\"label\":\"").append(s[0]).append("\",\"breakdown_value\":\"").append(s[0])
                    .append("\",\"compare\":true,\"compare_label\":\"").append(s[1]).append("\",\"action\":{\"id\":\"$pageview\",\"custom_name\":null},")
                    .append("\"labels\":").append("current".equals(s[1]) ? DAYS : EARLIER).append(",\"data\":[").append(s[2]).append("]}");
        }

        assertThat(lines(items.append("]").toString(), "{\"breakdown\":\"$browser\"}")).containsExactly(
                "series,$browser,21-Mar-2023,22-Mar-2023,23-Mar-2023,24-Mar-2023,25-Mar-2023,26-Mar-2023,27-Mar-2023,28-Mar-2023",
                "Chrome - current,Chrome,2.0,0.0,0.0,0.0,0.0,0.0,0.0,3.0",
                "Firefox - current,Firefox,1.0,0.0,0.0,0.0,0.0,0.0,0.0,2.0",
                "Safari - current,Safari,1.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0",
                "Chrome - previous,Chrome,0.0,0.0,0.0,0.0,0.0,0.0,0.0,2.0",
                "Firefox - previous,Firefox,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0",
                "Safari - previous,Safari,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0");
    }

    @Test
    void aFormulaIsOneSeriesAndPostHogsBreakdownMarkersAreSpelledOut() throws IOException {
        // test_csv_exporter_trends_query_with_none_action
        assertThat(lines("[{\"label\":\"Formula ((B/A)*100)\",\"action\":null,\"labels\":[\"22-Mar-2024\"],\"data\":[100.0]}]", "{}"))
                .containsExactly("series,22-Mar-2024", "Formula ((B/A)*100),100.0");
        assertThat(lines("[{\"label\":\"a\",\"action\":{\"custom_name\":\"Sign-ups\"},\"breakdown_value\":[\"$$_posthog_breakdown_other_$$\","
                + "\"$$_posthog_breakdown_null_$$\"],\"labels\":[\"1-Jan\"],\"data\":[4]}]",
                "{\"breakdowns\":[{\"property\":\"$browser\"},{\"property\":\"$os\"}]}")).containsExactly(
                "series,custom name,$browser,$os,1-Jan", "a,Sign-ups,Other (i.e. all remaining values),None (i.e. no value),4");
    }

    @Test
    void totalValueDisplaysAreATotalSumColumn() throws IOException {
        assertThat(lines("[{\"label\":\"$pageview\",\"data\":[],\"labels\":[],\"aggregated_value\":12}]", "{}"))
                .containsExactly("series,Total Sum", "$pageview,12");
    }

    @Test
    void funnelStepsAreRowsOfTheirCountsAndConversionTimes() throws IOException {
        // test_csv_exporter_funnels_with_breakdown
        assertThat(lines("[[{\"action_id\":\"$pageview\",\"name\":\"$pageview\",\"custom_name\":null,\"order\":0,\"count\":1,"
                + "\"breakdown_value\":[\"test'123\"],\"average_conversion_time\":null,\"median_conversion_time\":null},"
                + "{\"action_id\":\"$pageview\",\"name\":\"$pageview\",\"custom_name\":null,\"order\":1,\"count\":1,"
                + "\"breakdown_value\":[\"test'123\"],\"average_conversion_time\":60.0,\"median_conversion_time\":60.0}]]", "{}"))
                .containsExactly("name,breakdown_value,action_id,count,median_conversion_time (seconds),average_conversion_time (seconds)",
                        "$pageview,test'123,$pageview,1,,", "$pageview,test'123,$pageview,1,60.0,60.0");
        assertThat(lines("[{\"action_id\":\"signup\",\"custom_name\":\"Signed up\",\"count\":3,\"median_conversion_time\":null,"
                + "\"average_conversion_time\":null}]", "{}")).containsExactly(
                "name,breakdown_value,action_id,count,median_conversion_time (seconds),average_conversion_time (seconds)",
                "Signed up,,signup,3,,");
    }

    @Test
    void timeToConvertIsItsBinsAndAnEmptyResultIsPostHogsErrorRow() throws IOException {
        // test_funnel_time_to_convert, test_csv_exporter_empty_result
        assertThat(lines("{\"average_conversion_time\":1.45,\"bins\":[[1,1],[2,3],[3,5]]}", "{}"))
                .containsExactly("bin,value", "1,1", "2,3", "3,5");
        assertThat(lines("[]", "{}")).containsExactly("error", "No data available or unable to format for export.");
    }

    @Test
    void retentionCohortsAreRowsOfTheirPeriods() throws IOException {
        assertThat(lines("[{\"label\":\"Day 0\",\"date\":\"2020-01-10T00:00:00Z\",\"values\":[{\"count\":3,\"people\":[]},{\"count\":1,"
                + "\"people\":[]}]},{\"label\":\"Day 1\",\"date\":\"2020-01-11T00:00:00Z\",\"values\":[{\"count\":2,\"people\":[]}]}]", "{}"))
                .containsExactly("cohort,cohort size,Day 0,Day 1", "2020-01-10T00:00:00Z,3,3,1", "2020-01-11T00:00:00Z,2,2,");
    }

    @Test
    void otherResultsAreRowsOfTheirFields() throws IOException {
        assertThat(lines("[{\"source\":\"1_/home\",\"target\":\"2_/pricing\",\"value\":4,\"average_conversion_time\":1500.0}]", "{}"))
                .containsExactly("source,target,value,average_conversion_time", "1_/home,2_/pricing,4,1500.0");
    }

    private static String[] lines(final String result, final String query) throws IOException {
        final JsonNode parsed = Json.mapper().readTree(result);
        return InsightResultCsv.of(parsed, Json.mapper().readTree(query)).split("\r\n");
    }
}
