package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.auth.PersonalApiKeyAuth;
import dev.eddy.gateway.http.Pagination;
import dev.eddy.gateway.http.Params;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.persons.PersonsRoutes;
import dev.eddy.gateway.projects.ProjectRepository;
import dev.eddy.query.insights.InsightEngine;
import dev.eddy.serde.IsoInstants;
import dev.eddy.serde.Json;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostHog's persons behind a number (scope {@code person:read}), as the insights' {@code persons_urls} ask
 * ({@link PersonsUrls}), {@code limit} (default 100) at a time from {@code offset}:
 * <ul>
 *   <li>{@code GET /api/projects/:id/persons/trends/}: a trend's filter with the data point's {@code entity_id},
 *   {@code entity_type}, {@code entity_math}, {@code entity_order}, {@code date_from}, {@code date_to} and
 *   {@code breakdown_value}; {@code {results: [{people, count}], next, initial, missing_persons, is_cached,
 *   last_refresh}}, the persons with most events there first, each with its {@code value_at_data_point};</li>
 *   <li>{@code .../persons/stickiness/}: a stickiness filter with {@code stickiness_days} and {@code entity_order};
 *   {@code .../persons/lifecycle/}: a lifecycle filter with {@code target_date} and {@code lifecycle_type};
 *   {@code {results: [{people, count}], next}};</li>
 *   <li>{@code .../persons/funnel/} ({@code GET}, or {@code POST} with the filter as the body): a funnel's filter with
 *   {@code funnel_step} (or {@code funnel_custom_steps}) and {@code funnel_step_breakdown}, or a funnel trend's with
 *   {@code entrance_period_start} and {@code drop_off}; the envelope of trends, persons ordered by id;</li>
 *   <li>{@code .../persons/funnel/correlation/} (likewise): a funnel correlation's filter with
 *   {@code funnel_correlation_person_converted} and its candidate ({@code funnel_correlation_person_entity} or
 *   {@code funnel_correlation_property_values}), as its people URLs ask; the envelope of funnels.</li>
 * </ul>
 */
public final class InsightPersonsRoutes {
    private static final String BASE = "/api/projects/:project_id/persons/";
    /** The insights whose persons are listed, by the name of their route. */
    private static final Map<String, InsightEngine.Kind> KINDS = Map.of("trends", InsightEngine.Kind.TREND_ACTORS,
            "stickiness", InsightEngine.Kind.STICKINESS, "lifecycle", InsightEngine.Kind.LIFECYCLE, "retention", InsightEngine.Kind.RETENTION,
            "funnel", InsightEngine.Kind.FUNNEL_ACTORS, "funnel/correlation", InsightEngine.Kind.FUNNEL_CORRELATION);

    private final ProjectRepository projects;
    private final InsightActors actors;

    public InsightPersonsRoutes(final ProjectRepository projects, final InsightActors actors) {
        this.projects = projects;
        this.actors = actors;
    }

    /** Mount before the persons routes, whose {@code /persons/:uuid} would take {@code trends} for an id. */
    public void mount(final Router router) {
        KINDS.forEach((insight, kind) -> router.get(BASE + insight).handler(PersonalApiKeyAuth.require(PersonsRoutes.READ))
                .handler(ctx -> persons(ctx, kind, InsightQueryRoutes.fromParams(ctx.queryParams()))));
        // PostHog's funnel persons also take the filter as a JSON body (the query parameters win where both name a field).
        for (final String funnel : new String[] {"funnel", "funnel/correlation"}) {
            router.post(BASE + funnel).handler(PersonalApiKeyAuth.require(PersonsRoutes.READ)).handler(ctx -> {
                final ObjectNode request = InsightQueryRoutes.body(ctx).deepCopy();
                request.setAll(InsightQueryRoutes.fromParams(ctx.queryParams()));
                persons(ctx, KINDS.get(funnel), request);
            });
        }
    }

    private void persons(final RoutingContext ctx, final InsightEngine.Kind kind, final ObjectNode request) {
        final long projectId = Params.pathId(ctx, "project_id");
        projects.require(PersonalApiKeyAuth.principal(ctx), projectId)
                .compose(project -> actors.page(project, kind, request))
                .onSuccess(found -> {
                    final int limit = request.get("limit").asInt();
                    final int offset = request.get("offset").asInt();
                    final Page page = shown(found);
                    final Map<String, Object> body = new LinkedHashMap<>();
                    if (kind == InsightEngine.Kind.RETENTION) {
                        // PostHog's retention persons: each person with the periods it came back in.
                        final List<Map<String, Object>> rows = new ArrayList<>();
                        for (final Map<String, Object> person : page.people()) {
                            final Object appearances = person.remove("appearances");
                            rows.add(Map.of("person", person, "appearances", appearances));
                        }
                        body.put("result", rows);
                        body.put("next", offset + limit < page.total() ? next(ctx, offset + limit) : null);
                        body.put("missing_persons", page.missing());
                        Responses.json(ctx, 200, body);
                        return;
                    }
                    final Map<String, Object> result = new LinkedHashMap<>();
                    result.put("people", page.people());
                    result.put("count", page.people().size());
                    body.put("results", List.of(result));
                    final String initial = ctx.request().uri();
                    body.put("next", offset + limit < page.total() ? next(ctx, offset + limit) : null);
                    if (kind == InsightEngine.Kind.TREND_ACTORS || kind == InsightEngine.Kind.FUNNEL_ACTORS
                            || kind == InsightEngine.Kind.FUNNEL_CORRELATION) {
                        body.put("initial", initial);
                        body.put("missing_persons", page.missing());
                        body.put("is_cached", false);
                        body.put("last_refresh", IsoInstants.format(Instant.now()));
                    }
                    Responses.json(ctx, 200, body);
                })
                .onFailure(ctx::fail);
    }

    private record Page(List<Map<String, Object>> people, long total, int missing) {
    }

    /** The engine's page as PostHog's persons pages show each person, with its value at the data point. */
    private static Page shown(final InsightActors.Page found) {
        final List<Map<String, Object>> people = new ArrayList<>();
        for (final InsightActors.Actor actor : found.actors()) {
            final Map<String, Object> shown = new LinkedHashMap<>();
            shown.put("type", "person");
            shown.putAll(PersonsRoutes.person(actor.person()));
            shown.put("matched_recordings", List.of());
            final JsonNode value = actor.value();
            if (value.isArray()) {
                shown.put("appearances", value);
            } else {
                shown.put("value_at_data_point", value.isNull() ? null : value.asLong());
            }
            people.add(shown);
        }
        return new Page(people, found.total(), found.missing());
    }

    /** The same request from {@code offset} on, absolute as PostHog's first {@code next} is. */
    private static String next(final RoutingContext ctx, final int offset) {
        return Pagination.url(ctx, Map.of("offset", Integer.toString(offset)));
    }

    /** A value as a persons page's query parameter carries it: text as is, anything else as JSON. */
    public static String encode(final JsonNode value) {
        return value.isTextual() ? value.asText() : Json.mapper().valueToTree(value).toString();
    }
}
