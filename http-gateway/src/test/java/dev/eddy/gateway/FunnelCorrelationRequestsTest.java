package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What a funnel correlation ({@code insights/funnel/correlation}) and the persons behind its numbers
 * ({@code persons/funnel/correlation}) refuse before they read any store, with PostHog's messages; a request they
 * take goes on to the streams instances (none on this tier: 503).
 */
class FunnelCorrelationRequestsTest extends RouteTest {
    private static final String CORRELATION = "/api/projects/1/insights/funnel/correlation/";
    private static final String FUNNEL = "\"events\":[{\"id\":\"signup\",\"order\":0},{\"id\":\"paid\",\"order\":1}]";

    @Test
    void propertiesAndEventPropertiesNeedTheirNames() {
        assertRefused(CORRELATION, "{" + FUNNEL + ",\"funnel_correlation_type\":\"properties\"}", null,
                "Property Correlation expects atleast one Property to run correlation on");
        assertRefused(CORRELATION, "{" + FUNNEL + ",\"funnel_correlation_type\":\"event_with_properties\"}", null,
                "Event Property Correlation expects atleast one event name to run correlation on");
    }

    @Test
    void groupFunnelsAreRefusedByName() {
        assertRefused(CORRELATION, "{" + FUNNEL + ",\"aggregation_group_type_index\":0}", null,
                "Eddy does not correlate funnels aggregated by groups (aggregation_group_type_index)");
    }

    @Test
    void aBodyOfTheWrongShapeIsRefusedByTheContract() {
        assertRefused(CORRELATION, "{" + FUNNEL + ",\"funnel_correlation_type\":\"people\"}", "funnel_correlation_type", "'funnel_correlation_type'");
        assertRefused(CORRELATION, "{" + FUNNEL + ",\"funnel_correlation_names\":\"$browser\"}", "funnel_correlation_names",
                "'funnel_correlation_names'");
    }

    @Test
    void queryParametersAreReadAsTheBodyIs() {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET", CORRELATION + "?funnel_correlation_type=people&events="
                + URLEncoder.encode("[{\"id\":\"signup\"},{\"id\":\"paid\"}]", StandardCharsets.UTF_8), null);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(RouteTier.json(response).get("detail").asText()).isEqualTo("funnel_correlation_type must be events, properties or event_with_properties");
    }

    @Test
    void aFunnelThatNeedsTwoStepsSaysSo() {
        assertRefused(CORRELATION, "{\"events\":[{\"id\":\"signup\"}]}", null, "Funnels require at least two steps.");
    }

    @Test
    void aCorrelationItTakesIsReadFromTheStreamsInstances() {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", CORRELATION, "{" + FUNNEL + "}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
        assertThat(RouteTier.json(response).get("code").asText()).isEqualTo("no_streams_instance");
    }

    @Test
    void thePersonsBehindANumberNeedWhetherTheyConverted() {
        assertRefused("/api/projects/1/persons/funnel/correlation/", "{" + FUNNEL + ",\"funnel_correlation_person_entity\":{\"id\":\"x\"}}",
                "funnel_correlation_person_converted", "'funnel_correlation_person_converted' is required.");
        assertRefused("/api/projects/1/persons/funnel/correlation/", "{" + FUNNEL + ",\"funnel_correlation_person_converted\":\"true\"}", null,
                "funnel_correlation_person_entity or funnel_correlation_property_values is required");
    }

    private static void assertRefused(final String path, final String body, final String attr, final String detail) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(body + " -> " + response.body()).isEqualTo(400);
        final JsonNode error = RouteTier.json(response);
        assertThat(error.get("type").asText()).isEqualTo("validation_error");
        if (attr == null) {
            assertThat(error.get("attr").isNull()).as(response.body()).isTrue();
        } else {
            assertThat(error.get("attr").asText()).as(response.body()).isEqualTo(attr);
        }
        assertThat(error.get("detail").asText()).as(body).contains(detail);
    }
}
