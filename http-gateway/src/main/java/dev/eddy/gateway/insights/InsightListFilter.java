package dev.eddy.gateway.insights;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.serde.Json;
import dev.eddy.trends.DateExpression;
import io.vertx.core.MultiMap;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The list parameters of PostHog's insights API ({@code InsightViewSet._filter_request} and {@code order_queryset}),
 * read as PostHog reads them and turned into SQL conditions on insight {@code i} (with {@code lv.last_viewed_at}, the
 * last view by anyone) and an {@code ORDER BY}:
 * <ul>
 * <li>{@code saved}: truthy (PostHog's {@code str_to_bool}: {@code 1}, {@code true}, {@code yes}, ...) keeps insights
 * saved or on a dashboard; anything else keeps the unsaved ones;</li>
 * <li>{@code favorited}, {@code user}: present, whatever their value: favorited insights, the caller's own;</li>
 * <li>{@code created_by}: a user id or a JSON list of them; {@code short_id}; {@code search}: a part of the name, the
 * derived name, the description or a tag, any case; {@code tags}: a JSON list, any of them;</li>
 * <li>{@code dashboards}: a JSON list of dashboard ids, insights on every one of them;</li>
 * <li>{@code insight}: {@code TRENDS}, {@code FUNNELS}, {@code RETENTION}, {@code PATHS}, {@code STICKINESS},
 * {@code LIFECYCLE} (legacy {@code filters.insight} without a query, or an {@code InsightVizNode} of that query kind),
 * {@code JSON} (other queries), {@code SQL} (HogQL queries); another value matches legacy insights of that name;</li>
 * <li>{@code date_from}/{@code date_to} on {@code last_modified_at}, {@code created_date_from}/{@code _to} on
 * {@code created_at}, {@code last_viewed_date_from}/{@code _to} on the last view, strictly after / before: absolute or
 * relative ({@code -7d}) in the project's zone, a value that is neither being now, as PostHog's
 * {@code relative_date_parse} reads it;</li>
 * <li>{@code order}: a field, {@code -} for descending; by default PostHog's {@code order} field.</li>
 * </ul>
 * Placeholder {@code $1} (the project) is the statement's; the conditions bind from {@code $2}.
 */
final class InsightListFilter {
    /** PostHog's legacy insight names and the query kinds they are saved as. */
    private static final Map<String, String> KINDS = Map.of("TRENDS", "TrendsQuery", "FUNNELS", "FunnelsQuery",
            "RETENTION", "RetentionQuery", "PATHS", "PathsQuery", "STICKINESS", "StickinessQuery", "LIFECYCLE", "LifecycleQuery");
    private static final String WRAPPERS = "('DataTableNode', 'DataVisualizationNode', 'InsightVizNode')";
    /** The fields {@code order} may name (PostHog takes any model field), and their columns. */
    private static final Map<String, String> ORDERS = Map.ofEntries(Map.entry("id", "i.id"), Map.entry("name", "i.name"),
            Map.entry("derived_name", "i.derived_name"), Map.entry("description", "i.description"), Map.entry("order", "i.\"order\""),
            Map.entry("short_id", "i.short_id"), Map.entry("created_at", "i.created_at"), Map.entry("updated_at", "i.updated_at"),
            Map.entry("last_modified_at", "i.last_modified_at"), Map.entry("created_by", "i.created_by"),
            Map.entry("last_modified_by", "i.last_modified_by"), Map.entry("favorited", "i.favorited"), Map.entry("saved", "i.saved"),
            Map.entry("last_viewed_at", "lv.last_viewed_at"));
    private static final int MAX_IDS = 100;

    private final List<String> conditions = new ArrayList<>();
    private final List<Object> binds = new ArrayList<>();
    private String orderBy = "i.\"order\" ASC NULLS LAST, i.id";

    private InsightListFilter() {
    }

    /**
     * The filter of a list request's parameters asked by user {@code caller}, dates in {@code zone} relative to {@code now};
     * a malformed one is a 400.
     */
    static InsightListFilter of(final MultiMap params, final long caller, final ZoneId zone, final ZonedDateTime now) {
        final InsightListFilter f = new InsightListFilter();
        for (final String key : params.names()) {
            final String value = params.get(key);
            switch (key) {
                case "saved" -> f.conditions.add(truthy(value) ? "(i.saved OR EXISTS (SELECT 1 FROM dashboard_tiles t JOIN dashboards d "
                        + "ON d.id = t.dashboard_id WHERE t.insight_id = i.id AND NOT t.deleted AND NOT d.deleted "
                        + "AND d.creation_mode <> 'unlisted'))" : "NOT i.saved");
                case "favorited" -> f.conditions.add("i.favorited");
                case "user" -> f.conditions.add("i.created_by = " + f.bind(caller));
                case "short_id" -> f.conditions.add("i.short_id = " + f.bind(Body.storableParam(key, value)));
                case "created_by" -> f.createdBy(value);
                case "search" -> f.search(Body.storableParam(key, value));
                case "tags" -> f.tags(value);
                case "dashboards" -> f.dashboards(value);
                case "insight" -> f.insight(Body.storableParam(key, value));
                case "date_from" -> f.after("i.last_modified_at", value, zone, now);
                case "date_to" -> f.before("i.last_modified_at", value, zone, now);
                case "created_date_from" -> f.after("i.created_at", value, zone, now);
                case "created_date_to" -> f.before("i.created_at", value, zone, now);
                case "last_viewed_date_from" -> f.after("lv.last_viewed_at", value, zone, now);
                case "last_viewed_date_to" -> f.before("lv.last_viewed_at", value, zone, now);
                case "order" -> f.order(value);
                default -> {
                    // Pagination, format, refresh and the like: not filters.
                }
            }
        }
        return f;
    }

    /** The conditions, each prefixed by {@code AND}. */
    String where() {
        return conditions.stream().map(c -> " AND " + c).reduce("", String::concat);
    }

    String orderBy() {
        return orderBy;
    }

    /** The values bound to {@code $2} onwards. */
    List<Object> binds() {
        return binds;
    }

    /** PostHog's {@code str_to_bool}. */
    static boolean truthy(final String value) {
        return value != null && List.of("y", "yes", "t", "true", "on", "1").contains(value.trim().toLowerCase(Locale.ROOT));
    }

    private String bind(final Object value) {
        binds.add(value);
        return "$" + (binds.size() + 1);
    }

    private void createdBy(final String value) {
        if (value == null || value.isBlank()) {
            return;
        }
        final JsonNode parsed = json("created_by", value);
        final List<Long> ids = parsed.isArray() ? ids("created_by", parsed) : ids("created_by", Json.mapper().createArrayNode().add(parsed));
        if (!ids.isEmpty()) {
            conditions.add("i.created_by = ANY(" + bind(ids.toArray(Long[]::new)) + ")");
        }
    }

    private void search(final String value) {
        if (value == null) {
            return;
        }
        final String needle = bind(value.toLowerCase(Locale.ROOT));
        conditions.add("(strpos(lower(COALESCE(i.name, '')), " + needle + ") > 0 OR strpos(lower(COALESCE(i.derived_name, '')), " + needle
                + ") > 0 OR strpos(lower(i.description), " + needle + ") > 0 OR EXISTS (SELECT 1 FROM unnest(i.tags) tag "
                + "WHERE strpos(lower(tag), " + needle + ") > 0))");
    }

    private void tags(final String value) {
        final List<String> names = new ArrayList<>();
        list("tags", value, "tag names").forEach(t -> names.add(Body.storableParam("tags", t.asText())));
        if (!names.isEmpty()) {
            conditions.add("i.tags && " + bind(names.toArray(String[]::new)));
        }
    }

    /** Every listed dashboard, one condition each (PostHog filters one at a time "so the filter is AND not OR"). */
    private void dashboards(final String value) {
        for (final long id : ids("dashboards", list("dashboards", value, "dashboard ids"))) {
            conditions.add("EXISTS (SELECT 1 FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id WHERE t.insight_id = i.id "
                    + "AND t.dashboard_id = " + bind(id) + " AND NOT t.deleted AND NOT d.deleted)");
        }
    }

    /** A JSON list parameter, empty when absent or blank; anything but a list is a 400. */
    private static JsonNode list(final String name, final String value, final String of) {
        if (value == null || value.isBlank()) {
            return Json.mapper().createArrayNode();
        }
        final JsonNode parsed = json(name, value);
        if (!parsed.isArray()) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' must be a JSON list of " + of + ".", name);
        }
        return parsed;
    }

    private void insight(final String value) {
        if (value == null) {
            return;
        }
        final String legacy = "(i.query IS NULL AND i.filters->>'insight' = " + bind(value) + ")";
        final String hogql = "COALESCE(i.query->>'kind' IN " + WRAPPERS + " AND i.query#>>'{source,kind}' = 'HogQLQuery', false)";
        final String kinds = KINDS.values().stream().sorted().map(k -> "'" + k + "'").reduce((a, b) -> a + ", " + b).orElseThrow();
        switch (value) {
            case "JSON" -> conditions.add("(i.query IS NOT NULL AND NOT " + hogql + " AND NOT COALESCE(i.query->>'kind' IN " + WRAPPERS
                    + " AND i.query#>>'{source,kind}' IN (" + kinds + "), false))");
            case "SQL" -> conditions.add("(i.query IS NOT NULL AND " + hogql + ")");
            default -> conditions.add(KINDS.containsKey(value) ? "(" + legacy + " OR (i.query->>'kind' = 'InsightVizNode' AND "
                    + "i.query#>>'{source,kind}' = " + bind(KINDS.get(value)) + "))" : legacy);
        }
    }

    private void after(final String column, final String value, final ZoneId zone, final ZonedDateTime now) {
        conditions.add(column + " > " + bind(date(value, zone, now)));
    }

    private void before(final String column, final String value, final ZoneId zone, final ZonedDateTime now) {
        conditions.add(column + " < " + bind(date(value, zone, now)));
    }

    private void order(final String value) {
        if (value == null || value.isBlank()) {
            return;
        }
        final boolean descending = value.startsWith("-");
        final String column = ORDERS.get(descending ? value.substring(1) : value);
        if (column == null) {
            throw ApiError.badRequest("invalid_input", "'order' must be one of " + ORDERS.keySet().stream().sorted().toList()
                    + ", with '-' for descending.", "order");
        }
        // PostHog puts never-viewed insights last when newest views come first, first otherwise; PostgreSQL does the
        // same for every other column with a null (nulls are larger than any value).
        orderBy = column + (descending ? " DESC NULLS LAST" : " ASC NULLS FIRST") + ", i.id" + (descending ? " DESC" : "");
    }

    /**
     * A date as PostHog's {@code relative_date_parse} reads it: a value that is neither a date nor a relative one is
     * now, as PostHog answers it.
     */
    private static OffsetDateTime date(final String value, final ZoneId zone, final ZonedDateTime now) {
        try {
            return DateExpression.parse(value, zone, now).time().toOffsetDateTime();
        } catch (final IllegalArgumentException e) {
            return now.toOffsetDateTime();
        }
    }

    private static JsonNode json(final String name, final String value) {
        try {
            return Json.mapper().readTree(value);
        } catch (final JacksonException e) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' is not valid JSON.", name);
        }
    }

    private static List<Long> ids(final String name, final JsonNode list) {
        if (list.size() > MAX_IDS) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' names more than " + MAX_IDS + " ids.", name);
        }
        final List<Long> ids = new ArrayList<>();
        for (final JsonNode id : list) {
            final boolean number = id.isIntegralNumber() && id.canConvertToLong();
            if (!number && !(id.isTextual() && id.asText().matches("-?\\d{1,18}"))) {
                throw ApiError.badRequest("invalid_input", "'" + name + "' must be an id or a JSON list of ids.", name);
            }
            ids.add(number ? id.asLong() : Long.parseLong(id.asText()));
        }
        return ids;
    }
}
