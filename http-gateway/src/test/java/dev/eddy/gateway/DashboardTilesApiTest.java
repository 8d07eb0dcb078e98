package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A dashboard's tiles as PostHog's clients write them: {@code tiles} in a PATCH (text cards, colours, layouts, removal),
 * {@code duplicate_tiles} on create, and the list's filters. Expected shapes from PostHog's
 * {@code test_dashboard_text_tiles.py}, {@code test_dashboard_duplication.py} and {@code test_dashboard.py}.
 */
class DashboardTilesApiTest extends RouteTest {
    private static TestUsers.TestUser other;

    @BeforeAll
    static void setUp() throws Exception {
        other = TestUsers.member(eddy.config().pg(), 1, "*");
    }

    @Test
    void aTextTileIsCreatedWithPostHogsTextCard() {
        final long dashboard = dashboard("{\"name\":\"dashboard\"}");

        final HttpResponse<String> response = patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"text\":{\"body\":\"hello world\"}}]}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode tiles = TestEddy.json(response).get("tiles");
        assertThat(tiles).hasSize(1);
        final JsonNode tile = tiles.get(0);
        assertThat(tile.get("insight").isNull()).isTrue();
        assertThat(tile.get("color").isNull()).isTrue();
        assertThat(tile.get("layouts").isEmpty()).isTrue();
        assertThat(tile.get("is_cached").asBoolean()).isFalse();
        assertThat(tile.get("last_refresh").isNull()).isTrue();
        final JsonNode text = tile.get("text");
        assertThat(text.get("id").isIntegralNumber()).isTrue();
        assertThat(text.get("body").asText()).isEqualTo("hello world");
        assertThat(text.get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(text.get("last_modified_by").isNull()).isTrue();
        assertThat(text.get("last_modified_at").asText()).isNotEmpty();
        assertThat(text.get("team").asLong()).isEqualTo(1);
    }

    @Test
    void editingATextTileKeepsItsIdsAndRecordsWhoChangedIt() {
        final long dashboard = dashboard("{\"name\":\"dashboard\"}");
        patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"text\":{\"body\":\"hello world\"}}]}");
        final JsonNode before = TestEddy.json(patch(eddy.personalKey(), dashboard,
                "{\"tiles\":[{\"text\":{\"body\":\"ciao il mondo\"}}]}")).get("tiles");
        assertThat(before).hasSize(2);

        // Another member sends the first tile back as read, with a new body (PostHog's test_can_update_a_single_text_tile).
        final ObjectNode edited = before.get(0).deepCopy();
        ((ObjectNode) edited.get("text")).put("body", "anche ciao");
        final HttpResponse<String> response = patch(other.key(), dashboard, "{\"tiles\":[" + edited + "]}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final JsonNode after = TestEddy.json(response).get("tiles");
        assertThat(after).extracting(t -> t.get("id").asLong())
                .containsExactly(before.get(0).get("id").asLong(), before.get(1).get("id").asLong());
        assertThat(after.get(0).get("text").get("id").asLong()).isEqualTo(before.get(0).get("text").get("id").asLong());
        assertThat(after).extracting(t -> t.get("text").get("body").asText()).containsExactly("anche ciao", "ciao il mondo");
        assertThat(after.get(0).get("text").get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(after.get(1).get("text").get("created_by").get("email").asText()).isEqualTo("admin@eddy.local");
        assertThat(after.get(0).get("text").get("last_modified_by").get("id").asLong()).isEqualTo(other.id());
        assertThat(after.get(1).get("text").get("last_modified_by").isNull()).isTrue();
    }

    @Test
    void colourAndLayoutsAreSavedForNewOrExistingTiles() {
        final long dashboard = dashboard("{\"name\":\"colours\",\"pinned\":true}");
        insight("{\"name\":\"another\",\"dashboards\":[" + dashboard + "]}");
        final long tile = tiles(dashboard).get(0).get("id").asLong();

        // PostHog's test_dashboard_tile_color_can_be_set_for_new_or_existing_tiles: read-only fields sent back are ignored.
        final HttpResponse<String> response = patch(eddy.personalKey(), dashboard, "{\"tiles\":["
                + "{\"id\":" + tile + ",\"color\":\"red\",\"is_cached\":true,"
                + "\"layouts\":{\"sm\":{\"x\":0,\"y\":0,\"w\":6,\"h\":5},\"xs\":{\"x\":0,\"y\":0,\"w\":1,\"h\":5}}},"
                + "{\"color\":\"blue\",\"is_cached\":true,\"text\":{\"body\":\"an example\"},\"layouts\":{}}]}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final List<JsonNode> tiles = tiles(dashboard);
        assertThat(tiles).hasSize(2);
        assertThat(tiles.get(0).get("id").asLong()).isEqualTo(tile);
        assertThat(tiles.get(0).get("color").asText()).isEqualTo("red");
        assertThat(tiles.get(0).get("layouts").get("sm").get("w").asInt()).isEqualTo(6);
        assertThat(tiles.get(0).get("layouts").get("xs").get("w").asInt()).isEqualTo(1);
        assertThat(tiles.get(0).get("insight").get("name").asText()).isEqualTo("another");
        assertThat(tiles.get(1).get("color").asText()).isEqualTo("blue");
        assertThat(tiles.get(1).get("text").get("body").asText()).isEqualTo("an example");

        patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"id\":" + tile + ",\"color\":null}]}");
        assertThat(tiles(dashboard).get(0).get("color").isNull()).as("a colour sent as null clears it").isTrue();
        assertThat(tiles(dashboard).get(0).get("layouts").get("sm").get("w").asInt()).as("layouts not sent are kept").isEqualTo(6);
    }

    @Test
    void deletedTilesLeaveTheDashboardAndTheTilesNotSentStay() {
        final long dashboard = dashboard("{\"name\":\"removals\"}");
        for (final String body : List.of("io sono testo", "soy texto", "i am text", "ich bin text")) {
            patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"text\":{\"body\":\"" + body + "\"}}]}");
        }
        final long insight = insight("{\"name\":\"on it\",\"dashboards\":[" + dashboard + "]}");
        final List<JsonNode> before = tiles(dashboard);
        final long lastText = before.get(3).get("id").asLong();
        final long insightTile = before.get(4).get("id").asLong();

        // PostHog's test_can_remove_text_tiles_from_dashboard: just the tile id and the deleted flag.
        final HttpResponse<String> response = patch(eddy.personalKey(), dashboard,
                "{\"tiles\":[{\"id\":" + lastText + ",\"deleted\":true},{\"id\":" + insightTile + ",\"deleted\":true}]}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(tiles(dashboard)).extracting(t -> t.get("text").get("body").asText())
                .containsExactly("io sono testo", "soy texto", "i am text");
        final JsonNode kept = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + insight + "/"));
        assertThat(kept.get("dashboards")).as("the insight stays, off the dashboard").isEmpty();

        patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"text\":{\"body\":\"i am a third text\"}}]}");
        assertThat(tiles(dashboard)).extracting(t -> t.get("text").get("body").asText())
                .containsExactly("io sono testo", "soy texto", "i am text", "i am a third text");
        patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"id\":" + insightTile + ",\"deleted\":false}]}");
        assertThat(tiles(dashboard)).as("deleted: false puts a tile back").hasSize(5);
    }

    @Test
    void aTileOrTextOfAnotherDashboardIsRefusedAndNothingIsWritten() {
        final long mine = dashboard("{\"name\":\"mine\"}");
        final long theirs = dashboard("{\"name\":\"theirs\"}");
        patch(eddy.personalKey(), theirs, "{\"tiles\":[{\"text\":{\"body\":\"on theirs\"}}]}");
        final JsonNode theirTile = tiles(theirs).get(0);

        final HttpResponse<String> tile = patch(eddy.personalKey(), mine,
                "{\"name\":\"renamed\",\"tiles\":[{\"id\":" + theirTile.get("id").asLong() + ",\"color\":\"red\"}]}");
        final HttpResponse<String> text = patch(eddy.personalKey(), mine,
                "{\"tiles\":[{\"text\":{\"id\":" + theirTile.get("text").get("id").asLong() + ",\"body\":\"mine now\"}}]}");
        final HttpResponse<String> noId = patch(eddy.personalKey(), mine, "{\"tiles\":[{\"color\":\"red\"}]}");

        assertThat(tile.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(tile).get("attr").asText()).isEqualTo("tiles");
        assertThat(TestEddy.json(tile).get("detail").asText()).isEqualTo("Tile " + theirTile.get("id").asLong() + " is not on this dashboard.");
        assertThat(text.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(text).get("detail").asText()).isEqualTo("Text tile not found.");
        assertThat(TestEddy.json(text).get("attr").asText()).isEqualTo("text");
        assertThat(noId.statusCode()).isEqualTo(400);
        assertThat(tiles(theirs).get(0).get("color").isNull()).isTrue();
        assertThat(tiles(theirs).get(0).get("text").get("body").asText()).isEqualTo("on theirs");
        final JsonNode unchanged = TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + mine + "/"));
        assertThat(unchanged.get("name").asText()).as("the whole PATCH is refused").isEqualTo("mine");
        assertThat(unchanged.get("tiles")).isEmpty();
        assertThat(patch(eddy.personalKey(), mine, "{\"tiles\":[{\"text\":{\"body\":\"" + "x".repeat(4001) + "\"}}]}").statusCode())
                .isEqualTo(400);
    }

    @Test
    void duplicateTilesCopiesTheInsightsAndTextCards() {
        final Source source = source();

        final JsonNode copy = TestEddy.json(create("{\"name\":\"new\",\"use_dashboard\":" + source.dashboard + ",\"duplicate_tiles\":true}"));

        assertThat(copy.get("creation_mode").asText()).isEqualTo("duplicate");
        final JsonNode tiles = copy.get("tiles");
        assertThat(tiles).hasSize(3);
        assertThat(tiles).extracting(t -> t.get("id").asLong()).doesNotContainAnyElementsOf(source.tileIds);
        final JsonNode named = tiles.get(0).get("insight");
        assertThat(named.get("id").asLong()).isNotEqualTo(source.named);
        assertThat(named.get("name").asText()).isEqualTo("the insight (Copy)");
        assertThat(named.get("short_id").asText()).hasSize(8).isNotEqualTo(source.namedShortId);
        assertThat(named.get("filters").get("events").get(0).get("id").asText()).isEqualTo("$pageview");
        assertThat(named.get("dashboards")).extracting(JsonNode::asLong).containsExactly(copy.get("id").asLong());
        assertThat(tiles.get(1).get("insight").get("name").isNull()).as("an unnamed insight's copy stays unnamed").isTrue();
        assertThat(tiles.get(2).get("text").get("id").asLong()).isNotEqualTo(source.textId);
        assertThat(tiles.get(2).get("text").get("body").asText()).isEqualTo("I AM TEXT!");
        assertThat(tiles).extracting(t -> t.get("color").asText()).containsExactly("red", "red", "red");
        assertThat(tiles).extracting(t -> t.get("layouts").get("tile_layout").asText()).containsExactly("here", "here", "here");
        final JsonNode original = TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/" + source.named + "/"));
        assertThat(original.get("dashboards")).extracting(JsonNode::asLong).containsExactly(source.dashboard);
    }

    @Test
    void duplicatingWithoutDuplicateTilesSharesTheInsightsAndTextCards() {
        final Source source = source();

        final JsonNode copy = TestEddy.json(create("{\"name\":\"new\",\"use_dashboard\":" + source.dashboard + ",\"duplicate_tiles\":false}"));

        final JsonNode tiles = copy.get("tiles");
        assertThat(tiles).hasSize(3);
        assertThat(tiles).extracting(t -> t.get("id").asLong()).doesNotContainAnyElementsOf(source.tileIds);
        assertThat(tiles.get(0).get("insight").get("id").asLong()).isEqualTo(source.named);
        assertThat(tiles.get(0).get("insight").get("name").asText()).isEqualTo("the insight");
        assertThat(tiles.get(2).get("text").get("id").asLong()).isEqualTo(source.textId);
        assertThat(tiles).extracting(t -> t.get("color").asText()).containsExactly("red", "red", "red");
        assertThat(copy.get("filters").get("date_from").asText()).as("the source's filters").isEqualTo("-14d");
    }

    @Test
    void theListFiltersByTagsAndCreationModeAndShowsPinnedFirstThenByName() {
        final long b = dashboard("{\"name\":\"b listed\",\"tags\":[\"list-kpi\"]}");
        final long a = dashboard("{\"name\":\"a listed\",\"tags\":[\"list-growth\",\"other\"]}");
        final long pinned = dashboard("{\"name\":\"z listed\",\"pinned\":true,\"tags\":[\"list-kpi\"]}");
        dashboard("{\"name\":\"untagged listed\"}");
        final long generated = dashboard("{\"name\":\"Generated Dashboard: web\",\"tags\":[\"list-kpi\"]}");
        final long copy = TestEddy.json(create("{\"name\":\"c listed\",\"use_dashboard\":" + a + "}")).get("id").asLong();

        assertThat(ids("?tags=list-kpi")).containsExactly(pinned, generated, b);
        assertThat(ids("?tags=list-kpi&tags=list-growth")).containsExactly(pinned, generated, a, b);
        assertThat(ids("?tags=list-kpi&exclude_generated=true")).containsExactly(pinned, b);
        assertThat(ids("?tags=nothing-has-this")).isEmpty();
        assertThat(ids("?creation_mode=duplicate")).contains(copy).doesNotContain(a, b, pinned);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/?tags=list-kpi&limit=1")).get("count").asInt())
                .isEqualTo(3);
    }

    /** A dashboard as PostHog's duplication tests set it up: two insights and a text card, each red, each laid out. */
    private record Source(long dashboard, List<Long> tileIds, long named, String namedShortId, long textId) {
    }

    private static Source source() {
        final long dashboard = dashboard("{\"name\":\"existing dashboard\",\"filters\":{\"date_from\":\"-14d\"}}");
        final JsonNode named = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/",
                "{\"name\":\"the insight\",\"filters\":{\"events\":[{\"id\":\"$pageview\"}]},\"dashboards\":[" + dashboard + "]}"));
        insight("{\"name\":null,\"dashboards\":[" + dashboard + "]}");
        patch(eddy.personalKey(), dashboard, "{\"tiles\":[{\"text\":{\"body\":\"I AM TEXT!\"}}]}");
        final StringBuilder layout = new StringBuilder();
        for (final JsonNode tile : tiles(dashboard)) {
            layout.append(layout.isEmpty() ? "" : ",").append("{\"id\":").append(tile.get("id").asLong())
                    .append(",\"color\":\"red\",\"layouts\":{\"tile_layout\":\"here\"}}");
        }
        patch(eddy.personalKey(), dashboard, "{\"tiles\":[" + layout + "]}");
        final List<JsonNode> tiles = tiles(dashboard);
        return new Source(dashboard, tiles.stream().map(t -> t.get("id").asLong()).toList(), named.get("id").asLong(),
                named.get("short_id").asText(), tiles.get(2).get("text").get("id").asLong());
    }

    private static List<Long> ids(final String query) {
        final List<Long> ids = new ArrayList<>();
        TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + query + (query.isEmpty() ? "?" : "&") + "limit=1000"))
                .get("results").forEach(r -> ids.add(r.get("id").asLong()));
        return ids;
    }

    private static List<JsonNode> tiles(final long dashboard) {
        final List<JsonNode> tiles = new ArrayList<>();
        TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/")).get("tiles").forEach(tiles::add);
        return tiles;
    }

    private static HttpResponse<String> patch(final String key, final long dashboard, final String body) {
        return eddy.request(key, "PATCH", "/api/projects/1/dashboards/" + dashboard + "/", body);
    }

    private static HttpResponse<String> create(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return response;
    }

    private static long dashboard(final String body) {
        return TestEddy.json(create(body)).get("id").asLong();
    }

    private static long insight(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return TestEddy.json(response).get("id").asLong();
    }
}
