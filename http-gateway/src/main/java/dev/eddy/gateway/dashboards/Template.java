package dev.eddy.gateway.dashboards;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.insights.InsightFields;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A dashboard template in PostHog's JSON form, checked: what {@code create_from_template_json} takes and what the
 * built-in templates ({@code use_template}) are written in.
 *
 * @param tiles insight tiles (with the insight to create) and text tiles (with {@code {body}})
 */
public record Template(String name, String description, JsonNode filters, List<String> tags, List<Tile> tiles) {
    /** Built-in templates by their {@code template_name}, lower-cased. */
    private static final Map<String, String> BUILT_IN = Map.of("product analytics", "/dashboard-templates/product-analytics.json");

    /**
     * @param insight the insight to create, or null for a text tile
     * @param text    {@code {body}} of a text tile
     */
    public record Tile(InsightFields insight, JsonNode text, JsonNode layouts, String color) {
    }

    /** The built-in template of this name, if there is one. */
    public static Optional<Template> builtIn(final String name) {
        final String resource = BUILT_IN.get(name.trim().toLowerCase(Locale.ROOT));
        if (resource == null) {
            return Optional.empty();
        }
        try (InputStream in = Template.class.getResourceAsStream(resource)) {
            return Optional.of(parse(Json.mapper().readTree(in), "use_template"));
        } catch (final IOException e) {
            throw new IllegalStateException("built-in dashboard template " + resource + " is unreadable", e);
        }
    }

    /** Reads a template; a malformed one is a 400 naming {@code attr}. */
    public static Template parse(final JsonNode json, final String attr) {
        if (json == null || !json.isObject()) {
            throw invalid(attr, "must be a dashboard template object");
        }
        final String name = json.path("template_name").asText("");
        if (name.isBlank()) {
            throw invalid(attr, "needs a template_name");
        }
        final JsonNode filters = json.path("dashboard_filters").isObject() ? json.get("dashboard_filters") : Json.mapper().createObjectNode();
        final List<String> tags = new ArrayList<>();
        json.path("tags").forEach(t -> {
            if (t.isTextual() && !t.asText().isBlank()) {
                tags.add(t.asText().trim());
            }
        });
        final List<Tile> tiles = new ArrayList<>();
        if (!json.path("tiles").isArray()) {
            throw invalid(attr, "needs a tiles list");
        }
        for (final JsonNode tile : json.get("tiles")) {
            final String type = tile.path("type").asText("");
            final JsonNode layouts = tile.path("layouts").isObject() ? tile.get("layouts") : Json.mapper().createObjectNode();
            final String color = tile.path("color").isTextual() ? tile.get("color").asText() : null;
            if ("TEXT".equals(type)) {
                tiles.add(new Tile(null, Json.mapper().createObjectNode().put("body", tile.path("body").asText("")), layouts, color));
            } else if ("INSIGHT".equals(type)) {
                final JsonNode insightFilters = tile.path("filters").isObject() ? tile.get("filters") : Json.mapper().createObjectNode();
                tiles.add(new Tile(InsightFields.ofTemplate(tile.path("name").asText(null), tile.path("description").asText(""),
                        insightFilters, tile.path("query").isObject() ? tile.get("query") : null), null, layouts, color));
            } else {
                throw invalid(attr, "has a tile of unknown type '" + type + "' (INSIGHT or TEXT)");
            }
        }
        return new Template(name.trim(), json.path("dashboard_description").asText(""), filters, tags, tiles);
    }

    private static ApiError invalid(final String attr, final String what) {
        return ApiError.badRequest("invalid_input", "The template " + what + ".", attr);
    }
}
