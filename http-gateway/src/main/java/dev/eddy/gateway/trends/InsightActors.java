package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.persons.PersonsService;
import dev.eddy.gateway.projects.Project;
import dev.eddy.persons.PersonState;
import dev.eddy.query.insights.InsightEngine;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The persons behind an insight's number, as PostHog's persons pages and actors queries list them: the engine's page
 * of actor ids (with each one's value there: its events at a trend's data point, its appearances in a retention
 * cohort), each read as its person. Both the legacy persons routes ({@link InsightPersonsRoutes}) and the Query API's
 * {@code InsightActorsQuery} ask here.
 */
public final class InsightActors {
    static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1000;

    private final InsightQueryService queries;
    private final PersonsService persons;

    public InsightActors(final InsightQueryService queries, final PersonsService persons) {
        this.queries = queries;
        this.persons = persons;
    }

    /**
     * One person behind the number.
     *
     * @param value its value there: a trend's events at the data point, a retention cohort's appearances (a list),
     *              or null
     */
    public record Actor(PersonState person, JsonNode value) {
    }

    /**
     * @param total   actors behind the number, over every page
     * @param missing actors of this page whose person could not be read (merged away meanwhile)
     */
    public record Page(List<Actor> actors, long total, int missing) {
    }

    /**
     * The page {@code request} asks for ({@code limit}, default 100, at most 1000, from {@code offset}; both written into
     * it) of the persons behind the number it names, for the insight of {@code kind} ({@code TREND_ACTORS},
     * {@code STICKINESS}, {@code LIFECYCLE}, {@code RETENTION}, {@code FUNNEL_ACTORS}, {@code FUNNEL_CORRELATION}).
     */
    public Future<Page> page(final Project project, final InsightEngine.Kind kind, final ObjectNode request) {
        required(kind, request);
        request.put("limit", Math.max(1, Math.min(request.path("limit").asInt(DEFAULT_LIMIT), MAX_LIMIT)));
        request.put("offset", Math.max(0, request.path("offset").asInt(0)));
        if (kind == InsightEngine.Kind.TREND_ACTORS) {
            // The series as the trend named it, so that an action is inlined and its own filters apply.
            final ObjectNode entity = request.path("entity").isObject() ? (ObjectNode) request.get("entity") : request.putObject("entity");
            entity.set("id", request.path("entity_id"));
            entity.put("type", request.path("entity_type").asText("events"));
        }
        return queries.calculate(kind, project, request).compose(found -> people(project.id(), found));
    }

    private static void required(final InsightEngine.Kind kind, final ObjectNode request) {
        if (kind == InsightEngine.Kind.STICKINESS && !request.hasNonNull("stickiness_days")) {
            throw ApiError.badRequest("required", "'stickiness_days' is required.", "stickiness_days");
        }
        if (kind == InsightEngine.Kind.RETENTION && !request.hasNonNull("selected_interval")) {
            throw ApiError.badRequest("required", "'selected_interval' is required.", "selected_interval");
        }
        if (kind == InsightEngine.Kind.LIFECYCLE && (!request.hasNonNull("target_date") || !request.hasNonNull("lifecycle_type"))) {
            throw ApiError.badRequest("required", "'target_date' and 'lifecycle_type' are required.", null);
        }
        if (kind == InsightEngine.Kind.FUNNEL_CORRELATION && !request.hasNonNull("funnel_correlation_person_converted")) {
            throw ApiError.badRequest("required", "'funnel_correlation_person_converted' is required.", "funnel_correlation_person_converted");
        }
    }

    /** The persons of the engine's page, in its order, each with its value there. */
    private Future<Page> people(final long projectId, final JsonNode found) {
        final ArrayNode actors = (ArrayNode) found.path("actors");
        final List<Future<Optional<PersonState>>> reads = new ArrayList<>();
        actors.forEach(a -> reads.add(persons.byUuid(projectId, a.get(0).asText())));
        return Future.all(reads).map(all -> {
            final List<Actor> page = new ArrayList<>();
            int missing = 0;
            for (int i = 0; i < reads.size(); i++) {
                final Optional<PersonState> person = all.resultAt(i);
                if (person.isEmpty()) {
                    missing++;
                } else {
                    page.add(new Actor(person.get(), actors.get(i).get(1)));
                }
            }
            return new Page(page, found.path("count").asLong(), missing);
        });
    }
}
