package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;

/**
 * An insight calculation's result as CSV, the rows PostHog's CSV export makes of it
 * ({@code posthog/tasks/exports/csv_exporter.py}, {@code _convert_response_to_csv_data}):
 * <ul>
 * <li>trends, stickiness, lifecycles (items with {@code data}): a row per series, {@code series} its label (with
 * {@code - previous} / {@code - current} when compared), {@code custom name} when it has one, a column per breakdown
 * property with the series' value ({@code Other (i.e. all remaining values)}, {@code None (i.e. no value)} for
 * PostHog's markers), then a column per date label with its number, or {@code Total Sum} for total-value displays;
 * compared series take the current period's labels;</li>
 * <li>funnel steps (items with an {@code action_id}, or a list of such lists when broken down): a row per step,
 * {@code name, breakdown_value, action_id, count, median_conversion_time (seconds), average_conversion_time (seconds)};</li>
 * <li>retention cohorts: {@code cohort} (its date), {@code cohort size}, then a column per period ({@code Day 0}, ...);</li>
 * <li>time to convert: {@code bin, value};</li>
 * <li>anything else (paths' edges, say): each item a row of its fields, nested ones as {@code a.b}.</li>
 * </ul>
 * The header is the first row's columns (a later row's other columns are dropped, missing ones empty), as PostHog's
 * renderer makes it; an empty result is the one row PostHog writes then,
 * {@code error: No data available or unable to format for export.}. Breakdown values of a funnel that are a list are
 * joined with {@code ::}; a single value is written as it is (PostHog's join would split it into its characters).
 */
final class InsightResultCsv {
    private static final String OTHER = "$$_posthog_breakdown_other_$$";
    private static final String NULL = "$$_posthog_breakdown_null_$$";

    private InsightResultCsv() {
    }

    /**
     * The CSV of {@code result} (an insight's {@code result}), whose breakdown columns are named by {@code query}'s
     * {@code breakdowns} (their {@code property}) or its {@code breakdown} property.
     */
    static String of(final JsonNode result, final JsonNode query) {
        final List<Map<String, JsonNode>> rows = rows(result, breakdownProperties(query));
        if (rows.isEmpty()) {
            rows.add(Map.of("error", com.fasterxml.jackson.databind.node.TextNode.valueOf("No data available or unable to format for export.")));
        }
        final List<String> header = header(rows);
        final StringWriter out = new StringWriter();
        try (CSVPrinter printer = new CSVPrinter(out, CSVFormat.DEFAULT.builder().setHeader(header.toArray(String[]::new)).get())) {
            for (final Map<String, JsonNode> row : rows) {
                final List<String> cells = new ArrayList<>(header.size());
                header.forEach(column -> cells.add(cell(row.get(column))));
                printer.printRecord(cells);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("writing to a string", e);
        }
        return out.toString();
    }

    private static List<Map<String, JsonNode>> rows(final JsonNode result, final List<String> breakdowns) {
        final List<Map<String, JsonNode>> rows = new ArrayList<>();
        if (result == null || result.isNull()) {
            return rows;
        }
        if (result.isObject()) {
            // Time to convert: [[bin, persons], ...]; another object is one row of its fields.
            if (result.path("bins").isArray()) {
                for (final JsonNode bin : result.get("bins")) {
                    rows.add(row("bin", bin.path(0), "value", bin.path(1)));
                }
            } else {
                rows.add(flat(result));
            }
            return rows;
        }
        if (!result.isArray() || result.isEmpty()) {
            return rows;
        }
        final JsonNode first = result.get(0);
        if (first.isArray() || first.hasNonNull("action_id") && !first.get("action_id").asText().isEmpty()) {
            for (final JsonNode steps : first.isArray() ? result : List.of(result)) {
                steps.forEach(step -> rows.add(funnelStep(step)));
            }
        } else if (first.path("values").isArray() && !first.get("values").isEmpty() && first.hasNonNull("label")) {
            result.forEach(cohort -> rows.add(retentionCohort(cohort)));
        } else if (first.path("data").isArray() || !first.hasNonNull("data") && first.has("aggregated_value")) {
            final boolean compared = first.hasNonNull("compare_label") && !first.get("compare_label").asText().isEmpty();
            JsonNode dates = null;
            for (final JsonNode item : result) {
                if (dates == null && "current".equals(item.path("compare_label").asText())) {
                    dates = item;
                }
            }
            for (int i = 0; i < result.size(); i++) {
                rows.add(series(result.get(i), i, compared ? dates : result.get(i), breakdowns));
            }
        } else {
            result.forEach(item -> rows.add(flat(item)));
        }
        return rows;
    }

    private static Map<String, JsonNode> funnelStep(final JsonNode step) {
        final JsonNode custom = step.path("custom_name");
        final JsonNode actionId = step.path("action_id");
        final JsonNode breakdown = step.path("breakdown_value");
        final String joined;
        if (breakdown.isArray()) {
            final List<String> parts = new ArrayList<>();
            breakdown.forEach(v -> parts.add(v.asText()));
            joined = String.join("::", parts);
        } else {
            joined = breakdown.isMissingNode() || breakdown.isNull() ? "" : breakdown.asText();
        }
        final Map<String, JsonNode> row = new LinkedHashMap<>();
        row.put("name", custom.isTextual() && !custom.asText().isEmpty() ? custom : actionId);
        row.put("breakdown_value", text(joined));
        row.put("action_id", actionId);
        row.put("count", step.path("count"));
        row.put("median_conversion_time (seconds)", step.path("median_conversion_time"));
        row.put("average_conversion_time (seconds)", step.path("average_conversion_time"));
        return row;
    }

    /**
     * A dated cohort's periods by their labels (one without a label named after the cohort's unit, {@code Day 2}, as
     * PostHog's newer retention labels them); an undated cohort's {@code Period 0}, {@code Period 1}, ...
     */
    private static Map<String, JsonNode> retentionCohort(final JsonNode cohort) {
        final JsonNode values = cohort.get("values");
        final String label = cohort.get("label").asText();
        final boolean dated = cohort.hasNonNull("date") && !cohort.get("date").asText().isEmpty();
        final String unit = dated && label.contains(" ") ? label.substring(0, label.lastIndexOf(' ')) : "Period";
        final Map<String, JsonNode> row = new LinkedHashMap<>();
        row.put("cohort", dated ? cohort.get("date") : cohort.get("label"));
        row.put("cohort size", values.get(0).path("count"));
        for (int k = 0; k < values.size(); k++) {
            final JsonNode value = values.get(k);
            row.put(dated && value.hasNonNull("label") ? value.get("label").asText() : unit + " " + k, value.path("count"));
        }
        return row;
    }

    private static Map<String, JsonNode> series(final JsonNode item, final int index, final JsonNode dates, final List<String> breakdowns) {
        final String label = item.has("label") ? item.get("label").asText() : "Series #" + (index + 1);
        final String compare = item.path("compare_label").asText("");
        final Map<String, JsonNode> row = new LinkedHashMap<>();
        row.put("series", text(compare.isEmpty() ? label : label + " - " + compare));
        final JsonNode custom = item.path("action").path("custom_name");
        if (custom.isTextual() && !custom.asText().isEmpty()) {
            row.put("custom name", custom);
        }
        if (item.has("breakdown_value")) {
            final JsonNode value = item.get("breakdown_value");
            final List<JsonNode> values = new ArrayList<>();
            if (value.isArray()) {
                value.forEach(values::add);
            } else {
                values.add(value);
            }
            for (int i = 0; i < values.size() && i < breakdowns.size(); i++) {
                final String shown = values.get(i).isNull() ? "" : values.get(i).asText();
                row.put(breakdowns.get(i), text(OTHER.equals(shown) ? "Other (i.e. all remaining values)"
                        : NULL.equals(shown) ? "None (i.e. no value)" : shown));
            }
        }
        if (item.hasNonNull("aggregated_value")) {
            row.put("Total Sum", item.get("aggregated_value"));
        } else if (item.path("data").isArray()) {
            final JsonNode labels = dates == null ? item.path("labels") : dates.path("labels");
            for (int i = 0; i < item.get("data").size(); i++) {
                row.put(labels.path(i).asText(), item.get("data").get(i));
            }
        }
        return row;
    }

    /** The breakdown properties a query names, in order: {@code breakdowns[].property}, else {@code breakdown} when a property. */
    private static List<String> breakdownProperties(final JsonNode query) {
        final List<String> properties = new ArrayList<>();
        if (query == null) {
            return properties;
        }
        if (query.path("breakdowns").isArray() && !query.get("breakdowns").isEmpty()) {
            query.get("breakdowns").forEach(b -> properties.add(b.path("property").isValueNode() ? b.get("property").asText() : ""));
        } else if (query.path("breakdown").isTextual() && !query.get("breakdown").asText().isBlank()) {
            properties.add(query.get("breakdown").asText());
        }
        return properties.stream().filter(p -> !p.isEmpty()).toList();
    }

    /**
     * The first row's columns; when one of its values is a list or an object (flattened to {@code a.b} columns), every
     * row's columns in the order they first appear, as PostHog's renderer then leaves the header open.
     */
    private static List<String> header(final List<Map<String, JsonNode>> rows) {
        final Set<String> columns = new LinkedHashSet<>(rows.get(0).keySet());
        if (rows.get(0).keySet().stream().anyMatch(k -> k.contains("."))) {
            rows.forEach(r -> columns.addAll(r.keySet()));
        }
        return List.copyOf(columns);
    }

    private static Map<String, JsonNode> flat(final JsonNode item) {
        final Map<String, JsonNode> row = new LinkedHashMap<>();
        flatten("", item, row);
        return row;
    }

    private static void flatten(final String prefix, final JsonNode node, final Map<String, JsonNode> into) {
        if (node.isObject()) {
            final Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                final Map.Entry<String, JsonNode> field = fields.next();
                flatten(prefix.isEmpty() ? field.getKey() : prefix + "." + field.getKey(), field.getValue(), into);
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                flatten(prefix + "." + i, node.get(i), into);
            }
        } else {
            into.put(prefix, node);
        }
    }

    private static Map<String, JsonNode> row(final String a, final JsonNode va, final String b, final JsonNode vb) {
        final Map<String, JsonNode> row = new LinkedHashMap<>();
        row.put(a, va);
        row.put(b, vb);
        return row;
    }

    private static JsonNode text(final String value) {
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(value);
    }

    private static String cell(final JsonNode value) {
        return value == null || value.isNull() || value.isMissingNode() ? "" : value.asText();
    }
}
