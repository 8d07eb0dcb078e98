package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The activity log as PostHog answers it: the insight routes' {@code activity_page_response} envelope
 * ({@code {results, next, previous, total_count}}, {@code limit} and {@code page}) and the project's
 * {@code activity_log} list, where a dashboard's history is read (page-number and cursor paging, PostHog's filters).
 */
class ActivityApiTest extends RouteTest {
    private static TestUsers.TestUser other;

    @BeforeAll
    static void setUp() throws Exception {
        other = TestUsers.member(eddy.config().pg(), 1, "*");
    }

    @Test
    void insightActivityAnswersPostHogsEnvelopeByPage() {
        final long insight = created("/api/projects/1/insights/", "{\"name\":\"v1\"}");
        for (final String name : List.of("v2", "v3", "v4")) {
            send(eddy.personalKey(), "PATCH", "/api/projects/1/insights/" + insight + "/", "{\"name\":\"" + name + "\"}");
        }
        final String path = "/api/projects/1/insights/" + insight + "/activity/";

        final JsonNode first = get(path + "?limit=3");
        assertThat(first.properties()).extracting(Map.Entry::getKey).containsExactly("results", "next", "previous", "total_count");
        assertThat(first.get("total_count").asInt()).isEqualTo(4);
        assertThat(first.get("results")).extracting(r -> r.get("detail").get("name").asText()).containsExactly("v4", "v3", "v2");
        assertThat(first.get("previous").isNull()).isTrue();
        assertThat(URI.create(first.get("next").asText()).getQuery()).isEqualTo("page=2&limit=3");

        final JsonNode second = get(URI.create(first.get("next").asText()).getRawPath() + "?" + URI.create(first.get("next").asText()).getRawQuery());
        assertThat(second.get("results")).extracting(r -> r.get("activity").asText()).containsExactly("created");
        assertThat(second.get("next").isNull()).isTrue();
        assertThat(URI.create(second.get("previous").asText()).getQuery()).isEqualTo("page=1&limit=3");

        assertThat(get(path).get("results")).as("10 a page by default").hasSize(4);
        final HttpResponse<String> past = eddy.getAuthorized(path + "?page=3&limit=3");
        assertThat(past.statusCode()).isEqualTo(404);
        assertThat(TestEddy.json(past).get("detail").asText()).isEqualTo("Invalid page.");
        assertThat(TestEddy.json(eddy.getAuthorized(path + "?limit=0")).get("attr").asText()).isEqualTo("limit");
        assertThat(TestEddy.json(eddy.getAuthorized(path + "?page=abc")).get("attr").asText()).isEqualTo("page");
        assertThat(eddy.getAuthorized("/api/projects/1/insights/99999999/activity/").statusCode()).isEqualTo(404);

        final JsonNode all = get("/api/projects/1/insights/activity/?limit=2");
        assertThat(all.get("total_count").asInt()).isGreaterThanOrEqualTo(4);
        assertThat(all.get("results")).hasSize(2).allSatisfy(r -> assertThat(r.get("scope").asText()).isEqualTo("Insight"));
    }

    @Test
    void aDashboardsHistoryIsInTheProjectActivityLog() {
        final long dashboard = created("/api/projects/1/dashboards/", "{\"name\":\"History\"}");
        final String path = "/api/projects/1/dashboards/" + dashboard + "/";
        send(eddy.personalKey(), "PATCH", path, "{\"name\":\"History v2\",\"pinned\":true}");
        send(other.key(), "PATCH", path, "{\"tiles\":[{\"text\":{\"body\":\"a note\"}}]}");
        send(eddy.personalKey(), "PATCH", path, "{\"deleted\":true}");
        send(eddy.personalKey(), "PATCH", path, "{\"deleted\":false}");

        final JsonNode log = get("/api/projects/1/activity_log/?scope=Dashboard&item_id=" + dashboard + "&page=1");

        assertThat(log.get("count").asInt()).isEqualTo(5);
        final JsonNode results = log.get("results");
        assertThat(results).extracting(r -> r.get("activity").asText())
                .containsExactly("restored", "deleted", "updated", "updated", "created");
        assertThat(results).allSatisfy(r -> {
            assertThat(r.get("scope").asText()).isEqualTo("Dashboard");
            assertThat(r.get("item_id").asText()).isEqualTo(Long.toString(dashboard));
            assertThat(r.get("detail").get("type").asText()).isEqualTo("dashboard");
            assertThat(r.get("detail").get("name").asText()).startsWith("History");
        });
        assertThat(results.get(4).get("detail").get("changes")).isEmpty();
        final JsonNode renamed = field(results.get(3), "name");
        assertThat(renamed.get("action").asText()).isEqualTo("changed");
        assertThat(renamed.get("before").asText()).isEqualTo("History");
        assertThat(renamed.get("after").asText()).isEqualTo("History v2");
        assertThat(field(results.get(3), "pinned").get("after").asBoolean()).isTrue();
        final JsonNode tiles = field(results.get(2), "tiles");
        assertThat(tiles.get("before")).isEmpty();
        assertThat(tiles.get("after").get(0).get("text").get("body").asText()).isEqualTo("a note");
        assertThat(results.get(2).get("user").get("id").asLong()).isEqualTo(other.id());
        assertThat(field(results.get(1), "deleted").get("after").asBoolean()).isTrue();
        assertThat(field(results.get(0), "deleted").get("after").asBoolean()).isFalse();

        final JsonNode byOther = get("/api/projects/1/activity_log/?scope=Dashboard&item_id=" + dashboard + "&user=" + other.uuid() + "&page=1");
        assertThat(byOther.get("results")).extracting(r -> r.get("activity").asText()).containsExactly("updated");
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/activity_log/?user=nobody")).get("attr").asText()).isEqualTo("user");
    }

    @Test
    void theProjectActivityLogPagesByNumberOrByCursor() {
        final long dashboard = created("/api/projects/1/dashboards/", "{\"name\":\"p0\"}");
        for (int i = 1; i <= 4; i++) {
            send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"name\":\"p" + i + "\"}");
        }
        final String base = "/api/projects/1/activity_log/?scopes=FeatureFlag,Dashboard&item_id=" + dashboard;

        final JsonNode numbered = get(base + "&page=2&page_size=2");
        assertThat(numbered.properties()).extracting(Map.Entry::getKey).containsExactly("count", "next", "previous", "results");
        assertThat(numbered.get("count").asInt()).isEqualTo(5);
        assertThat(numbered.get("results")).extracting(r -> r.get("detail").get("name").asText()).containsExactly("p2", "p1");
        assertThat(URI.create(numbered.get("next").asText()).getQuery()).startsWith("page=3&page_size=2");
        assertThat(URI.create(numbered.get("previous").asText()).getQuery()).startsWith("page=1&page_size=2");
        assertThat(eddy.getAuthorized(base + "&page=4&page_size=2").statusCode()).isEqualTo(404);

        final List<String> names = new ArrayList<>();
        JsonNode page = get(base + "&page_size=2");
        assertThat(page.has("count")).as("cursor paging has no count").isFalse();
        assertThat(page.get("previous").isNull()).isTrue();
        int pages = 1;
        page.get("results").forEach(r -> names.add(r.get("detail").get("name").asText()));
        while (!page.get("next").isNull()) {
            final URI next = URI.create(page.get("next").asText());
            page = get(next.getRawPath() + "?" + next.getRawQuery());
            assertThat(page.get("previous").isNull()).isFalse();
            page.get("results").forEach(r -> names.add(r.get("detail").get("name").asText()));
            pages++;
        }
        assertThat(names).containsExactly("p4", "p3", "p2", "p1", "p0");
        assertThat(pages).isEqualTo(3);
        assertThat(get(base + "&scope=Insight&page=1").get("count").asInt()).as("scope and scopes both apply").isZero();
        assertThat(eddy.getAuthorized(base + "&cursor=bm90LW91cnM").statusCode()).isEqualTo(404);
    }

    private static JsonNode field(final JsonNode entry, final String field) {
        for (final JsonNode change : entry.get("detail").get("changes")) {
            if (field.equals(change.get("field").asText())) {
                return change;
            }
        }
        throw new AssertionError("no change of " + field + " in " + entry);
    }

    private static JsonNode get(final String path) {
        final HttpResponse<String> response = eddy.getAuthorized(path);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static long created(final String path, final String body) {
        final HttpResponse<String> response = send(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static HttpResponse<String> send(final String key, final String method, final String path, final String body) {
        final HttpResponse<String> response = eddy.request(key, method, path, body);
        assertThat(response.statusCode()).as(response.body()).isLessThan(300);
        return response;
    }
}
