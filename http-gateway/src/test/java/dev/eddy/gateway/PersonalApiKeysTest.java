package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Personal API keys: shown once, stored hashed, scoped, never escalated, revoked at once. */
class PersonalApiKeysTest extends RouteTest {

    @Test
    void aNewKeyIsShownOnceAndWorksWithinItsScopesUntilRevoked() {
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/",
                "{\"label\":\"ci\",\"scopes\":[\"insight:read\",\"dashboard:write\"]}");

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        final JsonNode key = TestEddy.json(created);
        final String secret = key.get("value").asText();
        assertThat(secret).startsWith("phx_");
        assertThat(key.get("mask_value").asText()).doesNotContain(secret.substring(8));
        assertThat(key.get("scopes")).extracting(JsonNode::asText).containsExactly("insight:read", "dashboard:write");

        final JsonNode listed = TestEddy.json(eddy.getAuthorized("/api/personal_api_keys/"));
        assertThat(listed).anySatisfy(k -> {
            assertThat(k.get("id").asText()).isEqualTo(key.get("id").asText());
            assertThat(k.has("value")).as("the secret is never shown again").isFalse();
        });

        assertThat(eddy.get("/api/projects/1/insights/", Map.of("Authorization", "Bearer " + secret)).statusCode()).isEqualTo(200);
        assertThat(eddy.get("/api/projects/1/dashboards/", Map.of("Authorization", "Bearer " + secret)).statusCode())
                .as("write implies read").isEqualTo(200);
        final HttpResponse<String> refused = eddy.request(secret, "POST", "/api/projects/1/insights/", "{}");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(TestEddy.json(refused).get("detail").asText()).contains("insight:write");

        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/personal_api_keys/" + key.get("id").asText() + "/", null)
                .statusCode()).isEqualTo(204);
        assertThat(eddy.get("/api/projects/1/insights/", Map.of("Authorization", "Bearer " + secret)).statusCode()).isEqualTo(401);
        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/personal_api_keys/" + key.get("id").asText() + "/", null)
                .statusCode()).isEqualTo(404);
    }

    @Test
    void aKeyCannotGrantMoreThanItHas() {
        final String limited = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/",
                "{\"label\":\"limited\",\"scopes\":[\"personal_api_key:write\",\"insight:read\"]}")).get("value").asText();

        assertThat(eddy.request(limited, "POST", "/api/personal_api_keys/", "{\"label\":\"x\",\"scopes\":[\"insight:write\"]}")
                .statusCode()).isEqualTo(403);
        assertThat(eddy.request(limited, "POST", "/api/personal_api_keys/", "{\"label\":\"x\",\"scopes\":[\"*\"]}").statusCode())
                .isEqualTo(403);
        assertThat(eddy.request(limited, "POST", "/api/personal_api_keys/", "{\"label\":\"x\",\"scopes\":[\"insight:read\"]}")
                .statusCode()).isEqualTo(201);
    }

    @Test
    void badKeyRequestsAre400() {
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/", "{\"label\":\"x\",\"scopes\":[\"insight:delete\"]}")
                .statusCode()).isEqualTo(400);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/", "{\"label\":\"x\",\"scopes\":[]}").statusCode())
                .isEqualTo(400);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/", "{\"scopes\":[\"*\"]}").statusCode())
                .isEqualTo(400);
    }

    @Test
    void idsThatNameNoKeyAre404NotADatabaseError() {
        // A NUL byte reached PostgreSQL, which refused the statement: a 500 (found by BadInputFuzzIT).
        for (final String id : new String[] {"%00", "..%2F..%2Fetc", "1%20OR%201%3D1", "00000000-0000-0000-0000-00000000000G"}) {
            assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/personal_api_keys/" + id + "/", null).statusCode())
                    .as(id).isEqualTo(404);
        }
        assertThat(eddy.get("/shared/abc%00def", Map.of()).statusCode()).isEqualTo(404);
        assertThat(eddy.request(eddy.personalKey(), "GET", "/api/projects/1/insights/?short_id=a%00b", null).statusCode()).isEqualTo(400);
    }
}
