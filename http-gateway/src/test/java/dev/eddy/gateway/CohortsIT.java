package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cohorts end to end: PostHog's cohorts API on PostgreSQL, dynamic cohorts of person properties and static ones of
 * distinct ids, used as insight filters and as flag conditions ({@code /flags} and local evaluation's
 * {@code send_cohorts}), over persons made by events captured through {@code /batch/}.
 */
class CohortsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RANGE = "\"date_from\":\"2019-05-01\",\"date_to\":\"2019-05-03\"";
    private static final String PRO = "{\"properties\":{\"type\":\"OR\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"plan\",\"type\":\"person\","
            + "\"operator\":\"exact\",\"value\":\"pro\"}]}]}}";
    private static long pro;

    @BeforeAll
    static void capturePersonsAndTheirPageviews() throws InterruptedException {
        final String batch = String.join(",", List.of(
                view("u1", "01", "{\"plan\":\"pro\"}"), view("u1", "02", null),
                view("u2", "01", "{\"plan\":\"free\"}"), view("u2", "03", null),
                view("u3", "03", "{\"plan\":\"pro\"}")));
        final HttpResponse<String> sent = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"historical_migration\":true,"
                + "\"batch\":[" + batch + "]}");
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        pro = created("{\"name\":\"Pro users\",\"filters\":" + PRO + "}").get("id").asLong();
        eddy.waitUntil(() -> count("[]") == 5 && count(cohort(pro, "in")) == 3, WAIT, "the pageviews and persons reached the stores");
    }

    private static String view(final String user, final String day, final String set) {
        return "{\"event\":\"$pageview\",\"timestamp\":\"2019-05-" + day + "T12:00:00Z\",\"distinct_id\":\"" + user + "\",\"properties\":{"
                + (set == null ? "" : "\"$set\":" + set) + "}}";
    }

    private static String cohort(final long id, final String operator) {
        return "[{\"key\":\"id\",\"type\":\"cohort\",\"value\":" + id + ",\"operator\":\"" + operator + "\"}]";
    }

    @Test
    void aDynamicCohortIsItsFiltersAndBadFiltersAre400() {
        final JsonNode cohort = TestEddy.json(eddy.getAuthorized("/api/projects/1/cohorts/" + pro + "/"));
        assertThat(cohort.get("name").asText()).isEqualTo("Pro users");
        assertThat(cohort.get("is_static").asBoolean()).isFalse();
        assertThat(cohort.get("cohort_type").asText()).isEqualTo("person_property");
        assertThat(cohort.get("is_calculating").asBoolean()).isFalse();
        assertThat(cohort.get("count").asInt()).as("u1 and u3, counted as the cohort is read").isEqualTo(2);
        assertThat(cohort.get("filters").get("properties").get("values").get(0).get("values").get(0).get("value").asText()).isEqualTo("pro");

        for (final String[] bad : new String[][] {
            {"{\"properties\":{\"type\":\"OR\",\"values\":[{\"key\":\"plan\",\"type\":\"person\",\"value\":\"pro\"}]}}",
                "Missing required keys for person filter: operator"},
            {"{\"properties\":{\"type\":\"OR\",\"values\":[{\"key\":\"id\",\"type\":\"cohort\"}]}}", "Missing required keys for cohort filter: value"},
            {"{\"properties\":{\"type\":\"OR\",\"values\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":999999}]}}", "Invalid Cohort ID in filter"},
            {"{\"properties\":{\"type\":\"OR\",\"values\":[{\"key\":\"$pageview\",\"type\":\"behavioral\",\"value\":\"performed_event\","
                + "\"event_type\":\"events\"}]}}", "Behavioral cohort filters"},
            {"{\"groups\":[]}", "Must contain a 'properties' key"}}) {
            final HttpResponse<String> refused = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/cohorts/",
                    "{\"name\":\"bad\",\"filters\":" + bad[0] + "}");
            assertThat(refused.statusCode()).as(bad[0] + ": " + refused.body()).isEqualTo(400);
            assertThat(TestEddy.json(refused).get("detail").asText()).as(bad[0]).startsWith(bad[1]);
        }
        // PostHog's legacy groups are filters too.
        final JsonNode legacy = created("{\"name\":\"legacy\",\"groups\":[{\"properties\":{\"plan\":\"free\"}}]}");
        assertThat(legacy.get("count").isNull()).as("not counted on creation").isTrue();
        assertThat(legacy.get("filters").get("properties").get("values").get(0).get("values").get(0).get("key").asText()).isEqualTo("plan");
        assertThat(count(cohort(legacy.get("id").asLong(), "in"))).as("u2's pageviews").isEqualTo(2);
    }

    @Test
    void insightsFilterByDynamicAndStaticCohorts() throws InterruptedException {
        assertThat(count(cohort(pro, "in"))).as("u1's two pageviews and u3's").isEqualTo(3);
        final JsonNode members = TestEddy.json(eddy.getAuthorized("/api/projects/1/cohorts/" + pro + "/persons/?limit=1"));
        assertThat(members.get("results")).hasSize(1);
        assertThat(members.get("results").get(0).get("properties").get("plan").asText()).isEqualTo("pro");
        assertThat(members.get("next").isNull()).as("a second page").isFalse();
        assertThat(count(cohort(pro, "not_in"))).as("u2's").isEqualTo(2);

        // A static cohort from a CSV of distinct ids (PostHog reads a one-column file's first row as an id too).
        final JsonNode listed = created("{\"name\":\"listed " + UUID.randomUUID() + "\",\"is_static\":true,\"csv\":\"User ID\\nu2\\n\\nnobody\\n\"}");
        final long id = listed.get("id").asLong();
        assertThat(listed.get("count").asLong()).isEqualTo(3);
        assertThat(listed.get("cohort_type").asText()).isEqualTo("static");
        assertThat(count(cohort(id, "in"))).isEqualTo(2);

        // u3 added by person uuid: all of u3's distinct ids are members.
        final String u3 = TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?distinct_id=u3")).get("results").get(0).get("uuid").asText();
        final HttpResponse<String> added = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/cohorts/" + id + "/add_persons_to_static_cohort/",
                "{\"person_ids\":[\"" + u3 + "\"]}");
        assertThat(added.statusCode()).as(added.body()).isEqualTo(200);
        assertThat(count(cohort(id, "in"))).isEqualTo(3);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/cohorts/" + id + "/persons/")).get("results"))
                .extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactlyInAnyOrder("u2", "u3");
        assertThat(eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/cohorts/" + pro + "/add_persons_to_static_cohort/",
                "{\"person_ids\":[\"" + u3 + "\"]}").statusCode()).as("only static cohorts").isEqualTo(400);

        final HttpResponse<String> missing = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":" + cohort(999999, "in") + "}");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(missing).get("detail").asText()).isEqualTo("Cohort ID 999999 does not exist!");
        final HttpResponse<String> csv = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/cohorts/",
                "{\"name\":\"no ids\",\"is_static\":true,\"csv\":\"name,age\\nx,3\"}");
        assertThat(csv.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(csv).get("attr").asText()).isEqualTo("csv");
    }

    @Test
    void aStaticCohortIsUploadedAsAFormsCsvFile() {
        // As PostHog's app uploads one: multipart/form-data, the CSV a file part, is_static a form's boolean.
        final String boundary = "----eddy" + UUID.randomUUID();
        final String name = "uploaded " + UUID.randomUUID();
        final String form = part(boundary, "name", null, name) + part(boundary, "is_static", null, "true")
                + part(boundary, "csv", "users.csv", "u1\nu3\n") + "--" + boundary + "--\r\n";
        final HttpResponse<String> created = eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri("/api/projects/1/cohorts/"))
                .header("Authorization", "Bearer " + eddy.personalKey()).header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(form)).build());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode cohort = TestEddy.json(created);
        assertThat(cohort.get("name").asText()).isEqualTo(name);
        assertThat(cohort.get("is_static").asBoolean()).isTrue();
        assertThat(cohort.get("count").asInt()).isEqualTo(2);
        assertThat(count(cohort(cohort.get("id").asLong(), "in"))).as("u1's two pageviews and u3's").isEqualTo(3);
        // A later upload (PATCH) adds members.
        final String more = part(boundary, "csv", "more.csv", "u2\n") + "--" + boundary + "--\r\n";
        final HttpResponse<String> patched = eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri("/api/projects/1/cohorts/" + cohort.get("id") + "/"))
                .header("Authorization", "Bearer " + eddy.personalKey()).header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .method("PATCH", java.net.http.HttpRequest.BodyPublishers.ofString(more)).build());
        assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
        assertThat(count(cohort(cohort.get("id").asLong(), "in"))).isEqualTo(5);
        // A form's field that is no boolean is a 400 naming it.
        final String bad = part(boundary, "name", null, "x") + part(boundary, "is_static", null, "maybe") + "--" + boundary + "--\r\n";
        final HttpResponse<String> refused = eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri("/api/projects/1/cohorts/"))
                .header("Authorization", "Bearer " + eddy.personalKey()).header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(bad)).build());
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(refused).get("attr").asText()).isEqualTo("is_static");
    }

    private static String part(final String boundary, final String name, final String file, final String value) {
        return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"" + (file == null ? "" : "; filename=\"" + file + "\"")
                + "\r\n" + (file == null ? "" : "Content-Type: text/csv\r\n") + "\r\n" + value + "\r\n";
    }

    @Test
    void trendsAndFunnelsBreakDownByCohorts() {
        // Pro users (u1, u3) and all: u1's two pageviews and u3's; all five. A static cohort of u2 answers its id as a value.
        final long u2 = created("{\"name\":\"u2 only " + UUID.randomUUID() + "\",\"is_static\":true,\"csv\":\"u2\\n\"}").get("id").asLong();
        final HttpResponse<String> trend = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\"}],\"breakdown_type\":\"cohort\",\"breakdown\":[" + pro + "," + u2 + ",\"all\"]," + RANGE + "}");
        assertThat(trend.statusCode()).as(trend.body()).isEqualTo(200);
        final JsonNode items = TestEddy.json(trend).get("result");
        assertThat(items).extracting(i -> i.get("label").asText() + "=" + i.get("count").asInt())
                .containsExactly("all users=5", "Pro users=3", items.get(2).get("label").asText() + "=2");
        assertThat(items.get(1).get("breakdown_value").asLong()).isEqualTo(pro);
        assertThat(items.get(0).get("breakdown_value").asText()).isEqualTo("all");
        // The persons behind the Pro users' first day: u1.
        final JsonNode people = TestEddy.json(eddy.getAuthorized("/" + items.get(1).get("persons_urls").get(0).get("url").asText()));
        assertThat(people.get("results").get(0).get("people")).extracting(p -> p.get("distinct_ids").get(0).asText()).containsExactly("u1");

        final HttpResponse<String> funnel = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/",
                "{\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"$pageview\",\"order\":1}],\"breakdown_type\":\"cohort\","
                        + "\"breakdown\":[" + pro + "]," + RANGE + "}");
        assertThat(funnel.statusCode()).as(funnel.body()).isEqualTo(200);
        final JsonNode steps = TestEddy.json(funnel).get("result").get(0);
        assertThat(steps.get(0).get("breakdown").asText()).isEqualTo("Pro users");
        assertThat(steps).extracting(step -> step.get("count").asInt()).as("u1 twice, u3 once").containsExactly(2, 1);

        final HttpResponse<String> unknown = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\"}],\"breakdown_type\":\"cohort\",\"breakdown\":[999998]}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(unknown).get("detail").asText()).isEqualTo("Cohort ID 999998 does not exist!");
    }

    @Test
    void flagsMatchCohortsOnTheServerAndSendThemForLocalEvaluation() throws InterruptedException {
        final String key = "pro-" + UUID.randomUUID().toString().substring(0, 8);
        final HttpResponse<String> flag = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", "{\"key\":\"" + key + "\","
                + "\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":" + pro + "}],\"rollout_percentage\":100}]}}");
        assertThat(flag.statusCode()).as(flag.body()).isEqualTo(201);
        eddy.waitUntil(() -> enabled(key, "u1") && !enabled(key, "u2"), WAIT, "the flag reached the definitions");
        assertThat(enabled(key, "u3")).isTrue();

        final HttpResponse<String> unknown = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", "{\"key\":\"x-" + key + "\","
                + "\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"id\",\"type\":\"cohort\",\"value\":999999}]}]}}");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(unknown).get("detail").asText()).isEqualTo("Cohort with id 999999 does not exist");

        final JsonNode local = TestEddy.json(eddy.getAuthorized("/api/feature_flag/local_evaluation/?token=" + eddy.projectToken() + "&send_cohorts"));
        assertThat(local.get("cohorts").get(Long.toString(pro)).get("type").asText()).isEqualTo("OR");
        assertThat(TestEddy.json(eddy.getAuthorized("/api/feature_flag/local_evaluation/?token=" + eddy.projectToken())).get("cohorts").isEmpty())
                .as("without send_cohorts").isTrue();

        final HttpResponse<String> inUse = eddy.request(eddy.personalKey(), "PATCH", "/api/projects/1/cohorts/" + pro + "/", "{\"deleted\":true}");
        assertThat(inUse.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(inUse).get("detail").asText()).contains("is used in 1 active feature flag(s): " + key);
        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/projects/1/cohorts/" + pro + "/", null).statusCode()).isEqualTo(405);
    }

    private static boolean enabled(final String key, final String user) {
        final HttpResponse<String> response = eddy.post("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).path("flags").path(key).path("enabled").asBoolean(false);
    }

    private static JsonNode created(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/cohorts/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response);
    }

    private static int count(final String properties) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/",
                "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":" + properties + "," + RANGE + "}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).get("result").get(0).get("count").asInt();
    }
}
