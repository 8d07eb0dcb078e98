package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.trends.QueryInliner;
import dev.eddy.persons.PersonQuery;
import dev.eddy.persons.PersonState;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import dev.eddy.trends.Cohort;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The Query API's list nodes: {@code ActorsQuery} over a project's persons, answered as PostHog's actors query runner
 * answers ({@code {results, columns, types, hasMore, limit, offset, ...}}, one row per person, one value per column
 * of {@code select}).
 *
 * <p>Eddy has no SQL engine, so a column is one of the expressions PostHog's persons lists use ({@link PersonColumn}),
 * each optionally labelled as PostHog's UI labels them ({@code "created_at -- Created"}); another is a {@code 400}
 * naming it. Persons are read from every streams instance's person stores, as the persons list reads them.
 */
public final class ListQueries {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 10_000;
    private static final List<String> DEFAULT_ACTOR_COLUMNS = List.of("person", "id", "created_at");

    private final PersonsService persons;
    private final QueryInliner inliner;

    /** @param inliner puts the definitions of the cohorts a filter names into it */
    public ListQueries(final PersonsService persons, final QueryInliner inliner) {
        this.persons = persons;
        this.inliner = inliner;
    }

    /**
     * An {@code ActorsQuery} of persons: {@code search} (a part of the {@code email} or {@code name} property, or a
     * distinct id), {@code properties} and {@code fixedProperties} (person property and cohort filters, all of
     * them), newest first, {@code limit} (default 100) from {@code offset}.
     */
    public Future<ObjectNode> actors(final Project project, final JsonNode node) {
        if (node.hasNonNull("source")) {
            return Future.failedFuture(ApiError.badRequest("unsupported_query", "An ActorsQuery with a 'source' (the actors behind an "
                    + "insight's number) is not supported by Eddy: follow the insight result's persons_urls / people_url instead.", "source"));
        }
        final List<PersonColumn> columns = columns(node.get("select"), DEFAULT_ACTOR_COLUMNS);
        final int limit = bounded(node, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
        final int offset = bounded(node, "offset", 0, 0, Integer.MAX_VALUE);
        orderBy(node.get("orderBy"));
        final Optional<String> search = Optional.ofNullable(node.get("search")).filter(JsonNode::isTextual).map(JsonNode::asText);
        final ArrayNode filters = Json.mapper().createArrayNode();
        for (final String field : new String[] {"properties", "fixedProperties"}) {
            final JsonNode value = node.get(field);
            if (value == null || value.isNull()) {
                continue;
            }
            if (!value.isArray() && !value.isObject()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "'" + field + "' must be a list of property filters.", field));
            }
            filters.add(value.isArray() ? Json.mapper().createObjectNode().put("type", "AND").set("values", value) : value);
        }
        final Future<Optional<JsonNode>> definition = filters.isEmpty() ? Future.succeededFuture(Optional.empty())
                : inliner.inline(project.id(), filters).map(inlined -> Optional.of(cohortOf(inlined)));
        return definition.compose(cohort -> persons.list(project.id(), new PersonQuery(search, limit, offset, cohort)))
                .map(page -> {
                    final ObjectNode body = Json.mapper().createObjectNode();
                    final ArrayNode results = body.putArray("results");
                    for (final PersonState person : page.results()) {
                        final ArrayNode row = results.addArray();
                        columns.forEach(column -> row.add(column.value(person)));
                    }
                    final ArrayNode names = body.putArray("columns");
                    final ArrayNode types = body.putArray("types");
                    columns.forEach(column -> {
                        names.add(column.expression());
                        types.add(column.type());
                    });
                    body.put("hasMore", page.count() > (long) offset + page.results().size());
                    body.put("limit", limit);
                    body.put("offset", offset);
                    body.put("missing_actors_count", 0);
                    body.putNull("hogql");
                    body.putArray("timings");
                    return body;
                });
    }

    /** The filters as a cohort's definition, which every streams instance evaluates on its persons as it evaluates a cohort. */
    private static JsonNode cohortOf(final JsonNode inlinedFilters) {
        final ObjectNode definition = Json.mapper().createObjectNode();
        definition.put("id", 0);
        definition.putObject("filters").putObject("properties").put("type", "AND").set("values", inlinedFilters);
        try {
            Cohort.parse(definition);
        } catch (final IllegalArgumentException e) {
            throw ApiError.badRequest("invalid_input", e.getMessage(), "properties");
        }
        return definition;
    }

    private static List<PersonColumn> columns(final JsonNode select, final List<String> defaults) {
        if (select == null || select.isNull()) {
            return defaults.stream().map(PersonColumn::parse).toList();
        }
        if (!select.isArray() || select.isEmpty()) {
            throw ApiError.badRequest("invalid_input", "'select' must be a non-empty list of column expressions.", "select");
        }
        final List<PersonColumn> columns = new ArrayList<>();
        for (final JsonNode expression : select) {
            if (!expression.isTextual()) {
                throw ApiError.badRequest("invalid_input", "'select' must be a list of strings.", "select");
            }
            columns.add(PersonColumn.parse(expression.asText()));
        }
        return columns;
    }

    /** Persons come newest first, PostHog's order for them; another order is refused rather than ignored. */
    private static void orderBy(final JsonNode orderBy) {
        if (orderBy == null || orderBy.isNull() || orderBy.isArray() && orderBy.isEmpty()) {
            return;
        }
        if (orderBy.isArray() && orderBy.size() == 1 && orderBy.get(0).asText().trim().matches("(?i)created_at\\s+desc")) {
            return;
        }
        throw ApiError.badRequest("unsupported_query", "Eddy lists persons newest first only ('orderBy': [\"created_at DESC\"]).", "orderBy");
    }

    static int bounded(final JsonNode node, final String field, final int fallback, final int min, final int max) {
        final JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber() || value.intValue() < min || value.intValue() > max) {
            throw ApiError.badRequest("invalid_input", "'" + field + "' must be an integer from " + min + " to " + max + ".", field);
        }
        return value.intValue();
    }

    /** Dates as PostHog's query responses write them. */
    static String date(final java.time.Instant instant) {
        return instant == null ? null : IsoInstants.format(instant);
    }
}
