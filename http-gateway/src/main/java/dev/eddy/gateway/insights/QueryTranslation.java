package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.util.List;
import java.util.Map;

/**
 * PostHog's HogQL insight queries ({@code TrendsQuery}, {@code FunnelsQuery}, {@code StickinessQuery},
 * {@code LifecycleQuery}, {@code RetentionQuery}) in the legacy filter format Eddy's engine reads: the common fields of PostHog's query schema, each mapped to its legacy name. A
 * field Eddy would otherwise ignore (and so answer something else than asked) is refused with a message naming it.
 */
public final class QueryTranslation {
    /** Series fields that keep their name in the legacy format. */
    private static final List<String> SERIES_FIELDS = List.of("custom_name", "name", "math", "math_property", "math_group_type_index",
            "properties");
    /** breakdownFilter fields that keep their name. */
    private static final List<String> BREAKDOWN_FIELDS = List.of("breakdown", "breakdown_type", "breakdown_limit",
            "breakdown_group_type_index", "breakdown_hide_other_aggregation", "breakdown_normalize_url", "breakdown_histogram_bin_count");
    /** funnelsFilter fields and their legacy names. */
    private static final Map<String, String> FUNNEL_FIELDS = Map.of("funnelOrderType", "funnel_order_type",
            "funnelVizType", "funnel_viz_type", "funnelWindowInterval", "funnel_window_interval",
            "funnelWindowIntervalUnit", "funnel_window_interval_unit", "breakdownAttributionType", "breakdown_attribution_type",
            "breakdownAttributionValue", "breakdown_attribution_value", "funnelFromStep", "funnel_from_step",
            "funnelToStep", "funnel_to_step", "binCount", "bin_count");

    private QueryTranslation() {
    }

    /**
     * A {@code TrendsQuery} or {@code FunnelsQuery} as a legacy filter ({@code insight} TRENDS or FUNNELS).
     *
     * @throws IllegalArgumentException naming the part Eddy cannot answer
     */
    public static ObjectNode toFilter(final JsonNode source) {
        final String kind = source.path("kind").asText();
        final boolean stickiness = "StickinessQuery".equals(kind);
        final boolean lifecycle = "LifecycleQuery".equals(kind);
        final boolean trend = "TrendsQuery".equals(kind);
        if ("RetentionQuery".equals(kind)) {
            return retention(source);
        }
        if ("PathsQuery".equals(kind)) {
            return paths(source);
        }
        if (!trend && !stickiness && !lifecycle && !"FunnelsQuery".equals(kind)) {
            throw new IllegalArgumentException(kind + " is not a trends, funnels, stickiness, lifecycle, retention or paths query");
        }
        final ObjectNode filter = Json.mapper().createObjectNode();
        filter.put("insight", stickiness ? "STICKINESS" : lifecycle ? "LIFECYCLE" : trend ? "TRENDS" : "FUNNELS");
        series(source.path("series"), trend || stickiness || lifecycle, filter);
        final JsonNode range = source.path("dateRange");
        copy(range, "date_from", filter, "date_from");
        copy(range, "date_to", filter, "date_to");
        copy(source, "interval", filter, "interval");
        copy(source, "properties", filter, "properties");
        copy(source, "filterTestAccounts", filter, "filter_test_accounts");
        if (stickiness) {
            // No breakdown: PostHog's stickiness has none.
            final JsonNode options = source.path("stickinessFilter");
            copy(options, "computedAs", filter, "computed_as");
            copy(options, "stickinessCriteria", filter, "stickiness_criteria");
            copy(source, "intervalCount", filter, "interval_count");
            compare(source, filter);
            return filter;
        }
        if (lifecycle) {
            // Its lifecycleFilter only chooses what the page shows (toggled statuses, values on the bars).
            return filter;
        }
        breakdown(source.path("breakdownFilter"), filter, trend);
        if (trend) {
            trendsFilter(source, filter);
        } else {
            funnelsFilter(source.path("funnelsFilter"), filter);
            copy(source, "aggregation_group_type_index", filter, "aggregation_group_type_index");
        }
        if (trend && source.hasNonNull("aggregation_group_type_index")) {
            throw new IllegalArgumentException("aggregation_group_type_index is not supported in trends by Eddy yet; "
                    + "use math unique_group on the series");
        }
        return filter;
    }

    /**
     * A {@code RetentionQuery}: its {@code retentionFilter}'s entities, period, intervals and type, its {@code dateRange}'s
     * end (the cohorts count back from it, as in the legacy filter), filters, groups and breakdown. A missing returning
     * entity is {@code $pageview}, as PostHog's query runner has it (the legacy filter's default is the target).
     */
    private static ObjectNode retention(final JsonNode source) {
        final ObjectNode filter = Json.mapper().createObjectNode();
        filter.put("insight", "RETENTION");
        final JsonNode options = source.path("retentionFilter");
        filter.set("target_entity", retentionEntity(options.path("targetEntity"), "targetEntity"));
        filter.set("returning_entity", retentionEntity(options.path("returningEntity"), "returningEntity"));
        copy(options, "period", filter, "period");
        copy(options, "totalIntervals", filter, "total_intervals");
        copy(options, "retentionType", filter, "retention_type");
        copy(options, "cumulative", filter, "cumulative");
        if (options.path("minimumOccurrences").asInt(1) > 1) {
            throw new IllegalArgumentException("minimumOccurrences is not supported by Eddy yet");
        }
        if (options.hasNonNull("retentionCustomBrackets")) {
            throw new IllegalArgumentException("retentionCustomBrackets is not supported by Eddy yet");
        }
        if ("24_hour_windows".equals(options.path("timeWindowMode").asText())) {
            throw new IllegalArgumentException("timeWindowMode 24_hour_windows is not supported by Eddy yet");
        }
        if (!options.path("aggregationType").asText("count").equals("count")) {
            throw new IllegalArgumentException("retention aggregationType " + options.get("aggregationType").asText() + " is not supported by Eddy yet");
        }
        copy(source.path("dateRange"), "date_to", filter, "date_to");
        copy(source, "properties", filter, "properties");
        copy(source, "filterTestAccounts", filter, "filter_test_accounts");
        copy(source, "aggregation_group_type_index", filter, "aggregation_group_type_index");
        final JsonNode breakdownFilter = source.path("breakdownFilter");
        if (breakdownFilter.path("breakdowns").isArray() && !breakdownFilter.get("breakdowns").isEmpty()) {
            filter.set("breakdowns", breakdownFilter.get("breakdowns").deepCopy());
        } else {
            copy(breakdownFilter, "breakdown", filter, "breakdown");
            copy(breakdownFilter, "breakdown_group_type_index", filter, "breakdown_group_type_index");
        }
        copy(breakdownFilter, "breakdown_type", filter, "breakdown_type");
        return filter;
    }

    /** PathsQuery's {@code pathsFilter} fields and their legacy names. */
    private static final Map<String, String> PATHS_FIELDS = Map.ofEntries(Map.entry("includeEventTypes", "include_event_types"),
            Map.entry("startPoint", "start_point"), Map.entry("endPoint", "end_point"), Map.entry("pathGroupings", "path_groupings"),
            Map.entry("excludeEvents", "exclude_events"), Map.entry("stepLimit", "step_limit"), Map.entry("pathReplacements", "path_replacements"),
            Map.entry("localPathCleaningFilters", "local_path_cleaning_filters"), Map.entry("edgeLimit", "edge_limit"),
            Map.entry("minEdgeWeight", "min_edge_weight"), Map.entry("maxEdgeWeight", "max_edge_weight"),
            Map.entry("pathsHogQLExpression", "paths_hogql_expression"));

    /** A {@code PathsQuery}: its {@code pathsFilter}, range and filters; funnel paths are refused by name. */
    private static ObjectNode paths(final JsonNode source) {
        if (source.hasNonNull("funnelPathsFilter")) {
            throw new IllegalArgumentException("funnel paths (funnelPathsFilter) are not supported by Eddy yet");
        }
        final ObjectNode filter = Json.mapper().createObjectNode();
        filter.put("insight", "PATHS");
        PATHS_FIELDS.forEach((from, to) -> copy(source.path("pathsFilter"), from, filter, to));
        copy(source.path("dateRange"), "date_from", filter, "date_from");
        copy(source.path("dateRange"), "date_to", filter, "date_to");
        copy(source, "properties", filter, "properties");
        copy(source, "filterTestAccounts", filter, "filter_test_accounts");
        return filter;
    }

    private static JsonNode retentionEntity(final JsonNode entity, final String name) {
        if (entity.isMissingNode() || entity.isNull()) {
            return "returningEntity".equals(name) ? Json.mapper().createObjectNode().put("id", "$pageview").put("type", "events")
                    : Json.mapper().nullNode();
        }
        final boolean action = "actions".equals(entity.path("type").asText()) || "ActionsNode".equals(entity.path("kind").asText());
        final ObjectNode legacy = Json.mapper().createObjectNode();
        legacy.set("id", entity.path("id").isMissingNode() ? entity.path("event") : entity.get("id"));
        legacy.put("type", action ? "actions" : "events");
        copy(entity, "properties", legacy, "properties");
        return legacy;
    }

    /** The series as the legacy filter's {@code events} and {@code actions} lists, each entity keeping its place ({@code order}). */
    private static void series(final JsonNode series, final boolean trend, final ObjectNode filter) {
        if (!series.isArray()) {
            throw new IllegalArgumentException("series must be a list");
        }
        final ArrayNode events = filter.putArray("events");
        final ArrayNode actions = Json.mapper().createArrayNode();
        for (int i = 0; i < series.size(); i++) {
            final JsonNode node = series.get(i);
            final String kind = node.path("kind").asText();
            final ObjectNode entity;
            switch (kind) {
                case "EventsNode" -> {
                    entity = events.addObject();
                    entity.set("id", node.path("event").isMissingNode() ? Json.mapper().nullNode() : node.get("event"));
                    entity.put("type", "events");
                }
                case "ActionsNode" -> {
                    entity = actions.addObject();
                    entity.set("id", node.path("id"));
                    entity.put("type", "actions");
                }
                default -> throw new IllegalArgumentException("series of kind " + kind + " are not supported by Eddy yet; use EventsNode or ActionsNode");
            }
            entity.put("order", i);
            for (final String field : SERIES_FIELDS) {
                copy(node, field, entity, field);
            }
            if (trend && node.hasNonNull("math_hogql")) {
                throw new IllegalArgumentException("math_hogql is not supported by Eddy yet");
            }
            if (node.hasNonNull("math_multiplier") && node.get("math_multiplier").asDouble(1) != 1) {
                throw new IllegalArgumentException("math_multiplier is not supported by Eddy yet");
            }
            if (node.path("optionalInFunnel").asBoolean(false)) {
                throw new IllegalArgumentException("optional funnel steps (optionalInFunnel) are not supported by Eddy yet");
            }
        }
        if (!actions.isEmpty()) {
            filter.set("actions", actions);
        }
    }

    /**
     * The breakdown: one property as the legacy {@code breakdown}; several ({@code breakdowns}, trends only) as the
     * list, whose values are answered as lists.
     */
    private static void breakdown(final JsonNode breakdownFilter, final ObjectNode filter, final boolean trend) {
        for (final String field : BREAKDOWN_FIELDS) {
            copy(breakdownFilter, field, filter, field);
        }
        final JsonNode breakdowns = breakdownFilter.path("breakdowns");
        if (breakdowns.isArray() && !breakdowns.isEmpty()) {
            if (breakdownFilter.hasNonNull("breakdown")) {
                throw new IllegalArgumentException("a query is broken down by breakdown or by breakdowns, not both");
            }
            if (breakdowns.size() > 1) {
                if (!trend) {
                    throw new IllegalArgumentException("funnels break down by several properties with breakdown: [...], not breakdowns");
                }
                filter.set("breakdowns", breakdowns);
                return;
            }
            final JsonNode only = breakdowns.get(0);
            copy(only, "property", filter, "breakdown");
            copy(only, "type", filter, "breakdown_type");
            copy(only, "group_type_index", filter, "breakdown_group_type_index");
            copy(only, "normalize_url", filter, "breakdown_normalize_url");
            copy(only, "histogram_bin_count", filter, "breakdown_histogram_bin_count");
        }
    }

    private static void trendsFilter(final JsonNode source, final ObjectNode filter) {
        final JsonNode trends = source.path("trendsFilter");
        copy(trends, "display", filter, "display");
        copy(trends, "formula", filter, "formula");
        copy(trends, "smoothingIntervals", filter, "smoothing_intervals");
        final JsonNode formulas = trends.path("formulaNodes").isArray() ? trends.get("formulaNodes") : trends.path("formulas");
        if (formulas.isArray() && !formulas.isEmpty()) {
            if (formulas.size() > 1) {
                throw new IllegalArgumentException("several formulas are not supported by Eddy yet");
            }
            final JsonNode formula = formulas.get(0);
            filter.set("formula", formula.isTextual() ? formula : formula.path("formula"));
        }
        compare(source, filter);
    }

    private static void compare(final JsonNode source, final ObjectNode filter) {
        final JsonNode compare = source.path("compareFilter");
        copy(compare, "compare", filter, "compare");
        copy(compare, "compare_to", filter, "compare_to");
    }

    private static void funnelsFilter(final JsonNode funnels, final ObjectNode filter) {
        FUNNEL_FIELDS.forEach((from, to) -> copy(funnels, from, filter, to));
        final JsonNode exclusions = funnels.path("exclusions");
        if (exclusions.isArray() && !exclusions.isEmpty()) {
            final ArrayNode legacy = filter.putArray("exclusions");
            for (final JsonNode exclusion : exclusions) {
                final ObjectNode entity = legacy.addObject();
                if ("ActionsNode".equals(exclusion.path("kind").asText())) {
                    entity.set("id", exclusion.path("id"));
                    entity.put("type", "actions");
                } else {
                    entity.set("id", exclusion.path("event").isMissingNode() ? Json.mapper().nullNode() : exclusion.get("event"));
                    entity.put("type", "events");
                }
                copy(exclusion, "funnelFromStep", entity, "funnel_from_step");
                copy(exclusion, "funnelToStep", entity, "funnel_to_step");
                copy(exclusion, "properties", entity, "properties");
            }
        }
    }

    private static void copy(final JsonNode from, final String field, final ObjectNode to, final String as) {
        final JsonNode value = from.path(field);
        if (!value.isMissingNode() && !value.isNull()) {
            to.set(as, value.deepCopy());
        }
    }
}
