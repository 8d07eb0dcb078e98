package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import java.util.ArrayList;
import java.util.List;

/**
 * One entry of a dashboard PATCH's {@code tiles}, as PostHog's {@code DashboardSerializer._update_tiles} reads it: a
 * tile with a non-empty {@code text} writes a text card (a new one, or the text its {@code text.id} names), any other
 * tile changes only how an existing tile shows ({@code color}, {@code layouts}, {@code deleted}); what a client sends
 * back of the tile it read ({@code insight}, {@code is_cached}, {@code order}, ...) is ignored.
 *
 * @param id        the tile's id, or null for a new text card
 * @param hasColor  whether {@code color} was sent (it may be sent as null)
 * @param layouts   the new layouts, or null when not sent
 * @param deleted   the new deleted flag, or null when not sent
 * @param text      the text card to write, or null
 */
public record TileWrite(Long id, boolean hasColor, String color, JsonNode layouts, Boolean deleted, Text text) {
    /** PostHog's limit on a text card's body. */
    static final int MAX_BODY = 4000;

    /**
     * @param id   the text to rewrite (it must be shown on this dashboard), or null for a new one
     * @param body the text's body (null and blank allowed, as PostHog's)
     */
    public record Text(Long id, String body) {
    }

    /** Whether the entry changes anything: PostHog passes over an entry with none of these fields. */
    boolean writes() {
        return text != null || hasColor || layouts != null || deleted != null;
    }

    /** The {@code tiles} list of a PATCH body; a malformed entry is a 400 naming {@code tiles} or {@code text}. */
    static List<TileWrite> parse(final JsonNode tiles) {
        if (!tiles.isArray()) {
            throw invalid("tiles", "'tiles' must be a list of tiles.");
        }
        final List<TileWrite> writes = new ArrayList<>();
        for (final JsonNode tile : tiles) {
            if (!tile.isObject()) {
                throw invalid("tiles", "Each tile must be an object.");
            }
            final JsonNode id = tile.path("id");
            if (!id.isMissingNode() && !id.isNull() && !id.isIntegralNumber()) {
                throw invalid("tiles", "A tile's 'id' must be an integer.");
            }
            final JsonNode color = tile.path("color");
            if (!color.isMissingNode() && !color.isNull() && !color.isTextual()) {
                throw invalid("tiles", "A tile's 'color' must be a string or null.");
            }
            final JsonNode layouts = tile.path("layouts");
            if (!layouts.isMissingNode() && !layouts.isObject()) {
                throw invalid("tiles", "A tile's 'layouts' must be an object.");
            }
            final JsonNode deleted = tile.path("deleted");
            if (!deleted.isMissingNode() && !deleted.isBoolean()) {
                throw invalid("tiles", "A tile's 'deleted' must be a boolean.");
            }
            writes.add(new TileWrite(id.isIntegralNumber() ? id.asLong() : null, !color.isMissingNode(),
                    color.isTextual() ? color.asText() : null, layouts.isObject() ? layouts : null,
                    deleted.isBoolean() ? deleted.asBoolean() : null, text(tile.path("text"))));
        }
        return writes;
    }

    /** A text card to write: PostHog writes one only for a non-empty {@code text} object. */
    private static Text text(final JsonNode text) {
        if (text.isMissingNode() || text.isNull() || (text.isObject() && text.isEmpty())) {
            return null;
        }
        if (!text.isObject()) {
            throw invalid("text", "A tile's 'text' must be an object with a 'body'.");
        }
        final JsonNode body = text.path("body");
        if (!body.isMissingNode() && !body.isNull() && !body.isTextual()) {
            throw invalid("text", "'body' must be a string.");
        }
        if (body.isTextual() && body.asText().length() > MAX_BODY) {
            throw invalid("text", "Text body cannot exceed 4000 characters");
        }
        final JsonNode id = text.path("id");
        if (!id.isMissingNode() && !id.isNull() && !id.isIntegralNumber()) {
            throw invalid("text", "A text's 'id' must be an integer.");
        }
        return new Text(id.isIntegralNumber() ? id.asLong() : null, body.isTextual() ? body.asText() : null);
    }

    private static ApiError invalid(final String attr, final String detail) {
        return ApiError.badRequest("invalid_input", detail, attr);
    }
}
