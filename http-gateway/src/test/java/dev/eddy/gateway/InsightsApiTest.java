package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The insights API over HTTP on a real PostgreSQL: fields, filters, soft delete, 405, activity, CSV. */
class InsightsApiTest extends RouteTest {

    @Test
    void createAnswers201WithTheFullFieldSet() {
        final HttpResponse<String> created = send("POST", "/api/projects/1/insights/", "{\"name\":\"Signups\","
                + "\"filters\":{\"events\":[{\"id\":\"signup\"}]},\"query\":\"{\\\"kind\\\":\\\"TrendsQuery\\\"}\","
                + "\"order\":-2147483648,\"tags\":[\"growth\",\"growth\",\" \"],\"saved\":true,\"unknown\":1}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode insight = TestEddy.json(created);
        assertThat(insight.get("short_id").asText()).matches("[0-9A-Za-z]{8}");
        assertThat(insight.get("name").asText()).isEqualTo("Signups");
        assertThat(insight.get("filters").get("events").get(0).get("id").asText()).isEqualTo("signup");
        assertThat(insight.get("query").get("kind").asText()).isEqualTo("TrendsQuery");
        assertThat(insight.get("order").asLong()).isEqualTo(Integer.MIN_VALUE);
        assertThat(insight.get("tags")).hasSize(1);
        assertThat(insight.get("saved").asBoolean()).isTrue();
        assertThat(insight.get("deleted").asBoolean()).isFalse();
        assertThat(insight.get("dashboards")).isEmpty();
        assertThat(insight.get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(insight.get("last_modified_by").get("uuid").asText()).isNotBlank();
        assertThat(insight.get("timezone").asText()).isEqualTo("UTC");
        for (final String field : new String[] {"result", "last_refresh", "hasMore", "is_cached", "effective_privilege_level",
                "user_access_level", "updated_at", "is_sample", "query_status", "hogql", "types", "columns"}) {
            assertThat(insight.has(field)).as(field).isTrue();
        }
    }

    @Test
    void listFiltersAndPagesAndHidesSoftDeletedInsights() {
        final long a = create("{\"name\":\"list-a\",\"saved\":true,\"favorited\":true}");
        final long b = create("{\"name\":\"list-b\",\"saved\":true}");
        final String shortA = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + a + "/")).get("short_id").asText();

        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?short_id=" + shortA)).get("results"))
                .extracting(r -> r.get("id").asLong()).containsExactly(a);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?favorited=true&limit=1000")).get("results"))
                .extracting(r -> r.get("id").asLong()).contains(a).doesNotContain(b);
        final JsonNode page = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?limit=1"));
        assertThat(page.get("results")).hasSize(1);
        assertThat(page.get("next").asText()).contains("offset=1");

        assertThat(send("PATCH", "/api/projects/1/insights/" + b + "/", "{\"deleted\":true}").statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?limit=1000")).get("results"))
                .extracting(r -> r.get("id").asLong()).doesNotContain(b);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/" + b + "/").statusCode()).isEqualTo(404);
        assertThat(send("PATCH", "/api/projects/1/insights/" + b + "/", "{\"deleted\":false}").statusCode())
                .as("an update can restore it").isEqualTo(200);
    }

    @Test
    void paginationEdgesAndCreatorFilter() {
        create("{\"name\":\"edge\"}");
        final JsonNode all = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?limit=1000"));
        final int count = all.get("count").asInt();

        final JsonNode beyond = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?offset=" + (count + 5)));
        assertThat(beyond.get("results")).isEmpty();
        assertThat(beyond.get("next").isNull()).isTrue();
        assertThat(beyond.get("previous").asText()).contains("offset=");
        final JsonNode last = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?limit=1&offset=" + (count - 1)));
        assertThat(last.get("results")).hasSize(1);
        assertThat(last.get("next").isNull()).isTrue();
        for (final String bad : new String[] {"limit=0", "limit=1001", "limit=x", "offset=-1"}) {
            assertThat(eddy.getAuthorized("/api/projects/1/insights/?" + bad).statusCode()).as(bad).isEqualTo(400);
        }
        final long me = TestEddy.json(eddy.getAuthorized("/api/users/@me/")).get("id").asLong();
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?created_by=" + me + "&limit=1000")).get("count").asInt())
                .isEqualTo(count);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/?created_by=" + (me + 1000))).get("count").asInt()).isZero();
    }

    @Test
    void hardDeleteIs405WithNoBody() {
        final long id = create("{\"name\":\"keep me\"}");

        final HttpResponse<String> response = send("DELETE", "/api/projects/1/insights/" + id + "/", null);

        assertThat(response.statusCode()).isEqualTo(405);
        assertThat(response.body()).isEmpty();
        assertThat(eddy.getAuthorized("/api/projects/1/insights/" + id + "/").statusCode()).isEqualTo(200);
    }

    @Test
    void everyChangeIsInTheActivityLogWithBeforeAndAfter() {
        final long id = create("{\"name\":\"before\"}");
        send("PATCH", "/api/projects/1/insights/" + id + "/", "{\"name\":\"after\",\"description\":\"d\"}");
        send("PATCH", "/api/projects/1/insights/" + id + "/", "{\"deleted\":true}");

        final JsonNode log = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + id + "/activity/"));
        assertThat(log.get("total_count").asInt()).isEqualTo(3);
        final JsonNode results = log.get("results");
        assertThat(results).extracting(r -> r.get("activity").asText()).containsExactly("deleted", "updated", "created");
        final JsonNode rename = results.get(1).get("detail").get("changes");
        assertThat(rename).anySatisfy(c -> {
            assertThat(c.get("field").asText()).isEqualTo("name");
            assertThat(c.get("before").asText()).isEqualTo("before");
            assertThat(c.get("after").asText()).isEqualTo("after");
        });
        assertThat(results.get(0).get("user").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/activity/")).get("total_count").asInt()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void csvFormatListsAndRetrievesAsCsv() {
        final long id = create("{\"name\":\"csv, \\\"quoted\\\"\",\"tags\":[\"a\"]}");

        final HttpResponse<String> one = eddy.getAuthorized("/api/projects/1/insights/" + id + "/?format=csv");

        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(one.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/csv"));
        assertThat(one.body().lines().findFirst()).contains("id,short_id,name,derived_name,description,saved,favorited,tags,"
                + "dashboards,created_at,created_by,last_modified_at,last_modified_by,filters,query");
        assertThat(one.body()).contains(id + ",").contains("\"csv, \"\"quoted\"\"\"");
        assertThat(eddy.getAuthorized("/api/projects/1/insights/?format=csv").body().lines().count()).isGreaterThan(1);
    }

    @Test
    void badBodiesAre400NamingTheField() {
        for (final String[] bad : new String[][] {{"{\"name\":5}", "name"}, {"{\"filters\":[]}", "filters"},
                {"{\"order\":1.5}", "order"}, {"{\"tags\":\"x\"}", "tags"}, {"{\"saved\":\"yes\"}", "saved"},
                {"{\"dashboards\":[999999]}", "dashboards"}, {"{\"query\":\"not json\"}", "query"}}) {
            final HttpResponse<String> response = send("POST", "/api/projects/1/insights/", bad[0]);
            assertThat(response.statusCode()).as(bad[0]).isEqualTo(400);
            assertThat(TestEddy.json(response).get("attr").asText()).as(bad[0]).isEqualTo(bad[1]);
        }
        assertThat(send("POST", "/api/projects/1/insights/", "[1]").statusCode()).isEqualTo(400);
        assertThat(send("POST", "/api/projects/1/insights/", "{").statusCode()).isEqualTo(400);
    }

    @Test
    void anotherProjectOrNoKeyGetsNothing() {
        assertThat(eddy.getAuthorized("/api/projects/2/insights/").statusCode()).isEqualTo(404);
        assertThat(send("POST", "/api/projects/2/insights/", "{}").statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/projects/1/insights/", Map.of()).statusCode()).isEqualTo(401);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/999999999/").statusCode()).isEqualTo(404);
    }

    @Test
    void myLastViewedListsTheLastFiveViewedMostRecentFirst() {
        final long[] ids = new long[7];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = create("{\"name\":\"viewed-" + i + "\"}");
        }
        for (final long id : ids) {
            assertThat(send("POST", "/api/projects/1/insights/" + id + "/viewed/", "{}").statusCode()).isEqualTo(200);
        }
        send("POST", "/api/projects/1/insights/" + ids[1] + "/viewed/", "{}");

        final JsonNode last = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/my_last_viewed/"));

        assertThat(last).extracting(i -> i.get("id").asLong())
                .containsExactly(ids[1], ids[6], ids[5], ids[4], ids[3]);
        assertThat(send("POST", "/api/projects/1/insights/999999999/viewed/", "{}").statusCode()).isEqualTo(404);
    }

    @Test
    void meIsTheKeysUser() {
        final JsonNode me = TestEddy.json(eddy.getAuthorized("/api/users/@me/"));

        assertThat(me.get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(me.get("uuid").asText()).isNotBlank();
        assertThat(me.has("is_email_verified")).isTrue();
    }

    private static long create(final String body) {
        final HttpResponse<String> response = send("POST", "/api/projects/1/insights/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static HttpResponse<String> send(final String method, final String path, final String body) {
        return eddy.request(eddy.personalKey(), method, path, body);
    }
}
