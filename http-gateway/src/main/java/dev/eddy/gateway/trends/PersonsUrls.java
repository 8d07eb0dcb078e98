package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.projects.Project;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.serde.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * PostHog's links from a trend's numbers to their persons: each time-series item gets {@code persons_urls}, one
 * {@code {filter, url}} per data point, and each total-value item one {@code persons}; the URL is
 * {@code api/projects/:id/persons/trends/?} with the trend's filter and the data point's series ({@code entity_id},
 * {@code entity_type}, {@code entity_math}, {@code entity_order}), interval ({@code date_from}, {@code date_to}: the
 * day to its last microsecond, the hour, the week's seven days, the month's days; the range's start for a cumulative
 * line; weekly and monthly actives shifted as PostHog shifts them) and breakdown value. Formula items get none.
 */
public final class PersonsUrls {
    private static final Set<String> TOTAL_VALUE = Set.of("BoldNumber", "ActionsPie", "ActionsBarValue", "WorldMap", "ActionsTable", "CalendarHeatmap");
    private static final DateTimeFormatter HOUR_DAY = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private PersonsUrls() {
    }

    /**
     * The links of an insight's answer to its persons, written into {@code result} as PostHog writes them for its
     * kind (none for a persons page, a path or a trend with a formula); {@code query} as the user sent it.
     */
    static JsonNode add(final InsightEngine.Kind kind, final Project project, final JsonNode query, final JsonNode result) {
        switch (kind) {
            case TREND -> {
                if (!query.hasNonNull("formula")) {
                    add(project.id(), query, result, ZoneId.of(project.timezone()));
                }
            }
            case STICKINESS -> addStickiness(project.id(), query, result);
            case LIFECYCLE -> addLifecycle(project.id(), query, result);
            case RETENTION -> addRetention(project.id(), query, result);
            case FUNNEL -> addFunnel(project.id(), query, result);
            case FUNNEL_CORRELATION -> addCorrelation(project.id(), query, result);
            default -> {
                // Paths and the persons pages themselves link to no persons.
            }
        }
        return result;
    }

    static void add(final long projectId, final JsonNode query, final JsonNode result, final ZoneId zone) {
        if (!result.isArray()) {
            return;
        }
        final List<JsonNode> series = series(query);
        final String display = query.path("display").asText("ActionsLineGraph");
        for (final JsonNode node : result) {
            if (!(node instanceof ObjectNode item) || !item.path("action").isObject()) {
                continue;
            }
            final int order = item.path("action").path("order").asInt(0);
            if (order < 0 || order >= series.size()) {
                continue;
            }
            final JsonNode entity = series.get(order);
            final Map<String, String> extra = new LinkedHashMap<>();
            extra.put("entity_id", InsightPersonsRoutes.encode(entity.path("id")));
            extra.put("entity_type", entity.path("type").asText("events"));
            extra.put("entity_math", entity.path("math").asText("total"));
            extra.put("entity_order", Integer.toString(order));
            if (item.has("breakdown_value")) {
                extra.put("breakdown_value", InsightPersonsRoutes.encode(item.get("breakdown_value")));
                extra.put("breakdown_type", query.path("breakdown_type").asText("event"));
            }
            if (TOTAL_VALUE.contains(display)) {
                item.set("persons", link(projectId, query, extra));
                continue;
            }
            final ArrayNode urls = item.putArray("persons_urls");
            for (final JsonNode day : item.path("days")) {
                final Map<String, String> point = new LinkedHashMap<>(extra);
                point.putAll(dataPoint(query, extra.get("entity_math"), day.asText(), zone));
                urls.add(link(projectId, query, point));
            }
        }
    }

    /**
     * Stickiness: each item's {@code persons_urls}, one per bar ({@code stickiness_days} 1, 2, ...), to
     * {@code persons/stickiness/}.
     */
    static void addStickiness(final long projectId, final JsonNode query, final JsonNode result) {
        if (!result.isArray()) {
            return;
        }
        final List<JsonNode> series = series(query);
        for (final JsonNode node : result) {
            if (!(node instanceof ObjectNode item) || node.path("compare_label").asText("current").equals("previous")) {
                continue;
            }
            final int order = item.path("action").path("order").asInt(0);
            final JsonNode entity = order < series.size() ? series.get(order) : item.path("action");
            final ArrayNode urls = item.putArray("persons_urls");
            for (final JsonNode days : item.path("days")) {
                final Map<String, String> point = new LinkedHashMap<>();
                point.put("entity_id", InsightPersonsRoutes.encode(entity.path("id")));
                point.put("entity_type", entity.path("type").asText("events"));
                point.put("entity_math", entity.path("math").asText("total"));
                point.put("entity_order", Integer.toString(order));
                point.put("stickiness_days", days.asText());
                urls.add(link(projectId, "stickiness", query, point));
            }
        }
    }

    /** Lifecycles: each status's {@code persons_urls}, one per interval, to {@code persons/lifecycle/}. */
    static void addLifecycle(final long projectId, final JsonNode query, final JsonNode result) {
        if (!result.isArray()) {
            return;
        }
        for (final JsonNode node : result) {
            if (!(node instanceof ObjectNode item)) {
                continue;
            }
            final ArrayNode urls = item.putArray("persons_urls");
            for (final JsonNode day : item.path("days")) {
                final Map<String, String> point = new LinkedHashMap<>();
                point.put("target_date", day.asText());
                point.put("lifecycle_type", item.path("status").asText());
                urls.add(link(projectId, "lifecycle", query, point));
            }
        }
    }

    /** Retention: each cohort row's {@code people_url} (root-relative, as PostHog's), to {@code persons/retention/}. */
    static void addRetention(final long projectId, final JsonNode query, final JsonNode result) {
        if (!result.isArray()) {
            return;
        }
        for (int i = 0; i < result.size(); i++) {
            if (result.get(i) instanceof ObjectNode row && !row.has("breakdown_values")) {
                row.put("people_url", "/" + link(projectId, "retention", query, Map.of("selected_interval", Integer.toString(i))).get("url").asText());
            }
        }
    }

    /**
     * Funnel steps: each step's {@code converted_people_url} (those who completed it: {@code funnel_step} N, 1-based)
     * and {@code dropped_people_url} (those who stopped before it: -N; null on the first step, which nobody drops
     * off before), root-relative as PostHog's, to {@code persons/funnel/}; a broken-down step's with its
     * {@code funnel_step_breakdown}. Funnel trends and time-to-convert answers have no step lists and get none.
     */
    static void addFunnel(final long projectId, final JsonNode query, final JsonNode result) {
        if (!result.isArray()) {
            return;
        }
        // One list of steps, or one per breakdown value.
        final List<JsonNode> funnels = new ArrayList<>();
        if (!result.isEmpty() && result.get(0).isArray()) {
            result.forEach(funnels::add);
        } else {
            funnels.add(result);
        }
        for (final JsonNode funnel : funnels) {
            for (final JsonNode node : funnel) {
                if (!(node instanceof ObjectNode step) || !step.has("converted_people_url")) {
                    continue;
                }
                final int number = step.path("order").asInt(0) + 1;
                final Map<String, String> converted = new LinkedHashMap<>();
                converted.put("funnel_step", Integer.toString(number));
                final Map<String, String> dropped = new LinkedHashMap<>();
                dropped.put("funnel_step", Integer.toString(-number));
                if (step.has("breakdown_value")) {
                    converted.put("funnel_step_breakdown", InsightPersonsRoutes.encode(step.get("breakdown_value")));
                    dropped.put("funnel_step_breakdown", InsightPersonsRoutes.encode(step.get("breakdown_value")));
                }
                step.put("converted_people_url", "/" + link(projectId, "funnel", query, converted).get("url").asText());
                if (number == 1) {
                    step.putNull("dropped_people_url");
                } else {
                    step.put("dropped_people_url", "/" + link(projectId, "funnel", query, dropped).get("url").asText());
                }
            }
        }
    }

    /**
     * A funnel correlation's candidates: each one's {@code success_people_url} and {@code failure_people_url}, the
     * persons who have it and converted (or not), root-relative to {@code persons/funnel/correlation/} with the
     * correlation's filter, {@code funnel_correlation_person_converted} and the candidate as PostHog's URLs name it:
     * an event as {@code funnel_correlation_person_entity} (with its property value, for event properties), a person
     * property value as {@code funnel_correlation_property_values}.
     */
    static void addCorrelation(final long projectId, final JsonNode query, final JsonNode result) {
        final String type = query.path("funnel_correlation_type").asText("events");
        for (final JsonNode node : result.path("events")) {
            if (!(node instanceof ObjectNode item)) {
                continue;
            }
            final String name = item.path("event").path("event").asText();
            final Map<String, String> candidate = new LinkedHashMap<>();
            if ("properties".equals(type)) {
                final String[] parts = name.split("::", 2);
                final ObjectNode value = Json.mapper().createObjectNode().put("key", parts[0]).put("value", parts.length > 1 ? parts[1] : "")
                        .put("type", "person").put("operator", "exact");
                candidate.put("funnel_correlation_property_values", Json.mapper().createArrayNode().add(value).toString());
            } else {
                final ObjectNode entity = Json.mapper().createObjectNode();
                if ("event_with_properties".equals(type)) {
                    final String[] parts = name.split("::", 3);
                    entity.put("id", parts[0]).put("type", "events").putArray("properties").addObject().put("key", parts.length > 1 ? parts[1] : "")
                            .put("value", parts.length > 2 ? parts[2] : "").put("type", "event").put("operator", "exact");
                } else {
                    entity.put("id", name).put("type", "events");
                }
                candidate.put("funnel_correlation_person_entity", entity.toString());
            }
            for (final boolean converted : new boolean[] {true, false}) {
                final Map<String, String> extra = new LinkedHashMap<>(candidate);
                extra.put("funnel_correlation_person_converted", Boolean.toString(converted));
                item.put(converted ? "success_people_url" : "failure_people_url",
                        "/" + link(projectId, "funnel/correlation", query, extra).get("url").asText());
            }
        }
    }

    private static ObjectNode link(final long projectId, final JsonNode query, final Map<String, String> extra) {
        return link(projectId, "trends", query, extra);
    }

    private static ObjectNode link(final long projectId, final String insight, final JsonNode query, final Map<String, String> extra) {
        final ObjectNode link = Json.mapper().createObjectNode();
        final ObjectNode filter = link.putObject("filter");
        extra.forEach(filter::put);
        final Map<String, String> params = new LinkedHashMap<>();
        query.fields().forEachRemaining(f -> {
            if (!f.getValue().isNull()) {
                params.put(f.getKey(), InsightPersonsRoutes.encode(f.getValue()));
            }
        });
        params.putAll(extra);
        final StringBuilder url = new StringBuilder("api/projects/").append(projectId).append("/persons/").append(insight).append("/?");
        params.forEach((name, value) -> url.append(url.charAt(url.length() - 1) == '?' ? "" : "&")
                .append(URLEncoder.encode(name, StandardCharsets.UTF_8)).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8)));
        link.put("url", url.toString());
        return link;
    }

    /** The query's series by their order: events and actions together, as the trend ordered them. */
    /** A legacy trend filter's series ({@code events} and {@code actions}) in their {@code order}, actions typed as such. */
    public static List<JsonNode> series(final JsonNode query) {
        final List<JsonNode> all = new ArrayList<>();
        for (final String kind : List.of("events", "actions")) {
            for (final JsonNode entity : query.path(kind)) {
                all.add("actions".equals(kind) && !entity.has("type") ? ((ObjectNode) entity).deepCopy().put("type", "actions") : entity);
            }
        }
        all.sort(java.util.Comparator.comparingInt(e -> e.path("order").asInt(-1)));
        return all;
    }

    /**
     * The {@code date_from} and {@code date_to} of the trend's data point of {@code day} (its interval's start, as the
     * item's {@code days} write it) for a series of {@code math}: the interval, the range's start for a cumulative
     * line, weekly and monthly actives shifted as PostHog shifts them.
     */
    public static Map<String, String> dataPoint(final JsonNode query, final String math, final String day, final ZoneId zone) {
        final ZonedDateTime start = start(day, zone);
        final boolean active = "weekly_active".equals(math) || "monthly_active".equals(math);
        final Map<String, String> point = new LinkedHashMap<>();
        point.put("date_from", "ActionsLineGraphCumulative".equals(query.path("display").asText("ActionsLineGraph"))
                ? query.path("date_from").asText("-7d") : (active ? start.plusDays(1) : start).toOffsetDateTime().toString());
        point.put("date_to", (active ? start : end(start, query.path("interval").asText("day"))).toOffsetDateTime().toString());
        return point;
    }

    private static ZonedDateTime start(final String day, final ZoneId zone) {
        return day.length() > 10 ? LocalDateTime.parse(day, HOUR_DAY).atZone(zone) : LocalDate.parse(day).atStartOfDay(zone);
    }

    private static ZonedDateTime end(final ZonedDateTime start, final String interval) {
        return switch (interval) {
            case "hour", "minute" -> start.plusHours(1).minusNanos(1000);
            case "week" -> start.plusWeeks(1).minusNanos(1000);
            case "month" -> start.plusMonths(1).minusNanos(1000);
            default -> start.plusDays(1).minusNanos(1000);
        };
    }
}
