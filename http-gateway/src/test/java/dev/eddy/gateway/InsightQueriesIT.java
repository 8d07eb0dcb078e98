package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trends and funnels end to end on a real broker and PostgreSQL: PostHog's trends fixture and a signup funnel
 * captured over HTTP as a historical migration, then /insights/trend and /insights/funnel answer PostHog's numbers;
 * an anonymous visitor who identifies is one person, in trends and in funnels.
 */
class InsightQueriesIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RANGE = "\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"";
    /** Distinct persons with a pageview per day: the visitor counts once on the 10th and once on the 11th. */
    private static final String DAILY_UNIQUES = "[1,1,2,3,1,0,2,0,1,0,1]";
    /** Distinct persons among the visitor's pageviews (the only ones without $browser) on the 10th and 11th. */
    private static final String VISITOR_UNIQUES = "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"display\":\"BoldNumber\","
            + "\"date_from\":\"2020-01-10\",\"date_to\":\"2020-01-11\",\"properties\":[{\"key\":\"$browser\",\"operator\":\"is_not_set\"}]}";

    @BeforeAll
    static void captureTheFixture() throws InterruptedException {
        final Map<String, String> browsers = Map.of("p1", "Chrome", "p2", "Firefox", "p3", "Edge", "p4", "Safari");
        final List<String> events = new ArrayList<>();
        final String[][] views = {{"p1", "11"}, {"p1", "12"}, {"p1", "13"}, {"p1", "15"}, {"p1", "17"}, {"p1", "19"},
                {"p2", "09"}, {"p2", "12"}, {"p3", "12"}, {"p4", "15"}};
        for (final String[] v : views) {
            events.add("{\"event\":\"$pageview\",\"timestamp\":\"2020-01-" + v[1] + "T12:00:00Z\",\"properties\":{\"distinct_id\":\""
                    + v[0] + "\",\"$browser\":\"" + browsers.get(v[0]) + "\",\"$set\":{\"plan\":\"" + (v[0].equals("p2") ? "free" : "pro") + "\"}}}");
        }
        // An anonymous visit, then the visitor identifies: one person from the first event on.
        events.add("{\"event\":\"$pageview\",\"timestamp\":\"2020-01-10T08:00:00Z\",\"properties\":{\"distinct_id\":\"anon-1\"}}");
        events.add("{\"event\":\"$identify\",\"timestamp\":\"2020-01-11T08:00:00Z\",\"properties\":{\"distinct_id\":\"user-1\","
                + "\"$anon_distinct_id\":\"anon-1\"}}");
        events.add("{\"event\":\"$pageview\",\"timestamp\":\"2020-01-11T09:00:00Z\",\"properties\":{\"distinct_id\":\"user-1\"}}");
        // A signup funnel: f1 converts in an hour, f2 with an excluded event between, f3 never pays, and an
        // anonymous visitor signs up, identifies, then pays as the user.
        for (final String[] f : new String[][] {{"f1", "signed up", "01:00"}, {"f1", "paid", "02:00"}, {"f2", "signed up", "03:00"},
                {"f2", "x", "03:30"}, {"f2", "paid", "04:00"}, {"f3", "signed up", "05:00"}, {"anon-2", "signed up", "10:00"},
                {"user-2", "$identify", "11:00"}, {"user-2", "paid", "12:00"}}) {
            events.add("{\"event\":\"" + f[1] + "\",\"timestamp\":\"2021-05-0" + (f[0].endsWith("-2") ? "2" : "1") + "T" + f[2]
                    + ":00Z\",\"properties\":{\"distinct_id\":\"" + f[0] + "\"" + ("$identify".equals(f[1]) ? ",\"$anon_distinct_id\":\"anon-2\"" : "")
                    + "}}");
        }
        // Paths on 2022-02-01: three visitors' pageviews a minute apart (trailing slashes removed), one back an hour later.
        for (final String[] v : new String[][] {{"w1", "/", "10:00"}, {"w1", "/pricing/", "10:01"}, {"w1", "/signup", "10:03"},
                {"w2", "/", "10:00"}, {"w2", "/pricing", "10:02"}, {"w2", "/", "11:00"}, {"w2", "/docs", "11:01"},
                {"w3", "/docs", "10:00"}, {"w3", "/docs", "10:05"}, {"w3", "/signup", "10:06"}}) {
            events.add("{\"event\":\"$pageview\",\"timestamp\":\"2022-02-01T" + v[2] + ":00Z\",\"properties\":{\"distinct_id\":\"" + v[0]
                    + "\",\"$current_url\":\"" + v[1] + "\"}}");
        }
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken()
                + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        // Done when every event is in a timeline and the visitor's two ids are one person: the daily uniques settle.
        eddy.waitUntil(() -> trend("{\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").path("result").path(0).path("count").asInt() == 12
                        && trend("{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}]," + RANGE + "}").path("result").path(0)
                        .path("data").toString().equals(DAILY_UNIQUES)
                        && trend(VISITOR_UNIQUES).path("result").path(0).path("aggregated_value").asInt() == 1
                        && counts(funnel(FUNNEL)).equals(List.of(4, 3))
                        && trend("{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"2022-02-01\",\"date_to\":\"2022-02-01\"}")
                        .path("result").path(0).path("count").asInt() == 10,
                WAIT, "the events reached the timelines and the visitor's ids became one person");
    }


    @Test
    void aDailyTrendCountsEachDay() {
        final JsonNode body = trend("{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"$browser\",\"value\":[\"Chrome\",\"Firefox\","
                + "\"Edge\",\"Safari\"]}]}]," + RANGE + "}");
        assertThat(body.get("timezone").asText()).isEqualTo("UTC");
        assertThat(body.get("is_cached").asBoolean()).isFalse();
        final JsonNode item = body.get("result").get(0);
        assertThat(item.get("data").toString()).isEqualTo("[1,0,1,3,1,0,2,0,1,0,1]");
        assertThat(item.get("labels").get(0).asText()).isEqualTo("9-Jan-2020");
        assertThat(item.get("days").get(10).asText()).isEqualTo("2020-01-19");
        assertThat(item.get("count").asInt()).isEqualTo(10);
    }

    @Test
    void breakdownsAndPersonFiltersAndQueryParameters() {
        final JsonNode byBrowser = trend("{\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"$browser\"," + RANGE + "}").get("result");
        assertThat(byBrowser).extracting(i -> i.get("breakdown_value").asText())
                .containsExactly("Chrome", "Firefox", "Edge", "Safari", "$$_posthog_breakdown_null_$$");
        assertThat(byBrowser.get(0).get("count").asInt()).isEqualTo(6);

        final JsonNode free = trend("{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"plan\",\"value\":\"free\",\"type\":\"person\"}],"
                + RANGE + "}");
        assertThat(free.get("result").get(0).get("count").asInt()).as("p2's pageviews").isEqualTo(2);

        final String params = "?events=" + URLEncoder.encode("[{\"id\":\"$pageview\",\"math\":\"dau\"}]", StandardCharsets.UTF_8)
                + "&date_from=2020-01-09&date_to=2020-01-19";
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/trend/" + params, null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(TestEddy.json(get).get("result").get(0).get("data").toString()).isEqualTo(DAILY_UNIQUES);
    }

    @Test
    void severalBreakdownsAreCombinationsWithNullOnesLast() {
        final JsonNode result = trend("{\"events\":[{\"id\":\"$pageview\"}],\"breakdowns\":[{\"property\":\"$browser\"},"
                + "{\"property\":\"plan\",\"type\":\"person\"}]," + RANGE + "}").get("result");
        assertThat(result).extracting(i -> i.get("label").asText()).containsExactly("Chrome::pro", "Firefox::free", "Edge::pro", "Safari::pro",
                "$$_posthog_breakdown_null_$$::$$_posthog_breakdown_null_$$");
        assertThat(result).extracting(i -> i.get("count").asInt()).containsExactly(6, 2, 1, 1, 2);
        assertThat(result.get(0).get("breakdown_value").toString()).isEqualTo("[\"Chrome\",\"pro\"]");
    }

    @Test
    void stickinessCountsEachPersonByTheDaysTheyCame() {
        // p3 and p4 came on one day; p2, and the visitor as one person over their two ids, on two; p1 on six.
        final JsonNode sticky = trend("{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").get("result");
        assertThat(sticky).hasSize(1);
        assertThat(sticky.get(0).get("data").toString()).isEqualTo("[2,2,0,0,0,1,0,0,0,0,0]");
        assertThat(sticky.get(0).get("count").asInt()).isEqualTo(5);
        assertThat(sticky.get(0).get("labels").get(5).asText()).isEqualTo("6 days");

        // PostHog's older form, a trend shown as stickiness, as query parameters; the previous period had nobody.
        final String params = "?insight=TRENDS&shown_as=Stickiness&compare=true&events="
                + URLEncoder.encode("[{\"id\":\"$pageview\",\"math\":\"total\"}]", StandardCharsets.UTF_8) + "&date_from=2020-01-09&date_to=2020-01-19";
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/trend/" + params, null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        final JsonNode compared = TestEddy.json(get).get("result");
        assertThat(compared).extracting(i -> i.get("compare_label").asText()).containsExactly("current", "previous");
        assertThat(compared.get(0).get("data").toString()).isEqualTo("[2,2,0,0,0,1,0,0,0,0,0]");
        assertThat(compared.get(1).get("count").asInt()).isZero();

        final HttpResponse<String> criteria = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"$pageview\"}],\"stickiness_criteria\":{\"operator\":\"gte\",\"value\":2}}");
        assertThat(criteria.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(criteria).get("detail").asText()).contains("stickiness criteria");
    }

    @Test
    void aLifecycleClassifiesEachPersonEachDay() {
        // Each person was created by its first event: p2 on the 9th, the visitor on the 10th (anonymous, then one person
        // with user-1), p1 on the 11th, p3 on the 12th, p4 on the 15th.
        final JsonNode result = trend("{\"insight\":\"LIFECYCLE\",\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").get("result");
        assertThat(result).extracting(i -> i.get("status").asText()).containsExactly("new", "returning", "resurrecting", "dormant");
        assertThat(result).extracting(i -> i.get("data").toString()).containsExactly(
                "[1.0,1.0,1.0,1.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0]",
                "[0.0,0.0,1.0,1.0,1.0,0.0,0.0,0.0,0.0,0.0,0.0]",
                "[0.0,0.0,0.0,1.0,0.0,0.0,1.0,0.0,1.0,0.0,1.0]",
                "[0.0,-1.0,0.0,-1.0,-2.0,-1.0,0.0,-2.0,0.0,-1.0,0.0]");
        assertThat(result.get(0).get("label").asText()).isEqualTo("$pageview - new");

        // PostHog's older form: a trend shown as a lifecycle, as query parameters.
        final String params = "?insight=TRENDS&shown_as=Lifecycle&events="
                + URLEncoder.encode("[{\"id\":\"$pageview\"}]", StandardCharsets.UTF_8) + "&date_from=2020-01-09&date_to=2020-01-19";
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/trend/" + params, null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(TestEddy.json(get).get("result").get(3).get("count").asDouble()).isEqualTo(-8.0);

        final HttpResponse<String> two = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"insight\":\"LIFECYCLE\",\"events\":[{\"id\":\"$pageview\"},{\"id\":\"$pageleave\"}]}");
        assertThat(two.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(two).get("detail").asText()).contains("one series");
    }

    @Test
    void retentionCountsEachDaysCohortComingBack() {
        // Days 9 to 15: p2 on the 9th and 12th; the visitor (anon-1, then user-1: one person) on the 10th and 11th; p1 on
        // the 11th, 12th, 13th and 15th; p3 on the 12th; p4 on the 15th.
        final HttpResponse<String> post = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/retention/",
                "{\"target_entity\":{\"id\":\"$pageview\",\"type\":\"events\"},\"date_to\":\"2020-01-15\",\"total_intervals\":7}");
        assertThat(post.statusCode()).as(post.body()).isEqualTo(200);
        final JsonNode body = TestEddy.json(post);
        assertThat(body.get("timezone").asText()).isEqualTo("UTC");
        final JsonNode cohorts = body.get("result");
        assertThat(cohorts).extracting(c -> c.get("values").findValues("count").toString().replace(" ", "")).containsExactly("[1,0,0,1,0,0,0]", "[1,1,0,0,0,0]",
                "[2,1,1,0,1]", "[3,1,0,1]", "[1,0,1]", "[0,0]", "[2]");
        assertThat(cohorts.get(0).get("label").asText()).isEqualTo("Day 0");
        // The cohort of the 11th: p1 came back on the 12th, 13th and 15th; the visitor did not.
        final HttpResponse<String> cohort = eddy.request(eddy.personalKey(), "GET", cohorts.get(2).get("people_url").asText(), null);
        assertThat(cohort.statusCode()).as(cohort.body()).isEqualTo(200);
        assertThat(TestEddy.json(cohort).get("result")).extracting(r -> r.get("appearances").toString())
                .containsExactlyInAnyOrder("[1,1,1,0,1]", "[1,0,0,0,0]");
        assertThat(cohorts.get(0).get("date").asText()).isEqualTo("2020-01-09T00:00:00Z");

        // First-time retention, as query parameters (the entity as JSON text): each person in the cohort of their first day.
        final String params = "?retention_type=retention_first_time&total_intervals=7&date_to=2020-01-15&target_entity="
                + URLEncoder.encode("{\"id\":\"$pageview\",\"type\":\"events\"}", StandardCharsets.UTF_8);
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/retention/" + params, null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(TestEddy.json(get).get("result")).extracting(c -> c.get("values").findValues("count").toString().replace(" ", "")).containsExactly(
                "[1,0,0,1,0,0,0]", "[1,1,0,0,0,0]", "[1,1,1,0,1]", "[1,0,0,0]", "[0,0,0]", "[0,0]", "[1]");

        // By browser, every cohort pooled per value: p1 (Chrome) came back 1 to 4 days after one of their days.
        final HttpResponse<String> byBrowser = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/retention/",
                "{\"date_to\":\"2020-01-15\",\"total_intervals\":7,\"breakdowns\":[{\"property\":\"$browser\"}],\"breakdown_type\":\"event\"}");
        assertThat(byBrowser.statusCode()).as(byBrowser.body()).isEqualTo(200);
        final JsonNode rows = TestEddy.json(byBrowser).get("result");
        assertThat(rows).extracting(r -> r.get("label").asText()).containsExactly("$$_posthog_breakdown_null_$$", "Chrome", "Edge", "Firefox",
                "Safari");
        assertThat(rows.get(1).get("values").findValues("count").toString().replace(" ", "")).isEqualTo("[1,1,1,1,1,0,0]");

        final HttpResponse<String> bad = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/retention/", "{\"period\":\"Fortnight\"}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(bad).get("detail").asText()).contains("period must be one of Hour, Day, Week, Month");
    }

    @Test
    void eachNumberLinksToItsPersons() {
        final JsonNode item = trend("{\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").get("result").get(0);
        assertThat(item.get("persons_urls")).hasSize(11);
        final JsonNode twelfth = item.get("persons_urls").get(3);
        assertThat(twelfth.get("filter").get("date_from").asText()).startsWith("2020-01-12T00:00");
        assertThat(twelfth.get("filter").get("entity_id").asText()).isEqualTo("$pageview");
        // p1, p2 and p3 each viewed a page on the 12th.
        final JsonNode people = persons(twelfth.get("url").asText());
        assertThat(people.get("results").get(0).get("count").asInt()).isEqualTo(3);
        assertThat(people.get("results").get(0).get("people")).extracting(p -> p.get("value_at_data_point").asInt()).containsExactly(1, 1, 1);
        assertThat(people.get("next").isNull()).isTrue();

        final JsonNode chrome = trend("{\"events\":[{\"id\":\"$pageview\"}],\"breakdown\":\"$browser\"," + RANGE + "}").get("result").get(0);
        assertThat(chrome.get("breakdown_value").asText()).isEqualTo("Chrome");
        final JsonNode p1 = persons(chrome.get("persons_urls").get(3).get("url").asText()).get("results").get(0).get("people");
        assertThat(p1).hasSize(1);
        assertThat(p1.get(0).get("properties").get("plan").asText()).isEqualTo("pro");
        assertThat(p1.get(0).get("type").asText()).isEqualTo("person");

        // The stickiness bar of six days is p1; the lifecycle's new persons of the 12th are p3.
        final JsonNode sticky = trend("{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").get("result").get(0);
        final JsonNode sixDays = persons(sticky.get("persons_urls").get(5).get("url").asText()).get("results").get(0).get("people");
        assertThat(sixDays).extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactly("p1");
        final JsonNode fresh = trend("{\"insight\":\"LIFECYCLE\",\"events\":[{\"id\":\"$pageview\"}]," + RANGE + "}").get("result").get(0);
        assertThat(fresh.get("status").asText()).isEqualTo("new");
        final JsonNode newOnTheTwelfth = persons(fresh.get("persons_urls").get(3).get("url").asText()).get("results").get(0).get("people");
        assertThat(newOnTheTwelfth).extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactly("p3");

        final JsonNode total = trend("{\"events\":[{\"id\":\"$pageview\"}],\"display\":\"BoldNumber\"," + RANGE + "}").get("result").get(0);
        final JsonNode everyone = persons(total.get("persons").get("url").asText() + "&limit=2");
        assertThat(everyone.get("results").get(0).get("people")).hasSize(2);
        assertThat(everyone.get("results").get(0).get("people").get(0).get("value_at_data_point").asInt()).as("p1's six pageviews").isEqualTo(6);
        assertThat(everyone.get("next").asText()).contains("offset=2");
    }

    private static JsonNode persons(final String url) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "GET", "/" + url, null);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    @Test
    void pathsCountEachSessionsStepsAsPostHogDoes() {
        // w1: / > /pricing > /signup; w2: / > /pricing, then a new session / > /docs; w3: /docs (twice, one step) > /signup.
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/path/",
                "{\"include_event_types\":[\"$pageview\"],\"date_from\":\"2022-02-01\",\"date_to\":\"2022-02-01\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode edges = TestEddy.json(response).get("result");
        assertThat(edges).extracting(e -> e.get("source").asText() + " > " + e.get("target").asText() + " " + e.get("value").asInt())
                .containsExactly("1_/ > 2_/pricing 2", "1_/ > 2_/docs 1", "1_/docs > 2_/signup 1", "2_/pricing > 3_/signup 1");
        assertThat(edges.get(0).get("average_conversion_time").asDouble()).as("1 and 2 minutes").isEqualTo(90_000.0);

        final String params = "?include_event_types=" + URLEncoder.encode("[\"$pageview\"]", StandardCharsets.UTF_8)
                + "&date_from=2022-02-01&date_to=2022-02-01&start_point=/pricing";
        final HttpResponse<String> get = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/path/" + params, null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(TestEddy.json(get).get("result")).extracting(e -> e.get("source").asText() + " > " + e.get("target").asText())
                .containsExactly("1_/pricing > 2_/signup");

        final HttpResponse<String> bad = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/path/",
                "{\"include_event_types\":[\"hogql\"]}");
        assertThat(bad.statusCode()).isEqualTo(400);
    }

    @Test
    void anIdentifiedVisitorIsOnePersonFromTheirFirstVisit() {
        final JsonNode dau = trend(VISITOR_UNIQUES);
        assertThat(dau.get("result").get(0).get("aggregated_value").asInt()).as("anon-1 and user-1 are one person").isEqualTo(1);
    }

    @Test
    void badQueriesAre400AndOtherProjectsAre404() {
        final HttpResponse<String> bad = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\",\"math\":\"sum\"}]}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(bad).get("detail").asText()).contains("math_property");
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/999/insights/trend/", "{\"events\":[{\"id\":\"x\"}]}")
                .statusCode()).isEqualTo(404);
        assertThat(eddy.request(null, "POST", "/api/projects/1/insights/trend/", "{}").statusCode()).isEqualTo(401);
        // Hourly over ten years: too many intervals to hold, refused before anything is read.
        final HttpResponse<String> huge = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"hour\",\"date_from\":\"2010-01-01\",\"date_to\":\"2020-01-01\"}");
        assertThat(huge.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(huge).get("detail").asText()).contains("coarser interval");
        final HttpResponse<String> ancient = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1}],\"funnel_viz_type\":\"trends\","
                        + "\"interval\":\"hour\",\"date_from\":\"1900-01-01\"}");
        assertThat(ancient.statusCode()).isEqualTo(400);
    }

    @Test
    void aFunnelCountsConversionsWithinTheWindowAndAcrossIdentify() {
        final JsonNode steps = funnel(FUNNEL).get("result");
        assertThat(counts(funnel(FUNNEL))).containsExactly(4, 3);
        assertThat(steps.get(0).get("name").asText()).isEqualTo("signed up");
        assertThat(steps.get(0).get("average_conversion_time").isNull()).isTrue();
        assertThat(steps.get(1).get("action_id").asText()).isEqualTo("paid");
        assertThat(steps.get(1).get("average_conversion_time").asDouble()).as("1 h, 1 h and the visitor's 2 h").isEqualTo(4800);
        assertThat(steps.get(1).get("median_conversion_time").asDouble()).isEqualTo(3600);

        // Each step links to its persons: f1, f2 and the visitor (one person, anon-2 and user-2) paid; f3 dropped off.
        assertThat(steps.get(0).get("dropped_people_url").isNull()).as("nobody drops off before the first step").isTrue();
        assertThat(steps.get(1).get("converted_people_url").asText()).startsWith("/api/projects/1/persons/funnel/?").contains("funnel_step=2");
        final JsonNode paid = persons(steps.get(1).get("converted_people_url").asText().substring(1)).get("results").get(0);
        assertThat(paid.get("people")).extracting(p -> p.get("distinct_ids").toString().contains("user-2") ? "visitor" : p.get("distinct_ids").get(0).asText())
                .containsExactlyInAnyOrder("f1", "f2", "visitor");
        final JsonNode dropped = persons(steps.get(1).get("dropped_people_url").asText().substring(1)).get("results").get(0);
        assertThat(dropped.get("people")).extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactly("f3");
        final JsonNode entered = persons(steps.get(0).get("converted_people_url").asText().substring(1) + "&limit=3").get("results").get(0);
        assertThat(entered.get("count").asInt()).isEqualTo(3);
        // PostHog's clients also send the filter as a body.
        final HttpResponse<String> posted = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/persons/funnel/",
                FUNNEL.replace("{\"events\"", "{\"funnel_step\":-2,\"events\""));
        assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
        assertThat(TestEddy.json(posted).get("results").get(0).get("people")).extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactly("f3");
        final HttpResponse<String> noStep = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/persons/funnel/", FUNNEL);
        assertThat(noStep.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(noStep).get("detail").asText()).contains("funnel_step is required");

        final String excluded = FUNNEL.replace("\"funnel_window_interval\"",
                "\"exclusions\":[{\"id\":\"x\",\"funnel_from_step\":0,\"funnel_to_step\":1}],\"funnel_window_interval\"");
        assertThat(counts(funnel(excluded))).as("f2 leaves the funnel").containsExactly(3, 2);
        assertThat(counts(funnel(FUNNEL.replace("{\"events\"", "{\"funnel_order_type\":\"strict\",\"events\""))))
                .as("strict: x and $identify come between").containsExactly(4, 1);
        assertThat(counts(funnel(FUNNEL.replace("\"funnel_window_interval\":1", "\"funnel_window_interval\":90")
                .replace("\"day\"", "\"minute\"")))).as("only f1 and f2 within 90 minutes").containsExactly(4, 2);
    }

    @Test
    void resultsExportAsPostHogsCsv() {
        final HttpResponse<String> trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/?format=csv",
                "{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"$browser\",\"value\":[\"Chrome\",\"Firefox\",\"Edge\","
                        + "\"Safari\"]}]}]," + RANGE + "}");
        assertThat(trend.statusCode()).isEqualTo(200);
        assertThat(trend.headers().firstValue("Content-Type").orElse("")).startsWith("text/csv");
        assertThat(trend.body().lines()).containsExactly(
                "series,9-Jan-2020,10-Jan-2020,11-Jan-2020,12-Jan-2020,13-Jan-2020,14-Jan-2020,15-Jan-2020,16-Jan-2020,17-Jan-2020,18-Jan-2020,"
                        + "19-Jan-2020",
                "$pageview,1,0,1,3,1,0,2,0,1,0,1");

        final HttpResponse<String> funnel = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/?format=csv", FUNNEL);
        assertThat(funnel.statusCode()).isEqualTo(200);
        assertThat(funnel.body().lines()).containsExactly(
                "name,breakdown_value,action_id,count,median_conversion_time (seconds),average_conversion_time (seconds)",
                "signed up,,signed up,4,,", "paid,,paid,3,3600.0,4800.0");
    }

    @Test
    void badFunnelsAre400WithPostHogsWords() {
        final HttpResponse<String> oneStep = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"signed up\"}]}");
        assertThat(oneStep.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(oneStep).get("detail").asText()).isEqualTo("Funnels require at least two steps.");
        final HttpResponse<String> range = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"a\"},{\"id\":\"b\"}],\"exclusions\":[{\"id\":\"x\",\"funnel_from_step\":1,\"funnel_to_step\":1}]}");
        assertThat(TestEddy.json(range).get("detail").asText())
                .isEqualTo("Exclusion event range is invalid. End of range should be greater than start.");
    }

    private static final String FUNNEL = "{\"events\":[{\"id\":\"signed up\",\"order\":0},{\"id\":\"paid\",\"order\":1}],"
            + "\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-03\",\"funnel_window_interval\":1,\"funnel_window_interval_unit\":\"day\"}";

    private static JsonNode funnel(final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/", query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static List<Integer> counts(final JsonNode funnel) {
        final List<Integer> counts = new ArrayList<>();
        funnel.path("result").forEach(step -> counts.add(step.get("count").asInt()));
        return counts;
    }

    private static JsonNode trend(final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", query);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }
}
