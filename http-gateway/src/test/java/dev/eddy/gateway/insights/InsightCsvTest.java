package dev.eddy.gateway.insights;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The CSV of saved insights: header, quoting of commas, quotes and JSON, joined lists. */
class InsightCsvTest {

    @Test
    void oneRowPerInsightWithItsCellsQuotedAsRfc4180Says() throws IOException {
        final JsonNode filters = Json.mapper().readTree("{\"events\":[{\"id\":\"$pageview\"}]}");
        final Insight plain = InsightCalculationsTest.insight(3, "{}");
        final Insight named = new Insight(4, "abc", "Sign-ups, \"weekly\"", null, filters, null, null, false, List.of(7L, 9L), List.of(),
                null, null, null, null, null, null, null, null, null, null, List.of("growth", "kpi"), true, true, null, null, false,
                21, 37, "editor", "UTC", false, null, null, null, null);

        final String[] lines = InsightCsv.of(List.of(plain, named)).split("\r\n");

        assertThat(lines[0]).isEqualTo(String.join(",", InsightCsv.COLUMNS));
        assertThat(lines[1]).startsWith("3,short,name,,,false,false,,,,,,,{},");
        assertThat(lines[2]).isEqualTo("4,abc,\"Sign-ups, \"\"weekly\"\"\",,,true,true,\"growth,kpi\",\"7,9\",,,,,"
                + "\"{\"\"events\"\":[{\"\"id\"\":\"\"$pageview\"\"}]}\",");
        assertThat(lines).hasSize(3);
    }
}
