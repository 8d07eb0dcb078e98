package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.DashboardOverride;
import dev.eddy.gateway.insights.InsightCalculation;
import dev.eddy.gateway.insights.RefreshMode;

/**
 * The body of PostHog's {@code POST /query/} ({@code QueryRequest}): the query node, how to use the cache
 * ({@code refresh}), the client's id for the calculation, and a dashboard's filters to apply.
 *
 * @param node          the query node with {@code filters_override} applied, its wrapper (an {@code InsightVizNode},
 *                      a {@code DataTableNode}, ...) removed
 * @param mode          the {@code refresh} mode as the Query API reads it: absent is {@code blocking} (PostHog's
 *                      default), and {@code force_cache} (or {@code false}) is {@code blocking} too, since PostHog's
 *                      query endpoint always calculates a stale or missing result; the legacy {@code async: true} is
 *                      {@code async}
 * @param clientQueryId the client's id for the calculation ({@code client_query_id}), or null
 *
 * <p>The body has passed the API's contract (the types of {@code refresh}, {@code client_query_id},
 * {@code filters_override}): what is read here is what the contract cannot say.
 */
public record QueryRequest(JsonNode node, RefreshMode mode, String clientQueryId) {

    public static QueryRequest parse(final ObjectNode body) {
        final JsonNode query = body.get("query");
        if (query == null || query.isNull()) {
            throw ApiError.badRequest("required", "This field is required.", "query");
        }
        if (!query.isObject()) {
            throw ApiError.badRequest("invalid_input", "The query must be an object with a 'kind'.", "query");
        }
        final JsonNode overrides = body.get("filters_override");
        final JsonNode unwrapped = InsightCalculation.WRAPPERS.contains(query.path("kind").asText()) ? query.path("source") : query;
        if (!unwrapped.isObject() || !unwrapped.path("kind").isTextual()) {
            throw ApiError.badRequest("invalid_input", "The query has no 'kind'.", "query");
        }
        final JsonNode node = overrides == null || overrides.isNull() ? unwrapped : DashboardOverride.applyToQuery(unwrapped, overrides);
        return new QueryRequest(node, mode(body), clientQueryId(body.get("client_query_id")));
    }

    /** The query node's kind ({@code TrendsQuery}, {@code EventsQuery}, ...). */
    public String kind() {
        return node.path("kind").asText();
    }

    private static RefreshMode mode(final ObjectNode body) {
        if (body.path("async").asBoolean(false)) {
            return RefreshMode.ASYNC;
        }
        final JsonNode refresh = body.get("refresh");
        final RefreshMode mode = RefreshMode.parse(refresh == null || refresh.isNull() ? null : refresh.asText());
        return mode == RefreshMode.FORCE_CACHE ? RefreshMode.BLOCKING : mode;
    }

    private static String clientQueryId(final JsonNode id) {
        if (id == null || id.isNull()) {
            return null;
        }
        if (id.asText().isBlank()) {
            throw ApiError.badRequest("invalid_input", "'client_query_id' must not be blank.", "client_query_id");
        }
        return id.asText().trim();
    }
}
