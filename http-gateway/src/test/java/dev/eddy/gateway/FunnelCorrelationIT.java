package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Funnel correlation end to end on a real broker and PostgreSQL: PostHog's correlation fixture (twenty persons sign
 * up, the first ten pay; half of those who pay did {@code positively_related} between, half of the others
 * {@code negatively_related}; the payers browse with {@code Positive}, the others with {@code Negative}) captured over
 * HTTP, then {@code insights/funnel/correlation} answers PostHog's odds ratios for events, event properties and
 * person properties, and each number's people URL lists its persons.
 */
class FunnelCorrelationIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String FUNNEL = "\"events\":[{\"id\":\"user signed up\",\"type\":\"events\",\"order\":0},"
            + "{\"id\":\"paid\",\"type\":\"events\",\"order\":1}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-14\"";

    @BeforeAll
    static void captureTheFixture() throws InterruptedException {
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            final String person = "user_" + i;
            final boolean pays = i < 10;
            events.add(event(person, "user signed up", "2020-01-02T14:00:00Z", "\"$set\":{\"$browser\":\"" + (pays ? "Positive" : "Negative") + "\"}"));
            if (i % 2 == 0) {
                events.add(pays ? event(person, "positively_related", "2020-01-03T14:00:00Z",
                        "\"signup_source\":\"" + (i % 4 == 0 ? "facebook" : "email") + "\",\"blah\":\"value_bleh\"")
                        : event(person, "negatively_related", "2020-01-03T14:00:00Z", "\"signup_source\":\"" + (i % 6 == 0 ? "shazam" : "email") + "\""));
            }
            if (pays) {
                events.add(event(person, "paid", "2020-01-04T14:00:00Z", null));
            }
        }
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken()
                + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        eddy.waitUntil(() -> correlation("{" + FUNNEL + "}").path("result").path("events").size() == 2
                        && correlation("{" + FUNNEL + ",\"funnel_correlation_type\":\"properties\",\"funnel_correlation_names\":[\"$browser\"]}")
                        .path("result").path("events").size() == 2,
                WAIT, "every event reached its person's timeline and every person's $browser was set");
    }

    private static String event(final String person, final String name, final String time, final String properties) {
        return "{\"event\":\"" + name + "\",\"timestamp\":\"" + time + "\",\"properties\":{\"distinct_id\":\"" + person + "\""
                + (properties == null ? "" : "," + properties) + "}}";
    }

    @Test
    void eventsBetweenTheStepsCorrelateAsPostHogFindsThem() {
        final JsonNode body = correlation("{" + FUNNEL + "}");
        assertThat(body.get("timezone").asText()).isEqualTo("UTC");
        assertThat(body.get("is_cached").asBoolean()).isFalse();
        assertThat(body.get("last_refresh").asText()).isNotEmpty();
        final JsonNode result = body.get("result");
        assertThat(result.get("skewed").asBoolean()).isFalse();
        assertThat(rows(result)).containsExactly("positively_related 5 0 success", "negatively_related 0 5 failure");
        assertThat(result.get("events").get(0).get("odds_ratio").asDouble()).isEqualTo(11.0);
        assertThat(result.get("events").get(1).get("odds_ratio").asDouble()).isCloseTo(1.0 / 11, within(1e-15));
        assertThat(result.get("events").get(0).get("event")).hasToString("{\"event\":\"positively_related\",\"properties\":{},\"elements\":[]}");

        // Asked with query parameters, excluding one event.
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/funnel/correlation/?events="
                + URLEncoder.encode("[{\"id\":\"user signed up\",\"order\":0},{\"id\":\"paid\",\"order\":1}]", StandardCharsets.UTF_8)
                + "&date_from=2020-01-01&date_to=2020-01-14&funnel_correlation_exclude_event_names="
                + URLEncoder.encode("[\"positively_related\"]", StandardCharsets.UTF_8), null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(rows(TestEddy.json(get).get("result"))).containsExactly("negatively_related 0 5 failure");
    }

    @Test
    void eachNumberLinksToItsPersons() {
        final JsonNode positive = correlation("{" + FUNNEL + "}").get("result").get("events").get(0);
        assertThat(positive.get("success_people_url").asText()).startsWith("/api/projects/1/persons/funnel/correlation/?")
                .contains("funnel_correlation_person_converted=true");
        assertThat(people(positive.get("success_people_url").asText())).containsExactly("user_0", "user_2", "user_4", "user_6", "user_8");
        assertThat(people(positive.get("failure_people_url").asText())).isEmpty();

        final JsonNode negative = correlation("{" + FUNNEL + ",\"funnel_correlation_type\":\"properties\",\"funnel_correlation_names\":[\"$browser\"]}")
                .get("result").get("events").get(1);
        assertThat(people(negative.get("failure_people_url").asText())).hasSize(10).contains("user_10", "user_19");
    }

    @Test
    void eventPropertyValuesOfMoreThanTwoPersonsCorrelate() {
        final JsonNode result = correlation("{" + FUNNEL + ",\"funnel_correlation_type\":\"event_with_properties\","
                + "\"funnel_correlation_event_names\":[\"positively_related\",\"negatively_related\"]}").get("result");
        // Only the fixture's own properties (capture may add others to every event).
        final List<String> own = new ArrayList<>();
        final List<Double> odds = new ArrayList<>();
        result.get("events").forEach(e -> {
            final String name = e.get("event").get("event").asText();
            if (name.contains("::signup_source::") || name.contains("::blah::")) {
                own.add(name + " " + e.get("success_count").asInt() + " " + e.get("failure_count").asInt() + " " + e.get("correlation_type").asText());
                odds.add(e.get("odds_ratio").asDouble());
            }
        });
        assertThat(own).containsExactly("positively_related::blah::value_bleh 5 0 success", "positively_related::signup_source::facebook 3 0 success",
                "negatively_related::signup_source::email 0 3 failure");
        assertThat(odds.get(0)).isEqualTo(11.0);
        assertThat(odds.get(1)).isEqualTo(5.5);
        assertThat(odds.get(2)).isCloseTo(2.0 / 11, within(1e-15));
        for (final JsonNode e : result.get("events")) {
            if ("positively_related::signup_source::facebook".equals(e.get("event").get("event").asText())) {
                assertThat(people(e.get("success_people_url").asText())).containsExactly("user_0", "user_4", "user_8");
            }
        }
    }

    @Test
    void personPropertiesCorrelateAsPostHogFindsThem() {
        // PostHog's test_correlation_endpoint_with_properties: 121 and 1/121.
        final JsonNode result = correlation("{" + FUNNEL + ",\"funnel_correlation_type\":\"properties\",\"funnel_correlation_names\":[\"$browser\"]}")
                .get("result");
        assertThat(rows(result)).containsExactly("$browser::Positive 10 0 success", "$browser::Negative 0 10 failure");
        assertThat(result.get("events").get(0).get("odds_ratio").asDouble()).isEqualTo(121.0);
        assertThat(result.get("events").get(1).get("odds_ratio").asDouble()).isCloseTo(1.0 / 121, within(1e-15));
        assertThat(result.get("skewed").asBoolean()).isFalse();
    }

    private static List<String> rows(final JsonNode result) {
        final List<String> rows = new ArrayList<>();
        result.get("events").forEach(e -> rows.add(e.get("event").get("event").asText() + " " + e.get("success_count").asInt() + " "
                + e.get("failure_count").asInt() + " " + e.get("correlation_type").asText()));
        return rows;
    }

    /** The distinct ids of the persons a people URL lists, sorted. */
    private static Set<String> people(final String url) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET", url, null);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final Set<String> ids = new TreeSet<>(java.util.Comparator.comparingInt((String id) -> Integer.parseInt(id.substring(5))));
        TestEddy.json(response).get("results").get(0).get("people").forEach(p -> ids.add(p.get("distinct_ids").get(0).asText()));
        return ids;
    }

    private static JsonNode correlation(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/correlation/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }
}
