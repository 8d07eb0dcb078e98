package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Which page of the actors behind one number an insight is asked for ({@code limit}, default 100, from
 * {@code offset}), and that page as the engine answers it: {@code {count, actors: [[id, value], ...]}}.
 */
public record ActorPage(int limit, int offset) {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 10_000;

    public static ActorPage of(final JsonNode request) {
        return new ActorPage(Math.max(1, Math.min(request.path("limit").asInt(DEFAULT_LIMIT), MAX_LIMIT)),
                Math.max(0, request.path("offset").asInt(0)));
    }

    /** The page of {@code actors} (in their order), each without a value. */
    public ObjectNode of(final List<String> actors) {
        final ObjectNode page = JsonNodeFactory.instance.objectNode();
        page.put("count", actors.size());
        final ArrayNode list = page.putArray("actors");
        for (int i = offset; i < Math.min(actors.size(), (long) offset + limit); i++) {
            list.addArray().add(actors.get(i)).addNull();
        }
        return page;
    }
}
