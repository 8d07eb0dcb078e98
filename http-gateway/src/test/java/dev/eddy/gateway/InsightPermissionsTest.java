package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TestUsers;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Insight access derived from its dashboards, per caller, as PostHog's {@code UserInsightPermissions} and
 * {@code CanEditInsight} derive it (cases from PostHog's {@code ee/api/test/test_insight.py}), and who may change a
 * dashboard's restriction level. The bootstrap key is the organization's owner; {@code member} is a plain member,
 * {@code admin} an organization admin.
 */
class InsightPermissionsTest extends RouteTest {
    private static final String CAN_EDIT_INSIGHT = "This insight is on a dashboard that can only be edited by its owner, team members "
            + "invited to editing the dashboard, and project admins.";
    private static TestUsers.TestUser member;
    private static TestUsers.TestUser admin;

    @BeforeAll
    static void setUp() throws Exception {
        member = TestUsers.member(eddy.config().pg(), 1, "*");
        admin = TestUsers.member(eddy.config().pg(), 8, "*");
    }

    @Test
    void anInsightOnNoDashboardHasNoRestrictions() {
        final JsonNode insight = json(send(member.key(), "POST", "/api/projects/1/insights/", "{\"name\":\"not on a dashboard\"}"));

        assertThat(insight.get("effective_restriction_level").asInt()).isEqualTo(21);
        assertThat(insight.get("effective_privilege_level").asInt()).isEqualTo(37);
        assertThat(insight.get("user_access_level").asText()).as("its creator").isEqualTo("manager");
        assertThat(json(get(eddy.personalKey(), "/api/projects/1/insights/" + insight.get("id").asLong() + "/"))
                .get("user_access_level").asText()).as("an organization owner").isEqualTo("manager");
    }

    @Test
    void anInsightOnARestrictedDashboardIsReadOnlyForAMemberWhoMayNotEditIt() {
        final long restricted = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"locked\",\"restriction_level\":37}");
        final long insight = create(eddy.personalKey(), "/api/projects/1/insights/", "{\"name\":\"XYZ\",\"dashboards\":[" + restricted + "]}");
        final String path = "/api/projects/1/insights/" + insight + "/";

        final JsonNode seen = json(get(member.key(), path));
        assertThat(seen.get("effective_restriction_level").asInt()).isEqualTo(37);
        assertThat(seen.get("effective_privilege_level").asInt()).isEqualTo(21);
        assertThat(seen.get("user_access_level").asText()).isEqualTo("editor");
        final HttpResponse<String> refused = send(member.key(), "PATCH", path, "{\"name\":\"ABC\"}");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(json(refused).get("detail").asText()).isEqualTo(CAN_EDIT_INSIGHT);
        assertThat(json(refused).get("code").asText()).isEqualTo("permission_denied");
        assertThat(send(member.key(), "PATCH", path, "{\"deleted\":true}").statusCode()).as("nor delete it").isEqualTo(403);
        assertThat(json(get(member.key(), path)).get("name").asText()).isEqualTo("XYZ");

        final JsonNode listed = json(get(member.key(), "/api/projects/1/insights/?short_id=" + seen.get("short_id").asText()));
        assertThat(listed.get("results").get(0).get("effective_privilege_level").asInt()).as("in lists too").isEqualTo(21);
        final JsonNode tile = json(get(member.key(), "/api/projects/1/dashboards/" + restricted + "/")).get("tiles").get(0).get("insight");
        assertThat(tile.get("effective_privilege_level").asInt()).as("and on the dashboard's tiles").isEqualTo(21);

        for (final String key : new String[] {eddy.personalKey(), admin.key()}) {
            final JsonNode editor = json(get(key, path));
            assertThat(editor.get("effective_restriction_level").asInt()).isEqualTo(37);
            assertThat(editor.get("effective_privilege_level").asInt()).as("the dashboard's creator, an admin").isEqualTo(37);
        }
        assertThat(send(admin.key(), "PATCH", path, "{\"name\":\"by an admin\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void anEditCollaboratorOfTheDashboardMayChangeItsInsights() {
        final long restricted = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"team\",\"restriction_level\":37}");
        final long insight = create(eddy.personalKey(), "/api/projects/1/insights/", "{\"name\":\"shared\",\"dashboards\":[" + restricted + "]}");
        assertThat(send(eddy.personalKey(), "POST", "/api/projects/1/dashboards/" + restricted + "/collaborators/",
                "{\"user_uuid\":\"" + member.uuid() + "\",\"level\":37}").statusCode()).isEqualTo(201);

        final String path = "/api/projects/1/insights/" + insight + "/";
        assertThat(json(get(member.key(), path)).get("effective_privilege_level").asInt()).isEqualTo(37);
        assertThat(send(member.key(), "PATCH", path, "{\"name\":\"renamed by a collaborator\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void anInsightOnARestrictedAndAnOpenDashboardIsEditableThroughTheOpenOne() {
        final long restricted = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"r\",\"restriction_level\":37}");
        final long open = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"o\"}");
        final long insight = create(eddy.personalKey(), "/api/projects/1/insights/",
                "{\"name\":\"both\",\"dashboards\":[" + restricted + "," + open + "]}");
        final String path = "/api/projects/1/insights/" + insight + "/";

        final JsonNode seen = json(get(member.key(), path));
        assertThat(seen.get("effective_restriction_level").asInt()).isEqualTo(37);
        assertThat(seen.get("effective_privilege_level").asInt()).isEqualTo(37);
        assertThat(send(member.key(), "PATCH", path, "{\"description\":\"edited\"}").statusCode()).isEqualTo(200);

        final HttpResponse<String> leaving = send(member.key(), "PATCH", path, "{\"dashboards\":[" + open + "]}");
        assertThat(leaving.statusCode()).as("taking it off the restricted one").isEqualTo(403);
        assertThat(json(leaving).get("detail").asText()).isEqualTo("You don't have permission to remove insights from dashboard: " + restricted);
        assertThat(json(get(member.key(), path)).get("dashboards")).extracting(JsonNode::asLong).containsExactly(restricted, open);
    }

    @Test
    void aMemberCannotPutAnInsightOnADashboardItMayNotEdit() {
        final long restricted = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"no\",\"restriction_level\":37}");
        final long mine = create(member.key(), "/api/projects/1/insights/", "{\"name\":\"starts on no dashboard\"}");

        final HttpResponse<String> adding = send(member.key(), "PATCH", "/api/projects/1/insights/" + mine + "/",
                "{\"dashboards\":[" + restricted + "]}");
        assertThat(adding.statusCode()).isEqualTo(403);
        assertThat(json(adding).get("detail").asText()).isEqualTo("You don't have permission to add insights to dashboard: " + restricted);
        assertThat(json(get(member.key(), "/api/projects/1/insights/" + mine + "/")).get("dashboards")).isEmpty();
        final HttpResponse<String> creating = send(member.key(), "POST", "/api/projects/1/insights/",
                "{\"name\":\"straight onto it\",\"dashboards\":[" + restricted + "]}");
        assertThat(creating.statusCode()).as("nor when creating one").isEqualTo(403);

        assertThat(send(admin.key(), "PATCH", "/api/projects/1/insights/" + mine + "/", "{\"dashboards\":[" + restricted + "]}")
                .statusCode()).as("an admin may").isEqualTo(200);
    }

    @Test
    void onlyTheDashboardsCreatorAndAdminsChangeItsRestrictionLevel() {
        final long dashboard = create(eddy.personalKey(), "/api/projects/1/dashboards/", "{\"name\":\"open to all\"}");
        final String path = "/api/projects/1/dashboards/" + dashboard + "/";

        assertThat(send(member.key(), "PATCH", path, "{\"name\":\"members edit it\"}").statusCode()).isEqualTo(200);
        final HttpResponse<String> refused = send(member.key(), "PATCH", path, "{\"restriction_level\":37}");
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(json(refused).get("detail").asText()).isEqualTo("Only the dashboard owner and project admins have the restriction "
                + "rights required to change the dashboard's restriction level.");
        assertThat(json(get(member.key(), path)).get("restriction_level").asInt()).isEqualTo(21);

        assertThat(send(admin.key(), "PATCH", path, "{\"restriction_level\":37}").statusCode()).isEqualTo(200);
        assertThat(send(eddy.personalKey(), "PATCH", path, "{\"restriction_level\":21}").statusCode()).as("its creator").isEqualTo(200);
        final long own = create(member.key(), "/api/projects/1/dashboards/", "{\"name\":\"the member's\"}");
        assertThat(send(member.key(), "PATCH", "/api/projects/1/dashboards/" + own + "/", "{\"restriction_level\":37}").statusCode())
                .as("a member restricts its own").isEqualTo(200);
    }

    private static long create(final String key, final String path, final String body) {
        final HttpResponse<String> response = send(key, "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return json(response).get("id").asLong();
    }

    private static JsonNode json(final HttpResponse<String> response) {
        return TestEddy.json(response);
    }

    private static HttpResponse<String> get(final String key, final String path) {
        return eddy.request(key, "GET", path, null);
    }

    private static HttpResponse<String> send(final String key, final String method, final String path, final String body) {
        return eddy.request(key, method, path, body);
    }
}
