package dev.eddy.gateway.actions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.trends.QueryInliner;
import dev.eddy.trends.Action;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Puts the definitions of the actions a query names into the query, before it is sent to the streams instances: every
 * entity of type {@code actions} (the legacy {@code actions} series, funnel steps and exclusions, retention's
 * entities) gets its action's id, name and steps under {@link Action#INLINED}, read from the project's actions in one
 * query. So every instance matches the same definition without reading PostgreSQL, and an action changed later changes
 * the next query's answer. An action the project does not have is left without one; the engine then refuses the query
 * with PostHog's words ({@code Action ID 5 does not exist!}). Whatever a client sent under that key is replaced.
 */
public final class ActionInliner implements QueryInliner {
    private final ActionRepository actions;

    public ActionInliner(final ActionRepository actions) {
        this.actions = actions;
    }

    /** {@code query} with its actions' definitions, or {@code query} itself when it names none. */
    @Override
    public Future<JsonNode> inline(final long projectId, final JsonNode query) {
        final List<ObjectNode> entities = new ArrayList<>();
        collect(query, entities);
        if (entities.isEmpty()) {
            return Future.succeededFuture(query);
        }
        final JsonNode copy = query.deepCopy();
        final List<ObjectNode> copied = new ArrayList<>();
        collect(copy, copied);
        final Set<Long> ids = new TreeSet<>();
        copied.forEach(e -> id(e).ifPresent(ids::add));
        return actions.some(projectId, ids).map(found -> {
            for (final ObjectNode entity : copied) {
                entity.remove(Action.INLINED);
                id(entity).map(found::get).ifPresent(action -> entity.set(Action.INLINED, action.definition()));
            }
            return copy;
        });
    }

    /** The entities of type {@code actions} in {@code node}, and the entries of its {@code actions} lists (of that type too). */
    private static void collect(final JsonNode node, final List<ObjectNode> into) {
        if (node.isObject()) {
            if ("actions".equals(node.path("type").asText())) {
                into.add((ObjectNode) node);
            }
            final JsonNode list = node.get("actions");
            if (list != null && list.isArray()) {
                list.forEach(entry -> {
                    if (entry.isObject() && !"actions".equals(entry.path("type").asText())) {
                        into.add((ObjectNode) entry);
                    }
                });
            }
            node.fields().forEachRemaining(field -> {
                if (!Action.INLINED.equals(field.getKey())) {
                    collect(field.getValue(), into);
                }
            });
        } else if (node.isArray()) {
            node.forEach(child -> collect(child, into));
        }
    }

    private static Optional<Long> id(final ObjectNode entity) {
        final JsonNode id = entity.get("id");
        if (id == null) {
            return Optional.empty();
        }
        if (id.isIntegralNumber() && id.canConvertToLong()) {
            return Optional.of(id.asLong());
        }
        if (id.isTextual() && id.asText().matches("\\d{1,18}")) {
            return Optional.of(Long.parseLong(id.asText()));
        }
        return Optional.empty();
    }
}
