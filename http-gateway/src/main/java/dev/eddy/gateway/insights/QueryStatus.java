package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import java.time.Duration;
import java.time.Instant;

/**
 * One calculation of a saved insight as PostHog's {@code QueryStatus} shows it: running until it completes, then
 * with its results or its error. A cancelled calculation completes at once with an error; what its scan produces
 * afterwards is dropped.
 */
final class QueryStatus {
    private final String id;
    private final long projectId;
    private final Long insightId;
    private final Long dashboardId;
    private final Instant startTime;
    private final Duration retention;
    private final QueryControl control;
    private Instant endTime;
    private boolean complete;
    private boolean error;
    private String errorMessage;
    private JsonNode results;

    QueryStatus(final String id, final long projectId, final Long insightId, final Long dashboardId, final Instant startTime,
                final Duration retention, final QueryControl control) {
        this.id = id;
        this.projectId = projectId;
        this.insightId = insightId;
        this.dashboardId = dashboardId;
        this.startTime = startTime;
        this.retention = retention;
        this.control = control;
    }

    /** A status that is over before it began: an insight Eddy cannot calculate, a refused or failed calculation. */
    static QueryStatus failed(final String id, final long projectId, final Long insightId, final Long dashboardId, final Instant now,
                              final Duration retention, final String message) {
        final QueryStatus status = new QueryStatus(id, projectId, insightId, dashboardId, now, retention, null);
        status.fail(message, now);
        return status;
    }

    String id() {
        return id;
    }

    long projectId() {
        return projectId;
    }

    synchronized boolean complete() {
        return complete;
    }

    synchronized boolean failed() {
        return complete && error;
    }

    synchronized Instant endTime() {
        return endTime;
    }

    /** Whether a finished status has been shown long enough. */
    synchronized boolean expired(final Instant now) {
        return complete && endTime.plus(retention).isBefore(now);
    }

    /** Records the results; false when the calculation had already completed (it was cancelled). */
    boolean succeed(final JsonNode response, final Instant now) {
        return finish(null, response, now);
    }

    /** Records the failure; false when the calculation had already completed. */
    boolean fail(final String message, final Instant now) {
        return finish(message, null, now);
    }

    /** The one transition of a status: to complete, with results or with an error ({@code message}). */
    private synchronized boolean finish(final String message, final JsonNode response, final Instant now) {
        if (complete) {
            return false;
        }
        complete = true;
        error = message != null;
        errorMessage = message;
        results = response;
        endTime = now;
        return true;
    }

    /** Cancels a running calculation: its scan stops at its next check; false when it had completed. */
    boolean cancel(final String message, final Instant now) {
        if (!fail(message, now)) {
            return false;
        }
        if (control != null) {
            control.cancel();
        }
        return true;
    }

    /** PostHog's QueryStatus fields, as they are now. */
    synchronized ObjectNode toJson() {
        final ObjectNode json = Json.mapper().createObjectNode();
        json.put("id", id);
        json.put("team_id", projectId);
        if (insightId == null) {
            json.putNull("insight_id");
        } else {
            json.put("insight_id", insightId);
        }
        if (dashboardId == null) {
            json.putNull("dashboard_id");
        } else {
            json.put("dashboard_id", dashboardId);
        }
        json.put("query_async", true);
        json.put("complete", complete);
        json.put("error", error);
        json.put("error_message", errorMessage);
        json.set("results", results);
        json.put("start_time", IsoInstants.format(startTime));
        json.put("pickup_time", IsoInstants.format(startTime));
        json.put("end_time", endTime == null ? null : IsoInstants.format(endTime));
        json.put("expiration_time", endTime == null ? null : IsoInstants.format(endTime.plus(retention)));
        json.putNull("task_id");
        json.putNull("query_progress");
        json.putNull("labels");
        return json;
    }
}
