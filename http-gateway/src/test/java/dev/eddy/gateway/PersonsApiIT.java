package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.persons.PersonIds;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A browser SDK's identity sequence over HTTP against a real broker (anonymous events, identify, more events,
 * alias, group identify), then the persons and groups API over the topology's stores.
 */
class PersonsApiIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void anAnonymousVisitorWhoSignsUpIsOnePersonWithBothDistinctIds() throws Exception {
        final String anon = "0190-anon-" + UUID.randomUUID();
        final String user = "user-" + UUID.randomUUID() + "@example.com";
        final String company = "acme-" + UUID.randomUUID();
        batch(List.of(
                event(anon, "$pageview", "{\"$current_url\":\"https://shop.test/\",\"$set_once\":{\"first_page\":\"/\"}}"),
                event(anon, "$pageview", "{\"$current_url\":\"https://shop.test/pricing\"}"),
                event(user, "$identify", "{\"$anon_distinct_id\":\"" + anon + "\",\"$set\":{\"email\":\"" + user + "\",\"plan\":\"free\"}}")));
        batch(List.of(
                event(user, "purchase", "{\"amount\":42,\"$set\":{\"plan\":\"pro\"}}"),
                event(user, "$create_alias", "{\"alias\":\"crm-" + user + "\"}"),
                event(user, "$groupidentify", "{\"$group_type\":\"company\",\"$group_key\":\"" + company
                        + "\",\"$group_set\":{\"name\":\"Acme\"}}"),
                event(user, "invoice", "{\"$groups\":{\"company\":\"" + company + "\"}}")));

        // Merges settle through several command topics: wait for the final state, then check all of it.
        eddy.waitUntil(() -> {
            final JsonNode person = byDistinctId(anon);
            return person != null && person.get("distinct_ids").size() == 3
                    && person.get("properties").path("plan").asText().equals("pro");
        }, WAIT, "one person with all three distinct ids and the latest properties");

        final JsonNode person = byDistinctId(anon);
        assertThat(person.get("uuid").asText()).as("the anonymous person survives").isEqualTo(PersonIds.personUuid(1, anon));
        assertThat(person.get("id").asText()).isEqualTo(person.get("uuid").asText());
        assertThat(texts(person.get("distinct_ids"))).containsExactlyInAnyOrder(anon, user, "crm-" + user);
        assertThat(person.get("is_identified").asBoolean()).isTrue();
        assertThat(person.get("properties").get("email").asText()).isEqualTo(user);
        assertThat(person.get("properties").get("first_page").asText()).isEqualTo("/");
        assertThat(person.get("name").asText()).isEqualTo(user);
        for (final String id : List.of(user, "crm-" + user)) {
            eddy.waitUntil(() -> byDistinctId(id) != null && byDistinctId(id).get("uuid").equals(person.get("uuid")), WAIT,
                    id + " resolves to the same person");
        }

        final HttpResponse<String> byUuid = eddy.getAuthorized("/api/projects/1/persons/" + person.get("uuid").asText() + "/");
        assertThat(byUuid.statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(byUuid).get("distinct_ids")).hasSize(3);

        final JsonNode search = TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?search=" + user.substring(0, 20).toUpperCase()));
        assertThat(search.get("count").asInt()).isEqualTo(1);
        assertThat(search.get("results").get(0).get("uuid").asText()).isEqualTo(person.get("uuid").asText());

        eddy.waitUntil(() -> eddy.getAuthorized("/api/projects/1/groups/find?group_type_index=0&group_key=" + company)
                .statusCode() == 200, WAIT, "the group is readable");
        final JsonNode group = TestEddy.json(eddy.getAuthorized("/api/projects/1/groups/find?group_type_index=0&group_key=" + company));
        assertThat(group.get("group_properties").get("name").asText()).isEqualTo("Acme");
        assertThat(group.get("group_key").asText()).isEqualTo(company);
    }

    @Test
    void eventsRightAfterAnIdentifyApplyToTheMergedPersonInOrder() throws InterruptedException {
        final String anon = "race-anon-" + UUID.randomUUID();
        final String user = "race-user-" + UUID.randomUUID();
        batch(List.of(event(anon, "$pageview", "{\"$set_once\":{\"$initial_current_url\":\"/a\"}}")));
        eddy.waitUntil(() -> byDistinctId(anon) != null, WAIT, "the anonymous person exists");
        // As posthog-js sends them: the identify, then at once the next events, each with $set_once of the initial URL.
        batch(List.of(
                event(user, "$identify", "{\"$anon_distinct_id\":\"" + anon + "\",\"$set_once\":{\"$initial_current_url\":\"/c\"},"
                        + "\"$set\":{\"email\":\"" + user + "\"}}"),
                event(user, "$pageview", "{\"$set_once\":{\"$initial_current_url\":\"/b\"},\"$set\":{\"step\":1}}"),
                event(user, "$pageview", "{\"$set_once\":{\"$initial_current_url\":\"/d\"},\"$set\":{\"step\":2}}")));

        eddy.waitUntil(() -> {
            final JsonNode person = byDistinctId(user);
            return person != null && person.get("properties").path("step").asInt() == 2;
        }, WAIT, "the user's events applied");
        final JsonNode person = byDistinctId(user);
        assertThat(person.get("uuid").asText()).isEqualTo(PersonIds.personUuid(1, anon));
        assertThat(person.get("properties").get("$initial_current_url").asText()).as("set first, by the anonymous visit")
                .isEqualTo("/a");
        assertThat(person.get("properties").get("email").asText()).isEqualTo(user);
        assertThat(texts(person.get("distinct_ids"))).containsExactlyInAnyOrder(anon, user);
    }

    @Test
    void listPagesThroughTheProjectsPersonsNewestFirst() throws Exception {
        final String prefix = "page-" + UUID.randomUUID() + "-";
        final List<String> events = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            events.add(event(prefix + i, "visit", "{\"$set\":{\"name\":\"" + prefix + i + "\"}}"));
        }
        batch(events);
        eddy.waitUntil(() -> TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?search=" + prefix)).get("count").asInt() == 5,
                WAIT, "five persons");

        final JsonNode first = TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?search=" + prefix + "&limit=2"));
        assertThat(first.get("results")).hasSize(2);
        assertThat(first.get("next").asText()).contains("offset=2").contains("limit=2");
        assertThat(first.get("previous").isNull()).isTrue();
    }

    @Test
    void unknownPersonsAndGroupsAre404AndBadParametersAre400() {
        assertThat(eddy.getAuthorized("/api/projects/1/persons/" + UUID.randomUUID() + "/").statusCode()).isEqualTo(404);
        assertThat(eddy.getAuthorized("/api/projects/1/persons/not-a-uuid/").statusCode()).isEqualTo(404);
        assertThat(eddy.getAuthorized("/api/projects/1/groups/find?group_type_index=0&group_key=nope").statusCode()).isEqualTo(404);
        assertThat(eddy.getAuthorized("/api/projects/1/groups/find?group_key=x").statusCode()).isEqualTo(400);
        assertThat(eddy.getAuthorized("/api/projects/1/groups/find?group_type_index=5&group_key=x").statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?distinct_id=nobody")).get("count").asInt()).isZero();
    }

    @Test
    void anotherProjectsPersonsAreNotFoundAndAKeyIsNeeded() {
        assertThat(eddy.getAuthorized("/api/projects/999/persons/").statusCode()).isEqualTo(404);
        assertThat(eddy.get("/api/projects/1/persons/", Map.of()).statusCode()).isEqualTo(401);
    }

    private JsonNode byDistinctId(final String distinctId) {
        final HttpResponse<String> response = eddy.getAuthorized("/api/projects/1/persons/?distinct_id="
                + java.net.URLEncoder.encode(distinctId, java.nio.charset.StandardCharsets.UTF_8));
        if (response.statusCode() != 200) {
            return null;
        }
        final JsonNode results = TestEddy.json(response).get("results");
        return results.isEmpty() ? null : results.get(0);
    }

    private static List<String> texts(final JsonNode array) {
        final List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }

    private static String event(final String distinctId, final String name, final String properties) {
        return "{\"event\":\"" + name + "\",\"distinct_id\":\"" + distinctId + "\",\"uuid\":\"" + UUID.randomUUID()
                + "\",\"timestamp\":\"" + Instant.now() + "\",\"properties\":" + properties + "}";
    }

    private static void batch(final List<String> events) {
        final HttpResponse<String> response = eddy.post("/batch/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":["
                + String.join(",", events) + "]}");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    }
}
