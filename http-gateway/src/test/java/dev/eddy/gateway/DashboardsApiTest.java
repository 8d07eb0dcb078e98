package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The dashboards API over HTTP on a real PostgreSQL. */
class DashboardsApiTest extends RouteTest {
    private static TestUsers.TestUser member;
    private static TestUsers.TestUser readOnly;

    @BeforeAll
    static void setUp() throws Exception {
        member = TestUsers.member(eddy.config().pg(), 1, "*");
        readOnly = TestUsers.member(eddy.config().pg(), 1, "dashboard:read");
    }

    @Test
    void createAnswers201InTheFullFormAndListShowsTheListForm() {
        final HttpResponse<String> created = send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/",
                "{\"name\":\"Growth\",\"description\":\"weekly\",\"pinned\":true,\"tags\":[\"kpi\"]}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode d = TestEddy.json(created);
        assertThat(d.get("name").asText()).isEqualTo("Growth");
        assertThat(d.get("pinned").asBoolean()).isTrue();
        assertThat(d.get("creation_mode").asText()).isEqualTo("default");
        assertThat(d.get("restriction_level").asInt()).isEqualTo(21);
        assertThat(d.get("effective_privilege_level").asInt()).isEqualTo(37);
        assertThat(d.get("user_access_level").asText()).isEqualTo("editor");
        assertThat(d.get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(d.get("tiles")).isEmpty();
        assertThat(d.get("delete_insights").asBoolean()).isFalse();
        assertThat(d.has("use_template") && d.has("use_dashboard") && d.has("filters") && d.has("variables")).isTrue();

        final JsonNode listed = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/?limit=1000")).get("results");
        final JsonNode item = find(listed, d.get("id").asLong());
        assertThat(item.has("tiles")).as("list form").isFalse();
        assertThat(item.has("filters")).isFalse();
        assertThat(item.get("tags").get(0).asText()).isEqualTo("kpi");
    }

    @Test
    void insightsOnADashboardAreItsTilesAndDuplicationKeepsThem() {
        final long dashboard = dashboard("{\"name\":\"with tiles\"}");
        final long insight = insight("{\"name\":\"on it\",\"dashboards\":[" + dashboard + "]}");

        final JsonNode d = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/"));
        assertThat(d.get("tiles")).hasSize(1);
        assertThat(d.get("tiles").get(0).get("insight").get("id").asLong()).isEqualTo(insight);
        assertThat(d.get("tiles").get(0).get("insight").get("dashboards").get(0).asLong()).isEqualTo(dashboard);

        final JsonNode copy = TestEddy.json(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/",
                "{\"name\":\"copy\",\"use_dashboard\":" + dashboard + "}"));
        assertThat(copy.get("creation_mode").asText()).isEqualTo("duplicate");
        assertThat(copy.get("tiles").get(0).get("insight").get("id").asLong()).isEqualTo(insight);
        final JsonNode onTwo = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + insight + "/"));
        assertThat(onTwo.get("dashboards")).extracting(JsonNode::asLong)
                .containsExactlyInAnyOrder(dashboard, copy.get("id").asLong());
    }

    @Test
    void softDeleteHidesTheDashboardAndWithDeleteInsightsTheInsightsOnlyOnIt() {
        final long dashboard = dashboard("{\"name\":\"doomed\"}");
        final long other = dashboard("{\"name\":\"other\"}");
        final long only = insight("{\"name\":\"only here\",\"dashboards\":[" + dashboard + "]}");
        final long shared = insight("{\"name\":\"also elsewhere\",\"dashboards\":[" + dashboard + "," + other + "]}");

        final HttpResponse<String> deleted = send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/",
                "{\"deleted\":true,\"delete_insights\":true}");

        assertThat(deleted.statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(deleted).get("deleted").asBoolean()).isTrue();
        assertThat(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/").statusCode()).isEqualTo(404);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/?limit=1000")).get("results"))
                .extracting(r -> r.get("id").asLong()).doesNotContain(dashboard).contains(other);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/" + only + "/").statusCode()).isEqualTo(404);
        final JsonNode kept = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + shared + "/"));
        assertThat(kept.get("dashboards")).extracting(JsonNode::asLong).containsExactly(other);
    }

    @Test
    void hardDeleteIs405WithNoBody() {
        final long dashboard = dashboard("{\"name\":\"stays\"}");

        final HttpResponse<String> response = send(eddy.personalKey(), "DELETE", "/api/projects/1/dashboards/" + dashboard + "/", null);

        assertThat(response.statusCode()).isEqualTo(405);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void moveTileMovesATileToAnotherDashboard() {
        final long from = dashboard("{\"name\":\"from\"}");
        final long to = dashboard("{\"name\":\"to\"}");
        insight("{\"name\":\"moving\",\"dashboards\":[" + from + "]}");
        final long tile = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + from + "/")).get("tiles").get(0)
                .get("id").asLong();

        final HttpResponse<String> moved = send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + from + "/move_tile/",
                "{\"tile\":{\"id\":" + tile + "},\"toDashboard\":" + to + "}");

        assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
        assertThat(TestEddy.json(moved).get("tiles")).isEmpty();
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + to + "/")).get("tiles").get(0).get("id").asLong())
                .isEqualTo(tile);
    }

    @Test
    void restrictionLevel37LetsOnlyTheCreatorAdminsAndEditorsEdit() {
        final long dashboard = dashboard("{\"name\":\"locked\",\"restriction_level\":37}");

        final JsonNode asMember = TestEddy.json(eddy.get("/api/projects/1/dashboards/" + dashboard + "/",
                Map.of("Authorization", "Bearer " + member.key())));
        assertThat(asMember.get("effective_privilege_level").asInt()).isEqualTo(21);
        assertThat(asMember.get("user_access_level").asText()).isEqualTo("viewer");
        final HttpResponse<String> refused = send(member.key(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/",
                "{\"name\":\"mine now\"}");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"restriction_level\":21}")
                .statusCode()).as("the creator may open it").isEqualTo(200);
        assertThat(send(member.key(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"name\":\"team\"}")
                .statusCode()).isEqualTo(200);
    }

    @Test
    void scopesProjectsAndBadBodiesAreRefused() {
        final long dashboard = dashboard("{\"name\":\"guarded\"}");

        assertThat(send(readOnly.key(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"name\":\"x\"}").statusCode())
                .isEqualTo(403);
        assertThat(TestEddy.json(send(readOnly.key(), "POST", "/api/projects/1/dashboards/", "{}")).get("detail").asText())
                .contains("dashboard:write");
        assertThat(eddy.get("/api/projects/1/dashboards/", Map.of("Authorization", "Bearer " + readOnly.key())).statusCode())
                .isEqualTo(200);
        assertThat(eddy.getAuthorized("/api/projects/2/dashboards/").statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/projects/1/dashboards/", Map.of()).statusCode()).isEqualTo(401);
        assertThat(send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"restriction_level\":30}")
                .statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"pinned\":\"yes\"}"))
                .get("attr").asText()).isEqualTo("pinned");
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"use_dashboard\":99999999}").statusCode())
                .isEqualTo(400);
    }

    @Test
    void useTemplateCreatesTheBuiltInTemplatesInsightsAndText() {
        final HttpResponse<String> created = send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/",
                "{\"use_template\":\"Product analytics\",\"name\":\"Our product\"}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode d = TestEddy.json(created);
        assertThat(d.get("creation_mode").asText()).isEqualTo("template");
        assertThat(d.get("name").asText()).isEqualTo("Our product");
        assertThat(d.get("tiles")).hasSize(5);
        assertThat(d.get("tiles").get(0).get("insight").get("name").asText()).isEqualTo("Daily active users (DAUs)");
        assertThat(d.get("tiles").get(0).get("insight").get("filters").get("events").get(0).get("math").asText()).isEqualTo("dau");
        assertThat(d.get("tiles").get(0).get("layouts").get("sm").get("w").asInt()).isEqualTo(6);
        assertThat(d.get("tiles").get(4).get("insight").isNull()).isTrue();
        assertThat(d.get("tiles").get(4).get("text").get("body").asText()).startsWith("Edit this dashboard");
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"use_template\":\"No such\"}").statusCode())
                .isEqualTo(400);
    }

    @Test
    void createFromTemplateJsonBuildsTheTemplatesTiles() {
        final HttpResponse<String> created = send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/create_from_template_json/",
                "{\"template\":{\"template_name\":\"Checkout\",\"dashboard_description\":\"funnel\",\"tags\":[\"shop\"],"
                        + "\"tiles\":[{\"type\":\"INSIGHT\",\"name\":\"Checkout funnel\",\"filters\":{\"insight\":\"FUNNELS\"},"
                        + "\"layouts\":{},\"color\":\"red\"}]}}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        final JsonNode d = TestEddy.json(created);
        assertThat(d.get("name").asText()).isEqualTo("Checkout");
        assertThat(d.get("description").asText()).isEqualTo("funnel");
        assertThat(d.get("tags").get(0).asText()).isEqualTo("shop");
        assertThat(d.get("tiles").get(0).get("color").asText()).isEqualTo("red");
        final long insight = d.get("tiles").get(0).get("insight").get("id").asLong();
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + insight + "/")).get("dashboards").get(0).asLong())
                .isEqualTo(d.get("id").asLong());
        for (final String bad : new String[] {"{}", "{\"template\":{\"tiles\":[]}}",
                "{\"template\":{\"template_name\":\"x\",\"tiles\":[{\"type\":\"VIDEO\"}]}}"}) {
            final HttpResponse<String> response = send(eddy.personalKey(), "POST",
                    "/api/projects/1/dashboards/create_from_template_json/", bad);
            assertThat(response.statusCode()).as(bad).isEqualTo(400);
            assertThat(TestEddy.json(response).get("attr").asText()).isEqualTo("template");
        }
    }

    @Test
    void fromDashboardAppliesTheDashboardsFiltersToTheInsight() {
        final long dashboard = dashboard("{\"name\":\"filtered\",\"filters\":{\"date_from\":\"-90d\","
                + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\",\"type\":\"event\"}]}}");
        final long insight = insight("{\"name\":\"on filtered\",\"dashboards\":[" + dashboard + "],\"filters\":{"
                + "\"date_from\":\"-7d\",\"interval\":\"day\",\"properties\":[{\"key\":\"$os\",\"value\":\"Mac\",\"type\":\"event\"}]}}");

        final JsonNode plain = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + insight + "/"));
        final JsonNode onDashboard = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + insight + "/?from_dashboard=" + dashboard));

        assertThat(plain.get("filters").get("date_from").asText()).isEqualTo("-7d");
        assertThat(onDashboard.get("filters").get("date_from").asText()).isEqualTo("-90d");
        assertThat(onDashboard.get("filters").get("interval").asText()).isEqualTo("day");
        assertThat(onDashboard.get("filters").get("properties")).extracting(p -> p.get("key").asText()).containsExactly("$os", "$browser");
    }

    @Test
    void activityLogRecordsDashboardChanges() {
        final long dashboard = dashboard("{\"name\":\"v1\"}");
        send(eddy.personalKey(), "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", "{\"name\":\"v2\",\"pinned\":true}");

        final JsonNode d = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/"));
        assertThat(d.get("name").asText()).isEqualTo("v2");
        assertThat(d.get("pinned").asBoolean()).isTrue();
    }

    private static JsonNode find(final JsonNode results, final long id) {
        for (final JsonNode r : results) {
            if (r.get("id").asLong() == id) {
                return r;
            }
        }
        throw new AssertionError("dashboard " + id + " not listed");
    }

    private static long dashboard(final String body) {
        final HttpResponse<String> response = send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static long insight(final String body) {
        final HttpResponse<String> response = send(eddy.personalKey(), "POST", "/api/projects/1/insights/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static HttpResponse<String> send(final String key, final String method, final String path, final String body) {
        return eddy.request(key, method, path, body);
    }
}
