package dev.eddy.gateway.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.EventListQuery;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.projects.Project;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.gateway.trends.InsightActors;
import dev.eddy.gateway.trends.QueryInliner;
import dev.eddy.persons.PersonQuery;
import dev.eddy.query.insights.EventListRead;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.Cohort;
import dev.eddy.trends.DateExpression;
import io.vertx.core.Future;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The Query API's list nodes: {@code ActorsQuery} over a project's persons and {@code EventsQuery} over its events,
 * answered as PostHog's runners answer them ({@code {results, columns, types, hasMore, limit, offset, ...}}, one row
 * per person or event, one value per column of {@code select}).
 *
 * <p>Eddy has no SQL engine, so a column is one of the expressions PostHog's persons and events tables use
 * ({@link PersonColumn}, {@link EventColumn}), each optionally labelled as PostHog's UI labels them
 * ({@code "created_at -- Created"}); another is a {@code 400} naming it. Persons are read from every streams
 * instance's person stores, as the persons list reads them; events from every instance's timelines.
 */
public final class ListQueries {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 10_000;
    private static final List<String> DEFAULT_ACTOR_COLUMNS = List.of("person", "id", "created_at");
    private static final List<String> DEFAULT_INSIGHT_ACTOR_COLUMNS = List.of("actor", "event_count");

    private static final String DEFAULT_AFTER = "-24h";

    private final PersonsService persons;
    private final InsightActors actors;
    private final QueryInliner inliner;
    private final Scatter scatter;
    private final Duration timeout;

    /**
     * @param actors  the persons behind an insight's number
     * @param inliner puts the definitions of the actions and cohorts a filter names into it
     * @param scatter asks every streams instance for its share of an events list ({@link EventListRead}, registered
     *                where the scatter's reads are)
     * @param timeout how long listing may take across the instances ({@code insights.query-timeout})
     */
    public ListQueries(final PersonsService persons, final InsightActors actors, final QueryInliner inliner, final Scatter scatter,
                       final Duration timeout) {
        this.persons = persons;
        this.actors = actors;
        this.inliner = inliner;
        this.scatter = scatter;
        this.timeout = timeout;
    }

    /**
     * An {@code ActorsQuery} of persons: {@code search} (a part of the {@code email} or {@code name} property, or a
     * distinct id), {@code properties} and {@code fixedProperties} (person property and cohort filters, all of
     * them), newest first, {@code limit} (default 100) from {@code offset}.
     */
    public Future<ObjectNode> actors(final Project project, final JsonNode node) {
        if (node.hasNonNull("source")) {
            return insightActors(project, node);
        }
        final List<PersonColumn> columns = columns(node.get("select"), DEFAULT_ACTOR_COLUMNS);
        final int limit = bounded(node, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
        final int offset = bounded(node, "offset", 0, 0, Integer.MAX_VALUE);
        orderBy(node.get("orderBy"));
        final Optional<String> search = Optional.ofNullable(node.get("search")).filter(JsonNode::isTextual).map(JsonNode::asText);
        final ArrayNode filters = Json.mapper().createArrayNode();
        propertyGroups(node, filters);
        final Future<Optional<JsonNode>> definition = filters.isEmpty() ? Future.succeededFuture(Optional.empty())
                : inliner.inline(project.id(), filters).map(inlined -> Optional.of(cohortOf(inlined)));
        return definition.compose(cohort -> persons.list(project.id(), new PersonQuery(search, limit, offset, cohort)))
                .map(page -> table(columns, results -> page.results().forEach(person -> {
                    final ArrayNode row = results.addArray();
                    columns.forEach(column -> row.add(column.value(person)));
                }), page.count() > (long) offset + page.results().size(), limit, offset).put("missing_actors_count", 0));
    }

    /**
     * An {@code ActorsQuery} whose {@code source} names an insight's number ({@link InsightActorsQueries}): its persons,
     * in the order the legacy persons pages list them, {@code limit} (default 100, at most 1,000) from {@code offset};
     * default columns {@code actor} and {@code event_count}.
     */
    private Future<ObjectNode> insightActors(final Project project, final JsonNode node) {
        final InsightActorsQueries asked = InsightActorsQueries.of(node.get("source"), ZoneId.of(project.timezone()));
        final List<PersonColumn> columns = columns(node.get("select"), DEFAULT_INSIGHT_ACTOR_COLUMNS);
        final int limit = bounded(node, "limit", DEFAULT_LIMIT, 1, InsightActors.MAX_LIMIT);
        final int offset = bounded(node, "offset", 0, 0, Integer.MAX_VALUE);
        final ObjectNode request = asked.request();
        request.put("limit", limit);
        request.put("offset", offset);
        return actors.page(project, asked.kind(), request).map(page -> table(columns, results -> page.actors().forEach(actor -> {
            final ArrayNode row = results.addArray();
            columns.forEach(column -> row.add(column.value(actor)));
        }), page.total() > (long) offset + limit, limit, offset).put("missing_actors_count", page.missing()));
    }

    /**
     * An {@code EventsQuery}: the project's events {@code after} (default {@code -24h}; {@code all} for no bound) and
     * {@code before}, of {@code event}, of the person {@code personId}, of the action {@code actionId}, matching
     * {@code properties}, {@code fixedProperties} and, with {@code filterTestAccounts}, the project's test account
     * filters; newest first ({@code orderBy} {@code timestamp DESC}, or {@code timestamp ASC}), {@code limit} (default
     * 100) from {@code offset}; PostHog's response {@code {results, columns, types, hasMore, limit, offset}}.
     */
    public Future<ObjectNode> events(final Project project, final JsonNode node) {
        if (node.path("where").isArray() && !node.path("where").isEmpty()) {
            return Future.failedFuture(ApiError.badRequest("unsupported_query", "An EventsQuery's 'where' (HogQL expressions) is not "
                    + "supported by Eddy: filter with 'properties', 'event', 'personId' or 'actionId'.", "where"));
        }
        final JsonNode select = node.get("select");
        if (select == null || !select.isArray() || select.isEmpty()) {
            return Future.failedFuture(ApiError.badRequest("required", "An EventsQuery needs 'select', a non-empty list of columns.", "select"));
        }
        final List<EventColumn> columns = new ArrayList<>();
        for (final JsonNode expression : select) {
            if (!expression.isTextual()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "'select' must be a list of strings.", "select"));
            }
            columns.add(EventColumn.parse(expression.asText()));
        }
        final ZoneId zone = ZoneId.of(project.timezone());
        final Instant now = Instant.now();
        final long after = "all".equalsIgnoreCase(node.path("after").asText()) ? Long.MIN_VALUE
                : micros(node.hasNonNull("after") ? node.get("after").asText() : DEFAULT_AFTER, "after", zone, now);
        final long before = node.hasNonNull("before") ? micros(node.get("before").asText(), "before", zone, now) : Long.MAX_VALUE;
        final int limit = bounded(node, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
        final int offset = bounded(node, "offset", 0, 0, Integer.MAX_VALUE);
        final boolean ascending = eventOrder(node.get("orderBy"));
        final List<String> names = node.path("event").isTextual() && !node.get("event").asText().isEmpty()
                ? List.of(node.get("event").asText()) : List.of();
        final Optional<UUID> person = personId(node.get("personId"));
        final ObjectNode request = Json.mapper().createObjectNode();
        final ArrayNode filters = request.putObject("properties").put("type", "AND").putArray("values");
        propertyGroups(node, filters);
        if (node.path("filterTestAccounts").asBoolean(false) && project.testAccountFilters() != null && project.testAccountFilters().isArray()) {
            filters.add(Json.mapper().createObjectNode().put("type", "AND").set("values", project.testAccountFilters()));
        }
        if (node.hasNonNull("actionId")) {
            if (!node.get("actionId").canConvertToLong()) {
                return Future.failedFuture(ApiError.badRequest("invalid_input", "'actionId' must be an action's id.", "actionId"));
            }
            request.putObject("action").put("type", "actions").put("id", node.get("actionId").asLong());
        }
        return inliner.inline(project.id(), request).compose(inlined -> {
            final EventListQuery query = new EventListQuery(project.id(), after, before, names, person, inlined.get("properties"),
                    inlined.get("action"), limit, offset, ascending);
            return scatter.<EventListQuery.Page>gather(EventListRead.KIND, query.toRequest(), QueryControl.within(timeout))
                    .map(whole -> table(columns, results -> query.page(whole).forEach(row -> {
                        final EventColumn.Event event = new EventColumn.Event(row, project.id(), zone);
                        final ArrayNode values = results.addArray();
                        columns.forEach(column -> values.add(column.value(event)));
                    }), query.hasMore(whole), limit, offset));
        });
    }

    /** PostHog's answer of a list query: {@code results} (filled by {@code rows}), {@code columns}, {@code types}, paging. */
    private static ObjectNode table(final List<? extends QueryColumn> columns, final Consumer<ArrayNode> rows, final boolean hasMore,
                                    final int limit, final int offset) {
        final ObjectNode body = Json.mapper().createObjectNode();
        rows.accept(body.putArray("results"));
        final ArrayNode names = body.putArray("columns");
        final ArrayNode types = body.putArray("types");
        columns.forEach(column -> {
            names.add(column.expression());
            types.add(column.type());
        });
        body.put("hasMore", hasMore);
        body.put("limit", limit);
        body.put("offset", offset);
        body.putNull("hogql");
        body.putArray("timings");
        return body;
    }

    /** The node's {@code properties} and {@code fixedProperties} (a list of filters, or a group), each as a group in {@code into}. */
    private static void propertyGroups(final JsonNode node, final ArrayNode into) {
        for (final String field : new String[] {"properties", "fixedProperties"}) {
            final JsonNode value = node.get(field);
            if (value == null || value.isNull()) {
                continue;
            }
            if (!value.isArray() && !value.isObject()) {
                throw ApiError.badRequest("invalid_input", "'" + field + "' must be a list of property filters.", field);
            }
            into.add(value.isArray() ? Json.mapper().createObjectNode().put("type", "AND").set("values", value) : value);
        }
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

    /** PostHog's {@code after}/{@code before}: an ISO date or time, or a relative date ({@code -24h}, {@code -7d}: from the start of that day). */
    private static long micros(final String text, final String field, final ZoneId zone, final Instant now) {
        try {
            final DateExpression date = DateExpression.parse(text, zone, now.atZone(zone));
            final ZonedDateTime time = date.isRelative() && !date.inHours() ? date.time().truncatedTo(ChronoUnit.DAYS) : date.time();
            return TimelineEvent.micros(time.toInstant());
        } catch (final IllegalArgumentException | DateTimeException e) {
            throw ApiError.badRequest("invalid_input", "'" + field + "' must be a date, a time or a relative date such as -24h.", field);
        }
    }

    /** Events come newest first unless {@code orderBy} asks for {@code timestamp ASC}; another order is refused. */
    private static boolean eventOrder(final JsonNode orderBy) {
        if (orderBy == null || orderBy.isNull() || orderBy.isArray() && orderBy.isEmpty()) {
            return false;
        }
        if (orderBy.isArray() && orderBy.size() == 1) {
            final String order = orderBy.get(0).asText().trim();
            if (order.matches("(?i)timestamp(\\s+desc)?")) {
                return false;
            }
            if (order.matches("(?i)timestamp\\s+asc")) {
                return true;
            }
        }
        throw ApiError.badRequest("unsupported_query", "Eddy lists events by time only ('orderBy': [\"timestamp DESC\"] or "
                + "[\"timestamp ASC\"]).", "orderBy");
    }

    private static Optional<UUID> personId(final JsonNode id) {
        if (id == null || id.isNull()) {
            return Optional.empty();
        }
        try {
            return Optional.of(UUID.fromString(id.asText()));
        } catch (final IllegalArgumentException e) {
            throw ApiError.badRequest("invalid_input", "'personId' must be a person's uuid.", "personId");
        }
    }

    /** Dates as PostHog's query responses write them. */
    static String date(final java.time.Instant instant) {
        return instant == null ? null : IsoInstants.format(instant);
    }
}
