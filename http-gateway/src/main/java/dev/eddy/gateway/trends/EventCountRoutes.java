package dev.eddy.gateway.trends;

import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code GET /api/projects/:project_id/event_counts/?event=&date_from=&date_to=}: hourly event counts of a
 * project, straight from the rollup stores (scope {@code insight:read}). Dates are ISO date-times or dates
 * (UTC); the default range is everything up to the end of today.
 */
public final class EventCountRoutes {
    public static final String READ = "insight:read";
    private static final Instant EARLIEST = Instant.EPOCH;

    private final ProjectRepository projects;
    private final EventCountService counts;

    public EventCountRoutes(final ProjectRepository projects, final EventCountService counts) {
        this.projects = projects;
        this.counts = counts;
    }

    public void mount(final Router router) {
        router.get("/api/projects/:project_id/event_counts").handler(PersonalApiKeyAuth.require(READ)).handler(this::hourly);
    }

    private void hourly(final RoutingContext ctx) {
        final long projectId = Params.pathId(ctx, "project_id");
        final Instant from = instant(ctx, "date_from", false).orElse(EARLIEST);
        final Instant to = instant(ctx, "date_to", true)
                .orElseGet(() -> Instant.now().truncatedTo(ChronoUnit.DAYS).plus(1, ChronoUnit.DAYS).minusMillis(1));
        if (to.isBefore(from)) {
            throw ApiError.badRequest("invalid_input", "'date_to' is before 'date_from'.", "date_to");
        }
        final Optional<String> event = Optional.ofNullable(ctx.queryParams().get("event")).filter(e -> !e.isEmpty());
        projects.find(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> project.isPresent()
                        ? counts.hourly(new HourlyCountQuery(projectId, from, to, event))
                        : io.vertx.core.Future.failedFuture(ApiError.notFound("Not found.")))
                .onSuccess(result -> Responses.json(ctx, 200, body(result)))
                .onFailure(ctx::fail);
    }

    private static Map<String, Object> body(final List<HourlyCount> result) {
        final Map<String, Object> body = new LinkedHashMap<>();
        body.put("results", result);
        body.put("total", result.stream().mapToLong(HourlyCount::count).sum());
        return body;
    }

    /** A date alone means the start of that day, or its end when {@code endOfDay} (for date_to). */
    private static Optional<Instant> instant(final RoutingContext ctx, final String name, final boolean endOfDay) {
        final String raw = ctx.queryParams().get(name);
        if (raw == null || raw.isBlank()) {
            return Optional.empty();
        }
        try {
            if (raw.length() == 10) {
                final LocalDate day = LocalDate.parse(raw);
                return Optional.of(endOfDay
                        ? day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().minusMillis(1)
                        : day.atStartOfDay(ZoneOffset.UTC).toInstant());
            }
            return Optional.of(OffsetDateTime.parse(raw).toInstant());
        } catch (final DateTimeParseException e) {
            throw ApiError.badRequest("invalid_input", "'" + name + "' must be an ISO date or date-time.", name);
        }
    }
}
