package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.InsightDataset;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostHog's Query API ({@code POST /query/}, {@code GET}/{@code DELETE /query/:id/}) end to end: the insight nodes answer
 * the numbers the legacy routes and saved insights answer for the same data (one engine), with PostHog's response
 * fields, the cache, background calculations and their statuses; {@code ActorsQuery} lists the persons.
 */
class QueryApiIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RANGE = "\"dateRange\":{\"date_from\":\"2020-01-09\",\"date_to\":\"2020-01-19\"}";
    private static final String TREND = "{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}],"
            + "\"interval\":\"day\"," + RANGE + "}";
    private static final String DAILY = InsightDataset.DAILY;

    @BeforeAll
    static void captureTheDataset() throws InterruptedException {
        final List<String> events = new ArrayList<>(InsightDataset.events());
        // Sessions for paths: s1 and s2 save within minutes of opening, s3 only opens.
        for (final String[] e : new String[][] {{"s1", "opened", "00"}, {"s1", "saved", "05"}, {"s2", "opened", "01"}, {"s2", "saved", "06"},
                {"s3", "opened", "02"}}) {
            events.add("{\"event\":\"" + e[1] + "\",\"timestamp\":\"2022-01-01T10:" + e[2] + ":00Z\",\"properties\":{\"distinct_id\":\""
                    + e[0] + "\"}}");
        }
        final HttpResponse<String> batch = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken()
                + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        eddy.waitUntil(() -> {
            final HttpResponse<String> trend = query("{\"query\":" + TREND + ",\"refresh\":\"force_blocking\"}");
            final HttpResponse<String> paid = query("{\"query\":{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":"
                    + "\"paid\"}],\"dateRange\":{\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-02\"}},\"refresh\":\"force_blocking\"}");
            final HttpResponse<String> persons = query("{\"query\":{\"kind\":\"ActorsQuery\",\"select\":[\"id\"]}}");
            return trend.statusCode() == 200 && TestEddy.json(trend).path("results").path(0).path("count").asInt() == 12
                    && paid.statusCode() == 200 && TestEddy.json(paid).path("results").path(0).path("count").asInt() == 3
                    && persons.statusCode() == 200 && TestEddy.json(persons).path("results").size() == 12;
        }, WAIT, "every event reached the timelines and every person the person stores");
    }

    @Test
    void aTrendsQueryAnswersPostHogsResponseAndIsCachedByItsDefinition() {
        final HttpResponse<String> first = query("{\"query\":{\"kind\":\"InsightVizNode\",\"source\":" + TREND + "}}");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        final JsonNode calculated = TestEddy.json(first);
        assertThat(calculated.get("results").get(0).get("data").toString()).isEqualTo(DAILY);
        assertThat(calculated.get("results").get(0).get("label").asText()).isEqualTo("$pageview");
        assertThat(calculated.get("cache_key").asText()).startsWith("cache_");
        assertThat(calculated.get("timezone").asText()).isEqualTo("UTC");
        assertThat(calculated.get("query_status").isNull()).isTrue();
        assertThat(calculated.get("error").isNull() && calculated.get("hogql").isNull()).isTrue();
        assertThat(calculated.get("next_allowed_client_refresh").asText()).isNotEmpty();

        // The node alone (no wrapper) is the same question: answered from the cache, under the same key.
        final JsonNode cached = TestEddy.json(query("{\"query\":" + TREND + "}"));
        assertThat(cached.get("is_cached").asBoolean()).isTrue();
        assertThat(cached.get("cache_key").asText()).isEqualTo(calculated.get("cache_key").asText());
        assertThat(cached.get("last_refresh").asText()).isEqualTo(calculated.get("last_refresh").asText());
        assertThat(cached.get("results").get(0).get("data").toString()).isEqualTo(DAILY);

        final JsonNode forced = TestEddy.json(query("{\"query\":" + TREND + ",\"refresh\":\"force_blocking\"}"));
        assertThat(forced.get("is_cached").asBoolean()).isFalse();
        assertThat(forced.get("results").get(0).get("data").toString()).isEqualTo(DAILY);

        // A dashboard's filters narrow the range: the 12th to the 14th.
        final JsonNode overridden = TestEddy.json(query("{\"query\":" + TREND
                + ",\"filters_override\":{\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-14\"}}"));
        assertThat(overridden.get("results").get(0).get("data").toString()).isEqualTo("[3,1,0]");
        assertThat(overridden.get("cache_key").asText()).isNotEqualTo(calculated.get("cache_key").asText());
    }

    @Test
    void everyInsightNodeIsAnsweredByTheInsightEngine() {
        final JsonNode funnel = TestEddy.json(query("{\"query\":{\"kind\":\"FunnelsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"signed up\"},{\"kind\":\"EventsNode\",\"event\":\"paid\"}],\"dateRange\":{\"date_from\":\"2021-05-01\","
                + "\"date_to\":\"2021-05-03\"},\"funnelsFilter\":{\"funnelWindowInterval\":1,\"funnelWindowIntervalUnit\":\"day\"}}}"));
        assertThat(funnel.get("results")).extracting(s -> s.get("count").asInt()).containsExactly(4, 3);

        // p3 and p4 came on one day, p2 and p5 on two, p1 on six of the eleven.
        final JsonNode stickiness = TestEddy.json(query("{\"query\":{\"kind\":\"StickinessQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"$pageview\"}],\"interval\":\"day\"," + RANGE + "}}"));
        assertThat(stickiness.get("results").get(0).get("data").toString()).isEqualTo("[2,2,0,0,0,1,0,0,0,0,0]");

        // On the 12th p3 is new, p1 returning, p2 back after two days and p5 (last seen on the 11th) dormant.
        final JsonNode lifecycle = TestEddy.json(query("{\"query\":{\"kind\":\"LifecycleQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"$pageview\"}],\"interval\":\"day\",\"dateRange\":{\"date_from\":\"2020-01-12\",\"date_to\":\"2020-01-14\"}}}"));
        assertThat(lifecycle.get("results")).extracting(i -> i.get("data").toString())
                .containsExactly("[1.0,0.0,0.0]", "[1.0,1.0,0.0]", "[1.0,0.0,0.0]", "[-1.0,-2.0,-1.0]");

        // p2, p5 and p1 first came in the week of the 5th, p2 and p1 again the next; p3 and p4 first in that next week.
        final JsonNode retention = TestEddy.json(query("{\"query\":{\"kind\":\"RetentionQuery\",\"dateRange\":{\"date_to\":\"2020-01-15\"},"
                + "\"retentionFilter\":{\"period\":\"Week\",\"totalIntervals\":3,\"retentionType\":\"retention_first_time\","
                + "\"targetEntity\":{\"id\":\"$pageview\",\"type\":\"events\"}}}}"));
        assertThat(retention.get("results")).extracting(c -> c.get("values").findValues("count").toString().replace(" ", ""))
                .containsExactly("[0,0,0]", "[3,2]", "[2]");

        // s1's and s2's sessions go from opening to saving, s3's has one step (no edge).
        final JsonNode paths = TestEddy.json(query("{\"query\":{\"kind\":\"PathsQuery\",\"dateRange\":{\"date_from\":\"2022-01-01\","
                + "\"date_to\":\"2022-01-02\"},\"pathsFilter\":{\"includeEventTypes\":[\"custom_event\"]}}}"));
        assertThat(paths.get("results")).extracting(e -> e.get("source").asText() + ">" + e.get("target").asText() + "=" + e.get("value"))
                .containsExactly("1_opened>2_saved=2");
    }

    @Test
    void aBackgroundCalculationIsFollowedByItsStatusUntilItsResultsArrive() throws InterruptedException {
        final String body = "{\"query\":{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\","
                + "\"math\":\"dau\"}],\"interval\":\"day\"," + RANGE + "},\"refresh\":\"force_async\",\"client_query_id\":\"query-api-dau\"}";
        final HttpResponse<String> started = query(body);
        final JsonNode status = TestEddy.json(started).get("query_status");
        assertThat(status.get("id").asText()).isEqualTo("query-api-dau");
        assertThat(status.get("insight_id").isNull()).isTrue();
        assertThat(started.statusCode()).as("202 while it runs, 200 once done").isEqualTo(status.get("complete").asBoolean() ? 200 : 202);
        assertThat(TestEddy.json(started).get("results").isNull()).isTrue();

        final JsonNode[] done = new JsonNode[1];
        eddy.waitUntil(() -> {
            final HttpResponse<String> polled = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/query/query-api-dau/", null);
            done[0] = TestEddy.json(polled).get("query_status");
            return polled.statusCode() == 200 && done[0].get("complete").asBoolean();
        }, WAIT, "the background calculation completed");
        assertThat(done[0].get("error").asBoolean()).isFalse();
        assertThat(done[0].get("results").get("results").get(0).get("data").toString()).as("nobody viewed twice a day: as many persons as views").isEqualTo(DAILY);

        final HttpResponse<String> cancel = eddy.request(eddy.personalKey(), "DELETE", "/api/projects/1/query/query-api-dau/", null);
        assertThat(cancel.statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(cancel).get("message").asText()).isEqualTo("Query already complete");
        assertThat(eddy.request(eddy.personalKey(), "GET", "/api/projects/1/query/query-api-dau/", null).statusCode())
                .as("forgotten once deleted, as PostHog deletes it").isEqualTo(404);
        assertThat(eddy.request(eddy.personalKey(), "GET", "/api/projects/1/query/never-asked/", null).statusCode()).isEqualTo(404);
    }

    @Test
    void anActorsQueryListsThePersonsNewestFirst() {
        final JsonNode page = TestEddy.json(query("{\"query\":{\"kind\":\"ActorsQuery\",\"select\":[\"properties.email -- Email\","
                + "\"created_at\",\"person\"],\"limit\":3}}"));
        assertThat(page.get("columns").toString()).isEqualTo("[\"properties.email -- Email\",\"created_at\",\"person\"]");
        assertThat(page.get("results")).extracting(r -> r.get(1).asText())
                .containsExactly("2022-01-01T10:02:00Z", "2022-01-01T10:01:00Z", "2022-01-01T10:00:00Z");
        assertThat(page.get("results").get(0).get(0).isNull()).as("s3 has no email").isTrue();
        assertThat(page.get("results").get(0).get(2).get("distinct_ids").toString()).isEqualTo("[\"s3\"]");
        assertThat(page.get("hasMore").asBoolean()).isTrue();
        assertThat(page.get("limit").asInt()).isEqualTo(3);

        final JsonNode pro = TestEddy.json(query("{\"query\":{\"kind\":\"ActorsQuery\",\"select\":[\"properties.email\"],"
                + "\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"operator\":\"exact\",\"type\":\"person\"}]}}"));
        assertThat(pro.get("results")).extracting(r -> r.get(0).asText()).containsExactly("p3@example.com", "p1@example.com");
        assertThat(pro.get("hasMore").asBoolean()).isFalse();

        final JsonNode searched = TestEddy.json(query("{\"query\":{\"kind\":\"DataTableNode\",\"source\":{\"kind\":\"ActorsQuery\","
                + "\"search\":\"P2@EXAMPLE\",\"select\":[\"person_display_name -- Person\",\"id\"]}}}"));
        assertThat(searched.get("results")).singleElement().satisfies(row -> {
            assertThat(row.get(0).get("display_name").asText()).isEqualTo("p2@example.com");
            assertThat(row.get(0).get("distinct_id").asText()).isEqualTo("p2");
            assertThat(row.get(1).asText()).isEqualTo(row.get(0).get("id").asText());
        });

        final JsonNode past = TestEddy.json(query("{\"query\":{\"kind\":\"ActorsQuery\",\"offset\":12}}"));
        assertThat(past.get("results")).isEmpty();
        assertThat(past.get("hasMore").asBoolean()).isFalse();
    }

    @Test
    void anActorsQueryOfAnInsightsNumberListsItsPersons() {
        // The 12th's pageviews: p1, p2 and p3, one each.
        final JsonNode day = actors("{\"kind\":\"InsightActorsQuery\",\"source\":" + TREND + ",\"day\":\"2020-01-12\",\"series\":0}",
                "[\"actor\",\"event_count\",\"matched_recordings\"]");
        assertThat(day.get("columns").toString()).isEqualTo("[\"actor\",\"event_count\",\"matched_recordings\"]");
        assertThat(day.get("results")).extracting(r -> r.get(0).get("distinct_ids").get(0).asText() + "=" + r.get(1).asInt())
                .containsExactlyInAnyOrder("p1=1", "p2=1", "p3=1");
        assertThat(day.get("results").get(0).get(2)).isEmpty();
        assertThat(day.get("hasMore").asBoolean()).isFalse();
        // The whole range, most events first: p1 came six times.
        final JsonNode all = actors("{\"kind\":\"InsightActorsQuery\",\"source\":" + TREND + "}", null);
        assertThat(all.get("columns").toString()).isEqualTo("[\"actor\",\"event_count\"]");
        assertThat(all.get("results").get(0).get(0).get("properties").get("email").asText()).isEqualTo("p1@example.com");
        assertThat(all.get("results").get(0).get(1).asInt()).isEqualTo(6);
        assertThat(all.get("results")).hasSize(5);

        // Stickiness: p3 and p4 came on exactly one day.
        final JsonNode once = actors("{\"kind\":\"InsightActorsQuery\",\"source\":{\"kind\":\"StickinessQuery\",\"series\":[{\"kind\":"
                + "\"EventsNode\",\"event\":\"$pageview\"}],\"interval\":\"day\"," + RANGE + "},\"day\":1}", "[\"properties.email\"]");
        assertThat(once.get("results")).extracting(r -> r.get(0).asText()).containsExactlyInAnyOrder("p3@example.com", "p4@example.com");

        // Lifecycle: on the 12th p3 is new.
        final JsonNode fresh = actors("{\"kind\":\"InsightActorsQuery\",\"source\":{\"kind\":\"LifecycleQuery\",\"series\":[{\"kind\":"
                + "\"EventsNode\",\"event\":\"$pageview\"}],\"interval\":\"day\",\"dateRange\":{\"date_from\":\"2020-01-12\","
                + "\"date_to\":\"2020-01-14\"}},\"day\":\"2020-01-12\",\"status\":\"new\"}", "[\"properties.email\"]");
        assertThat(fresh.get("results")).extracting(r -> r.get(0).asText()).containsExactly("p3@example.com");

        // Retention: the week of the 5th's first-timers p1, p2 and p5, each with the weeks they came in.
        final JsonNode cohort = actors("{\"kind\":\"InsightActorsQuery\",\"source\":{\"kind\":\"RetentionQuery\",\"dateRange\":"
                + "{\"date_to\":\"2020-01-15\"},\"retentionFilter\":{\"period\":\"Week\",\"totalIntervals\":3,\"retentionType\":"
                + "\"retention_first_time\",\"targetEntity\":{\"id\":\"$pageview\",\"type\":\"events\"}}},\"interval\":1}",
                "[\"properties.email\",\"appearances\"]");
        assertThat(cohort.get("results")).extracting(r -> r.get(0).asText() + " " + r.get(1))
                .containsExactlyInAnyOrder("p1@example.com [1,1]", "p2@example.com [1,1]", "p5@example.com [1,0]");

        // A funnel's converted and dropped persons.
        final String funnel = "{\"kind\":\"FunnelsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"signed up\"},{\"kind\":"
                + "\"EventsNode\",\"event\":\"paid\"}],\"dateRange\":{\"date_from\":\"2021-05-01\",\"date_to\":\"2021-05-03\"}}";
        assertThat(actors("{\"kind\":\"FunnelsActorsQuery\",\"source\":" + funnel + ",\"funnelStep\":2}", "[\"actor\"]").get("results"))
                .extracting(r -> r.get(0).get("distinct_ids").get(0).asText()).containsExactlyInAnyOrder("f1", "f2", "f4");
        assertThat(actors("{\"kind\":\"FunnelsActorsQuery\",\"source\":" + funnel + ",\"funnelStep\":-2}", "[\"actor\"]").get("results"))
                .extracting(r -> r.get(0).get("distinct_ids").get(0).asText()).containsExactly("f3");
    }

    @Test
    void anEventsQueryListsEventsNewestFirstWithTheColumnsAsked() {
        final JsonNode january = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"*\",\"event\",\"person\","
                + "\"properties.$browser -- Browser\",\"timestamp\",\"coalesce(properties.$current_url, properties.$screen_name, event) -- Url\"],"
                + "\"after\":\"2020-01-01\",\"before\":\"2020-02-01\",\"limit\":4}}"));
        assertThat(january.get("columns").get(3).asText()).isEqualTo("properties.$browser -- Browser");
        assertThat(january.get("results")).extracting(r -> r.get(4).asText())
                .containsExactly("2020-01-19T12:00:00Z", "2020-01-17T12:00:00Z", "2020-01-15T12:00:00Z", "2020-01-15T12:00:00Z");
        final JsonNode newest = january.get("results").get(0);
        assertThat(newest.get(0).get("event").asText()).isEqualTo("$pageview");
        assertThat(newest.get(0).get("distinct_id").asText()).isEqualTo("p1");
        assertThat(newest.get(0).get("properties").get("$browser").asText()).isEqualTo("Chrome");
        assertThat(newest.get(0).get("team_id").asLong()).isEqualTo(1);
        assertThat(newest.get(2).get("properties").get("email").asText()).isEqualTo("p1@example.com");
        assertThat(newest.get(2).get("created_at").asText()).as("p1's first event").isEqualTo("2020-01-11T12:00:00Z");
        assertThat(newest.get(3).asText()).isEqualTo("Chrome");
        assertThat(newest.get(5).asText()).as("no URL: the event's name").isEqualTo("$pageview");
        assertThat(january.get("hasMore").asBoolean()).isTrue();

        final JsonNode lastPage = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"distinct_id\"],"
                + "\"after\":\"2020-01-01\",\"before\":\"2020-02-01\",\"limit\":5,\"offset\":10}}"));
        assertThat(lastPage.get("results")).extracting(r -> r.get(0).asText()).containsExactly("p5", "p2");
        assertThat(lastPage.get("hasMore").asBoolean()).isFalse();

        final JsonNode paid = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"distinct_id\",\"uuid\"],"
                + "\"event\":\"paid\",\"after\":\"all\",\"orderBy\":[\"timestamp ASC\"]}}"));
        assertThat(paid.get("results")).extracting(r -> r.get(0).asText()).containsExactly("f1", "f2", "f4");

        // The last 24 hours, PostHog's default range, hold none of these events.
        assertThat(TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"*\"]}}")).get("results")).isEmpty();
    }

    @Test
    void anEventsQueryFiltersByPropertiesPersonsAndActions() {
        final String january = "\"after\":\"2020-01-01\",\"before\":\"2020-02-01\"";
        final JsonNode firefox = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"distinct_id\",\"timestamp\"],"
                + january + ",\"properties\":[{\"key\":\"$browser\",\"value\":\"Firefox\",\"operator\":\"exact\",\"type\":\"event\"}]}}"));
        assertThat(firefox.get("results")).extracting(r -> r.get(0).asText() + " " + r.get(1).asText())
                .containsExactly("p2 2020-01-12T12:00:00Z", "p2 2020-01-09T12:00:00Z");

        final JsonNode pro = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"distinct_id\"]," + january
                + ",\"fixedProperties\":[{\"key\":\"plan\",\"value\":\"pro\",\"operator\":\"exact\",\"type\":\"person\"}]}}"));
        // p1's six pageviews and p3's one (at the same time as one of p1's, so in either order there).
        assertThat(pro.get("results")).extracting(r -> r.get(0).asText()).containsExactlyInAnyOrder("p1", "p1", "p1", "p1", "p1", "p1", "p3")
                .startsWith("p1", "p1", "p1", "p1").endsWith("p1");

        final String p3 = TestEddy.json(query("{\"query\":{\"kind\":\"ActorsQuery\",\"search\":\"p3@example.com\",\"select\":[\"id\"]}}"))
                .get("results").get(0).get(0).asText();
        final JsonNode ofP3 = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"person_id\",\"timestamp\"],"
                + "\"after\":\"all\",\"personId\":\"" + p3 + "\"}}"));
        assertThat(ofP3.get("results")).extracting(r -> r.get(0).asText() + " " + r.get(1).asText())
                .containsExactly(p3 + " 2020-01-12T12:00:00Z");

        final HttpResponse<String> action = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/actions/",
                "{\"name\":\"paid or opened\",\"steps\":[{\"event\":\"paid\"},{\"event\":\"opened\"}]}");
        assertThat(action.statusCode()).as(action.body()).isEqualTo(201);
        final JsonNode ofAction = TestEddy.json(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\",\"distinct_id\"],"
                + "\"after\":\"all\",\"actionId\":" + TestEddy.json(action).get("id").asLong() + "}}"));
        assertThat(ofAction.get("results")).extracting(r -> r.get(0).asText() + " " + r.get(1).asText())
                .containsExactly("opened s3", "opened s2", "opened s1", "paid f4", "paid f2", "paid f1");
        assertThat(query("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"actionId\":999999}}").statusCode())
                .as("an action the project does not have").isEqualTo(400);
    }

    private static JsonNode actors(final String source, final String select) {
        final HttpResponse<String> response = query("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":" + source
                + (select == null ? "" : ",\"select\":" + select) + "}}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response);
    }

    private static HttpResponse<String> query(final String body) {
        return eddy.request(eddy.personalKey(), "POST", "/api/projects/1/query/", body);
    }
}
