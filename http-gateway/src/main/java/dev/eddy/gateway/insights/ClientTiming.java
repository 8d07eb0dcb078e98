package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Set;

/**
 * A time-to-see-data report of PostHog's web app ({@code POST /insights/timing}, sent by its
 * {@code captureTimeToSeeData}): how long a person waited for an insight or a dashboard to show. PostHog writes the
 * report to its {@code metrics_time_to_see_data} topic; Eddy records it in the timer
 * {@code eddy_insights_client_timing_seconds{type, context, status}}, whose tags take only PostHog's own values, so a
 * client cannot grow the number of series.
 *
 * @param type    {@code dashboard_load}, {@code insight_load}, {@code properties_timeline_load},
 *                {@code property_values_load} or {@code properties_load}
 * @param context {@code dashboard}, {@code insight}, {@code actors_modal} or {@code filters}
 * @param status  {@code success}, {@code failure}, {@code cancelled}, or {@code unknown} when the report has none
 * @param waited  {@code time_to_see_data_ms}
 */
record ClientTiming(String type, String context, String status, Duration waited) {
    static final String METER = "eddy.insights.client.timing";
    private static final Set<String> TYPES = Set.of("dashboard_load", "insight_load", "properties_timeline_load",
            "property_values_load", "properties_load");
    private static final Set<String> CONTEXTS = Set.of("dashboard", "insight", "actors_modal", "filters");
    private static final Set<String> STATUSES = Set.of("success", "failure", "cancelled");
    /** A day: a longer wait is not a measurement of a page load. */
    private static final long MAX_MS = Duration.ofDays(1).toMillis();

    /** The report in {@code body}; a missing or unknown field is a 400 naming it. */
    static ClientTiming of(final Body body) {
        final JsonNode ms = body.raw("time_to_see_data_ms");
        if (ms == null || !ms.isNumber() || !Double.isFinite(ms.asDouble()) || ms.asDouble() < 0 || ms.asDouble() > MAX_MS) {
            throw ApiError.badRequest("invalid_input", "'time_to_see_data_ms' must be a number of milliseconds from 0 to " + MAX_MS + ".",
                    "time_to_see_data_ms");
        }
        final JsonNode status = body.raw("status");
        return new ClientTiming(choice(body, "type", TYPES), choice(body, "context", CONTEXTS),
                status == null || status.isNull() ? "unknown" : choice(body, "status", STATUSES),
                Duration.ofNanos(Math.round(ms.asDouble() * 1_000_000)));
    }

    void record(final MeterRegistry registry) {
        Timer.builder(METER).description("Time to see data reported by PostHog's web app (POST /insights/timing)")
                .tag("type", type).tag("context", context).tag("status", status)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(10)).maximumExpectedValue(Duration.ofMinutes(5))
                .register(registry).record(waited);
    }

    private static String choice(final Body body, final String field, final Set<String> allowed) {
        final JsonNode value = body.raw(field);
        if (value == null || !value.isTextual() || !allowed.contains(value.asText())) {
            throw ApiError.badRequest("invalid_choice", "'" + field + "' must be one of " + allowed.stream().sorted().toList() + ".", field);
        }
        return value.asText();
    }
}
