package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The insight list's parameters as PostHog's {@code InsightViewSet._filter_request} reads them. Each test names its
 * insights with a marker of its own and lists with {@code search=<marker>}, so the tests of the class share a database.
 */
class InsightListParamsTest extends RouteTest {
    private static final List<String> BASIC_FIELDS = List.of("id", "short_id", "name", "derived_name", "filters", "query", "dashboards",
            "dashboard_tiles", "description", "last_refresh", "refreshing", "saved", "tags", "updated_at", "created_by", "created_at",
            "last_modified_at", "favorited", "user_access_level", "last_viewed_at");
    private static TestUsers.TestUser member;

    @BeforeAll
    static void setUp() throws Exception {
        member = TestUsers.member(eddy.config().pg(), 1, "*");
    }

    @Test
    void basicAnswersPostHogsBasicFormWithoutResults() {
        final String m = marker();
        final long id = create("{\"name\":\"" + m + "\",\"filters\":{\"events\":[{\"id\":\"$pageview\"}]}}");
        send("POST", "/api/projects/1/insights/" + id + "/viewed/", "{}");

        final JsonNode basic = list(m, "basic=true").get(0);
        final List<String> fields = new ArrayList<>();
        basic.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).containsExactlyElementsOf(BASIC_FIELDS);
        assertThat(basic.get("filters").get("events").get(0).get("id").asText()).isEqualTo("$pageview");
        assertThat(basic.get("refreshing").asBoolean()).isFalse();
        assertThat(basic.get("user_access_level").asText()).isEqualTo("manager");
        assertThat(basic.get("last_viewed_at").isNull()).isFalse();
        assertThat(list(m, "basic=0").get(0).has("result")).as("basic=0 is the full form").isTrue();
        final JsonNode one = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + id + "/?basic=true"));
        assertThat(one.has("result")).isFalse();
        assertThat(one.get("short_id").asText()).isEqualTo(basic.get("short_id").asText());
    }

    @Test
    void searchMatchesNameDerivedNameDescriptionAndTagsInAnyCase() {
        // PostHog's test_searching_insights_includes_tags_and_description (the needle a marker of this test's), plus the
        // derived name.
        final String needle = marker();
        final long one = create("{\"name\":\"" + needle + " in a haystack\"}");
        create("{\"name\":\"not matching\"}");
        final long three = create("{\"name\":\"not matching name\",\"tags\":[\"" + needle.toUpperCase(java.util.Locale.ROOT) + "\"]}");
        final long four = create("{\"name\":\"not matching name\",\"description\":\"another " + needle + "\",\"tags\":[\"not matching\"]}");
        final long five = create("{\"derived_name\":\"" + needle + " count\"}");

        assertThat(ids(list(needle, ""))).containsExactlyInAnyOrder(one, three, four, five);
    }

    @Test
    void dashboardsKeepsInsightsOnEveryListedDashboard() {
        final String m = marker();
        final long a = createAt("/api/projects/1/dashboards/", "{\"name\":\"" + m + " a\"}");
        final long b = createAt("/api/projects/1/dashboards/", "{\"name\":\"" + m + " b\"}");
        final long onBoth = create("{\"name\":\"" + m + "\",\"dashboards\":[" + a + "," + b + "]}");
        final long onA = create("{\"name\":\"" + m + "\",\"dashboards\":[" + a + "]}");
        create("{\"name\":\"" + m + "\"}");

        assertThat(ids(list(m, "dashboards=" + enc("[" + a + "]")))).containsExactlyInAnyOrder(onBoth, onA);
        assertThat(ids(list(m, "dashboards=" + enc("[" + a + "," + b + "]")))).containsExactly(onBoth);
        assertThat(list(m, "dashboards=" + enc("[]"))).hasSize(3);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/?dashboards=" + enc("[1,")).statusCode()).isEqualTo(400);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/?dashboards=" + enc("[\"x\"]")).statusCode()).isEqualTo(400);
    }

    @Test
    void insightKindComesFromLegacyFiltersOrTheQuery() {
        final String m = marker();
        final long legacyTrend = create("{\"name\":\"" + m + "\",\"filters\":{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"a\"}]}}");
        final long legacyFunnel = create("{\"name\":\"" + m + "\",\"filters\":{\"insight\":\"FUNNELS\"}}");
        final long vizFunnel = create("{\"name\":\"" + m + "\",\"query\":{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"FunnelsQuery\","
                + "\"series\":[]}}}");
        final long bareTrends = create("{\"name\":\"" + m + "\",\"query\":{\"kind\":\"TrendsQuery\",\"series\":[]}}");
        final long sql = create("{\"name\":\"" + m + "\",\"query\":{\"kind\":\"DataVisualizationNode\",\"source\":{\"kind\":\"HogQLQuery\","
                + "\"query\":\"select 1\"}}}");
        create("{\"name\":\"" + m + "\"}");

        assertThat(ids(list(m, "insight=TRENDS"))).containsExactly(legacyTrend);
        assertThat(ids(list(m, "insight=FUNNELS"))).containsExactlyInAnyOrder(legacyFunnel, vizFunnel);
        assertThat(ids(list(m, "insight=JSON"))).as("a query PostHog's kinds do not name").containsExactly(bareTrends);
        assertThat(ids(list(m, "insight=SQL"))).containsExactly(sql);
        assertThat(list(m, "insight=RETENTION")).isEmpty();
        assertThat(list(m, "insight=trends")).as("names are exact, as PostHog's").isEmpty();
    }

    @Test
    void orderSortsByAFieldAndLastViewedPutsTheNeverViewedAtTheEnd() {
        final String m = marker();
        final long first = create("{\"name\":\"" + m + " b\"}");
        final long second = create("{\"name\":\"" + m + " a\"}");
        final long third = create("{\"name\":\"" + m + " c\"}");
        send("PATCH", "/api/projects/1/insights/" + first + "/", "{\"description\":\"modified last\"}");
        send("POST", "/api/projects/1/insights/" + third + "/viewed/", "{}");
        send("POST", "/api/projects/1/insights/" + second + "/viewed/", "{}");

        assertThat(ids(list(m, "order=-last_modified_at"))).containsExactly(first, third, second);
        assertThat(ids(list(m, "order=name"))).containsExactly(second, first, third);
        assertThat(ids(list(m, "order=-last_viewed_at"))).containsExactly(second, third, first);
        assertThat(ids(list(m, "order=last_viewed_at"))).containsExactly(first, third, second);
        final HttpResponse<String> bad = eddy.getAuthorized("/api/projects/1/insights/?order=password");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(bad).get("attr").asText()).isEqualTo("order");
    }

    @Test
    void dateFromAndDateToBoundLastModifiedAt() {
        final String m = marker();
        final long id = create("{\"name\":\"" + m + "\"}");

        assertThat(ids(list(m, "date_from=-1h"))).containsExactly(id);
        assertThat(list(m, "date_to=-1h")).isEmpty();
        assertThat(ids(list(m, "date_from=2000-01-01&date_to=2999-01-01"))).containsExactly(id);
        assertThat(list(m, "date_from=2999-01-01")).isEmpty();
        assertThat(ids(list(m, "created_date_from=-1d"))).containsExactly(id);
        assertThat(list(m, "last_viewed_date_from=-1d")).as("never viewed").isEmpty();
        assertThat(list(m, "date_from=neither")).as("PostHog reads what is no date as now").isEmpty();
    }

    @Test
    void userFavoritedAndCreatedByNarrowByWhoAndHow() {
        final String m = marker();
        final long mine = create("{\"name\":\"" + m + "\",\"favorited\":true}");
        final HttpResponse<String> byMember = eddy.request(member.key(), "POST", "/api/projects/1/insights/", "{\"name\":\"" + m + "\"}");
        final long theirs = TestEddy.json(byMember).get("id").asLong();

        assertThat(ids(list(m, "user=true"))).containsExactly(mine);
        assertThat(ids(list(m, "user=false"))).as("present, whatever its value").containsExactly(mine);
        assertThat(ids(list(m, "favorited=false"))).as("present, whatever its value").containsExactly(mine);
        assertThat(ids(list(m, "created_by=" + member.id()))).containsExactly(theirs);
        assertThat(ids(list(m, "created_by=" + enc("[" + member.id() + "]")))).containsExactly(theirs);
        assertThat(list(m, "created_by=" + enc("[]"))).hasSize(2);
        assertThat(eddy.getAuthorized("/api/projects/1/insights/?created_by=me").statusCode()).isEqualTo(400);
    }

    @Test
    void savedMeansSavedOrOnADashboard() {
        final String m = marker();
        final long saved = create("{\"name\":\"" + m + "\",\"saved\":true}");
        final long dashboard = createAt("/api/projects/1/dashboards/", "{\"name\":\"" + m + "\"}");
        final long onDashboard = create("{\"name\":\"" + m + "\",\"dashboards\":[" + dashboard + "]}");
        final long neither = create("{\"name\":\"" + m + "\"}");

        assertThat(ids(list(m, "saved=true"))).containsExactlyInAnyOrder(saved, onDashboard);
        assertThat(ids(list(m, "saved=1"))).containsExactlyInAnyOrder(saved, onDashboard);
        assertThat(ids(list(m, "saved=false"))).as("not saved, even on a dashboard").containsExactlyInAnyOrder(onDashboard, neither);
        assertThat(ids(list(m, "saved=nonsense"))).as("PostHog's str_to_bool: false").containsExactlyInAnyOrder(onDashboard, neither);
        assertThat(ids(list(m, "tags=" + enc("[\"none\"]")))).isEmpty();
    }

    private static String marker() {
        return "m" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    private static JsonNode list(final String marker, final String params) {
        final HttpResponse<String> response = eddy.getAuthorized("/api/projects/1/insights/?limit=100&search=" + marker + "&" + params);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).get("results");
    }

    private static List<Long> ids(final JsonNode results) {
        final List<Long> ids = new ArrayList<>();
        results.forEach(r -> ids.add(r.get("id").asLong()));
        return ids;
    }

    private static long create(final String body) {
        return createAt("/api/projects/1/insights/", body);
    }

    private static long createAt(final String path, final String body) {
        final HttpResponse<String> response = send("POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }

    private static HttpResponse<String> send(final String method, final String path, final String body) {
        return eddy.request(eddy.personalKey(), method, path, body);
    }

    private static String enc(final String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
