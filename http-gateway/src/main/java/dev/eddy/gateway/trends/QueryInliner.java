package dev.eddy.gateway.trends;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;

/**
 * Puts into a query what its names stand for (an action's steps, a cohort's filters or members), read from
 * PostgreSQL, before the query is sent to the streams instances: they hold events and persons, not the definitions.
 */
@FunctionalInterface
public interface QueryInliner {
    /** Sends queries as they are (a process without PostgreSQL). */
    QueryInliner NONE = (projectId, query) -> Future.succeededFuture(query);

    /** {@code query} with the definitions of what it names; {@code query} itself when it names nothing. */
    Future<JsonNode> inline(long projectId, JsonNode query);

    /** This inliner, then {@code next} on its result. */
    default QueryInliner then(final QueryInliner next) {
        return (projectId, query) -> inline(projectId, query).compose(inlined -> next.inline(projectId, inlined));
    }
}
