package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * What the Query API refuses before it reads any store, each with PostHog's error shape naming the field: a body
 * without a query, a node without a kind, HogQL, kinds Eddy does not answer, bad refresh modes and list parameters.
 */
class QueryRequestsTest extends RouteTest {

    @Test
    void aBodyWithoutAQueryNodeIsRefusedNamingIt() {
        // The API's contract (GET /api/schema/) catches these first.
        assertRefused("{}", "query", "does not have required property \"query\"");
        assertRefused("{\"query\":\"TrendsQuery\"}", "query", "'query'");
        assertRefused("{\"query\":{\"series\":[]}}", "query", "'query'");
        assertRefused("{\"query\":{\"kind\":\"InsightVizNode\"}}", "query", "The query has no 'kind'.");
    }

    @Test
    void hogqlIsRefusedNamingTheNodesEddyAnswers() {
        final JsonNode refused = assertRefused("{\"query\":{\"kind\":\"HogQLQuery\",\"query\":\"select count() from events\"}}", "query",
                "HogQLQuery is not supported by Eddy");
        assertThat(refused.get("code").asText()).isEqualTo("unsupported_query");
        assertThat(refused.get("detail").asText()).contains("TrendsQuery", "FunnelsQuery", "ActorsQuery");
        assertRefused("{\"query\":{\"kind\":\"DataVisualizationNode\",\"source\":{\"kind\":\"HogQLQuery\",\"query\":\"select 1\"}}}", "query",
                "HogQLQuery is not supported by Eddy");
        assertRefused("{\"query\":{\"kind\":\"WebOverviewQuery\"}}", "query", "Queries of kind 'WebOverviewQuery' are not supported by Eddy.");
    }

    @Test
    void badRequestFieldsAreRefusedNamingThem() {
        final String trend = "{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}]}";
        assertRefused("{\"query\":" + trend + ",\"refresh\":\"sometimes\"}", "refresh", "'refresh' must be one of");
        assertRefused("{\"query\":" + trend + ",\"refresh\":3}", "refresh", "'refresh'");
        assertRefused("{\"query\":" + trend + ",\"client_query_id\":\"\"}", "client_query_id", "'client_query_id' must not be blank.");
        assertRefused("{\"query\":" + trend + ",\"filters_override\":[1]}", "filters_override", "'filters_override'");
    }

    @Test
    void anActorsQueryAsksOnlyWhatEddyAnswers() {
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"select\":[\"count()\"]}}", "select", "not 'count()'");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"select\":[]}}", "select", "'select' must be a non-empty list");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"limit\":0}}", "limit", "'limit' must be an integer from 1 to 10000.");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"offset\":-1}}", "offset", "'offset' must be an integer from 0");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"orderBy\":[\"properties.email ASC\"]}}", "orderBy", "newest first only");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"properties\":\"plan\"}}", "properties", "must be a list of property filters");
        final String trend = "{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}]}";
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"TrendsQuery\"}}}", "source",
                "must be an InsightActorsQuery or a FunnelsActorsQuery");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"InsightActorsQuery\",\"source\":{\"kind\":"
                + "\"PathsQuery\"}}}}", "source", "The persons of PathsQuery insights are not listed by Eddy.");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"InsightActorsQuery\",\"source\":" + trend
                + ",\"compare\":\"previous\"}}}", "source", "previous period");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"InsightActorsQuery\",\"source\":" + trend
                + ",\"series\":1}}}", "series", "one of the query's 1 series");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"InsightActorsQuery\",\"source\":" + trend
                + ",\"day\":\"yesterday\"}}}", "day", "a data point's date");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"InsightActorsQuery\",\"source\":{\"kind\":"
                + "\"LifecycleQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}]},\"day\":\"2020-01-12\"}}}",
                "status", "'status' is required.");
        assertRefused("{\"query\":{\"kind\":\"ActorsQuery\",\"source\":{\"kind\":\"FunnelsActorsQuery\",\"source\":{\"kind\":"
                + "\"FunnelsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"a\"},{\"kind\":\"EventsNode\",\"event\":\"b\"}]}}}}",
                "funnelStep", "'funnelStep' is required.");
    }

    @Test
    void anEventsQueryAsksOnlyWhatEddyAnswers() {
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\"}}", "select", "needs 'select'");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"count()\",\"event\"]}}", "select", "not 'count()'");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"where\":[\"event = 'x'\"]}}", "where",
                "'where' (HogQL expressions)");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"after\":\"12345\"}}", "after",
                "'after' must be a date");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"orderBy\":[\"event\"]}}", "orderBy", "by time only");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"personId\":\"p1\"}}", "personId", "a person's uuid");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"event\"],\"limit\":10001}}", "limit", "from 1 to 10000");
        assertRefused("{\"query\":{\"kind\":\"EventsQuery\",\"select\":[\"properties.\"]}}", "select", "needs a key");
    }

    @Test
    void statusesOfUnknownQueriesAreNotFoundAndTheirCancelSaysSo() {
        final HttpResponse<String> status = eddy.request(eddy.personalKey(), "GET", "/api/projects/1/query/no-such-query/", null);
        assertThat(status.statusCode()).isEqualTo(404);
        assertThat(RouteTier.json(status).get("code").asText()).isEqualTo("not_found");
        final HttpResponse<String> cancel = eddy.request(eddy.personalKey(), "DELETE", "/api/projects/1/query/no-such-query/", null);
        assertThat(cancel.statusCode()).isEqualTo(200);
        assertThat(RouteTier.json(cancel).get("message").asText()).isEqualTo("Query not found");
    }

    private static JsonNode assertRefused(final String body, final String attr, final String detail) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/query/", body);
        assertThat(response.statusCode()).as(body + " -> " + response.body()).isEqualTo(400);
        final JsonNode error = RouteTier.json(response);
        assertThat(error.get("type").asText()).isEqualTo("validation_error");
        assertThat(error.get("attr").asText()).as(body).isEqualTo(attr);
        assertThat(error.get("detail").asText()).as(body).contains(detail);
        return error;
    }
}
