package dev.eddy.gateway.insights;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.serde.Json;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** An insight write's fields: what a body sets, leaves alone or clears, and the columns written for it. */
class InsightFieldsTest {

    @Test
    void onlyTheFieldsGivenAreSetAndNullClears() {
        final InsightFields fields = InsightFields.of(body("{\"name\":null,\"order\":null,\"saved\":true,"
                + "\"tags\":[\" a \",\"a\",\"\",\"b\"],\"query\":\"{\\\"kind\\\":\\\"TrendsQuery\\\"}\",\"dashboards\":[4,5]}"));

        assertThat(fields.name()).isEqualTo(new InsightFields.Change<String>(null));
        assertThat(fields.derivedName()).as("not given: left as it is").isNull();
        assertThat(fields.description()).isNull();
        assertThat(fields.nameSet()).isEmpty();
        assertThat(fields.tags().value()).containsExactly("a", "b");
        assertThat(fields.query().value().get("kind").asText()).as("a query given as its JSON text").isEqualTo("TrendsQuery");
        assertThat(fields.dashboards()).contains(List.of(4L, 5L));
        assertThat(fields.columns()).extracting(InsightFields.Column::name)
                .containsExactly("name", "query", "\"order\"", "saved", "tags");
        assertThat(fields.columns().get(0).bind()).isNull();
        assertThat(fields.columns().get(1).bind()).isInstanceOf(JsonObject.class);
        assertThat((String[]) fields.columns().get(4).bind()).containsExactly("a", "b");
    }

    @Test
    void aTemplatesInsightSetsItsNameDescriptionFiltersAndQuery() {
        final ObjectNode filters = Json.mapper().createObjectNode().put("insight", "TRENDS");
        final InsightFields fields = InsightFields.ofTemplate("Daily users", "", filters, null);

        assertThat(fields.nameSet()).contains("Daily users");
        assertThat(fields.columns()).extracting(InsightFields.Column::name).containsExactly("name", "description", "filters");
        assertThat(fields.dashboards()).isEqualTo(Optional.empty());
    }

    @Test
    void badFieldsAre400NamingThem() {
        assertThatThrownBy(() -> InsightFields.of(body("{\"order\":4294967296}"))).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.attr()).isEqualTo("order"));
        assertThatThrownBy(() -> InsightFields.of(body("{\"query\":\"[1]\"}"))).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.attr()).isEqualTo("query"));
    }

    private static Body body(final String json) {
        try {
            return Body.of((ObjectNode) Json.mapper().readTree(json));
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
