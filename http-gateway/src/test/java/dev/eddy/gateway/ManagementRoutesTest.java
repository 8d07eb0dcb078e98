package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.auth.ApiKeys;
import dev.eddy.gateway.testing.TestUsers;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every management route against every kind of caller, and a check that the table below is every management route
 * the running router has mounted (a route added without a row fails {@link #everyMountedManagementRouteHasARow}):
 * no key, a malformed header, a key that does not exist and a revoked key are 401; a key without the route's scope
 * is 403 naming it; a key of a user outside the project's organization and a key scoped to another project are 404
 * (or 403) with an error body and nothing of the project in it; the right key is not 401, 403 or 404. And how each
 * answers what it refuses ({@link #everyRouteRefusesInOneShape}): an unknown project, an object that does not exist, a
 * body that is not JSON or too large, a method the path does not take; always PostHog's {@code {type, code, detail, attr}}.
 *
 * <p>On the {@link RouteTier} (routes and PostgreSQL, no Kafka): routes that read the Streams stores answer the right key
 * 503 {@code no_streams_instance}, which they reach only past authorization; their answers are tested on a whole Eddy
 * (InsightQueriesIT, PersonsApiIT, ...). Its own limiter: hundreds of failed authentications come from this address.
 */
class ManagementRoutesTest {
    private static final String P = "/api/projects/:project_id";
    /** Routes outside {@code /api/} that personal API keys authenticate. */
    private static final Set<String> PERSONAL_KEY_ROUTES_OUTSIDE_API = Set.of("/flags/definitions");
    /** Management routes open to anyone, as PostHog's: the API schema. */
    private static final Set<String> PUBLIC = Set.of("GET /api/schema");
    private static final Set<String> ERROR_FIELDS = Set.of("type", "code", "detail", "attr");
    /** A row's placeholder for an object of project 1. */
    private static final java.util.regex.Pattern OBJECT = java.util.regex.Pattern.compile("\\{(d|i|f|a|c|fx)}");
    /** The management API's body limit ({@code GatewayRoutes}), and the cohorts' (a CSV of members may be sent). */
    private static final int API_BODY_BYTES = 1024 * 1024;
    private static final int COHORT_BODY_BYTES = 16 * 1024 * 1024;
    /** DELETE on a dashboard or an insight: 405 without a body, whatever the id (the API description's rule). */
    private static final Set<String> HARD_DELETE_REFUSED = Set.of("DELETE " + P + "/dashboards/:id", "DELETE " + P + "/insights/:id");

    private static RouteTier eddy;
    private static TestUsers.TestUser noScopes;
    private static TestUsers.TestUser outsider;
    private static String otherProjectKey;
    private static String revokedKey;
    private static long dashboard;
    private static long insight;
    private static long flag;
    private static long action;
    private static long cohort;
    /** Strings only project 1's objects contain: none may reach a caller who may not see the project. */
    private static List<String> projectData;

    /**
     * One route: its method and path as mounted, the path to call ({d} dashboard, {i} insight, {f} flag, {a} action, {c} cohort, {t} the
     * project's token, {u} a member's uuid; {k} a new key of the admin, {fx} a new flag, {n} a new name, made for each call), the scope
     * it needs, the body, and its kind.
     */
    record Row(String method, String mounted, String path, String scope, String body, Kind kind) {
        @Override
        public String toString() {
            return method + " " + mounted;
        }
    }

    enum Kind {
        /** Names project 1: outsiders get 404 (or 403) and nothing of it. */
        PROJECT,
        /**
         * Names project 1 and reads the Streams stores: past authorization it reaches them, which on the route tier answer
         * 503 {@code no_streams_instance} (no streams instance runs there).
         */
        STORE_READ,
        /** Names project 1, and may rightly answer 404 to its own key (an id that names nothing). */
        PROJECT_MAY_BE_ABSENT,
        /** A Server-Sent Events stream of project 1. */
        PROJECT_STREAM,
        /** The caller's own account (its user, keys, projects): any caller with the scope gets an answer, about itself only. */
        ACCOUNT
    }

    static Stream<Row> routes() {
        final String templateBody = "{\"template\":{\"template_name\":\"t\",\"tiles\":[]}}";
        return Stream.of(
                new Row("GET", "/api/projects", "/api/projects/", "project:read", null, Kind.ACCOUNT),
                new Row("POST", "/api/projects", "/api/projects/", "project:write", "{\"name\":\"matrix new\"}", Kind.ACCOUNT),
                new Row("GET", P, "/api/projects/1/", "project:read", null, Kind.PROJECT),
                new Row("PATCH", P, "/api/projects/1/", "project:write", "{}", Kind.PROJECT),
                new Row("GET", "/api/users/@me", "/api/users/@me/", "user:read", null, Kind.ACCOUNT),
                new Row("GET", "/api/personal_api_keys", "/api/personal_api_keys/", "personal_api_key:read", null, Kind.ACCOUNT),
                new Row("POST", "/api/personal_api_keys", "/api/personal_api_keys/", "personal_api_key:write",
                        "{\"label\":\"m\",\"scopes\":[\"insight:read\"]}", Kind.ACCOUNT),
                // Another user's key: see anotherUsersKeyCannotBeRevoked.
                new Row("DELETE", "/api/personal_api_keys/:id", "/api/personal_api_keys/{k}/", "personal_api_key:write", null, Kind.ACCOUNT),
                new Row("POST", P + "/insights/trend", "/api/projects/1/insights/trend/", "insight:read",
                        "{\"events\":[{\"id\":\"$pageview\"}]}", Kind.STORE_READ),
                new Row("GET", P + "/insights/trend", "/api/projects/1/insights/trend/?events=" + query("[{\"id\":\"$pageview\"}]"), "insight:read", null,
                        Kind.STORE_READ),
                new Row("POST", P + "/insights/funnel", "/api/projects/1/insights/funnel/", "insight:read",
                        "{\"events\":[{\"id\":\"a\"},{\"id\":\"b\"}]}", Kind.STORE_READ),
                new Row("GET", P + "/insights/funnel", "/api/projects/1/insights/funnel/?events=" + query("[{\"id\":\"a\"},{\"id\":\"b\"}]"), "insight:read",
                        null, Kind.STORE_READ),
                new Row("POST", P + "/insights/funnel/correlation", "/api/projects/1/insights/funnel/correlation/", "insight:read",
                        "{\"events\":[{\"id\":\"a\"},{\"id\":\"b\"}]}", Kind.STORE_READ),
                new Row("GET", P + "/insights/funnel/correlation", "/api/projects/1/insights/funnel/correlation/?events="
                        + query("[{\"id\":\"a\"},{\"id\":\"b\"}]"), "insight:read", null, Kind.STORE_READ),
                new Row("POST", P + "/insights/retention", "/api/projects/1/insights/retention/", "insight:read", "{}", Kind.STORE_READ),
                new Row("GET", P + "/insights/retention", "/api/projects/1/insights/retention/?period=Week", "insight:read", null, Kind.STORE_READ),
                new Row("POST", P + "/insights/path", "/api/projects/1/insights/path/", "insight:read", "{}", Kind.STORE_READ),
                new Row("GET", P + "/insights/path", "/api/projects/1/insights/path/?step_limit=3", "insight:read", null, Kind.STORE_READ),
                new Row("GET", P + "/event_counts", "/api/projects/1/event_counts/", "insight:read", null, Kind.STORE_READ),
                new Row("GET", P + "/persons", "/api/projects/1/persons/", "person:read", null, Kind.STORE_READ),
                new Row("GET", P + "/persons/trends", "/api/projects/1/persons/trends/?entity_id=%24pageview&entity_type=events", "person:read", null,
                        Kind.STORE_READ),
                new Row("GET", P + "/persons/stickiness", "/api/projects/1/persons/stickiness/?stickiness_days=1&events="
                        + query("[{\"id\":\"$pageview\"}]"), "person:read", null, Kind.STORE_READ),
                new Row("GET", P + "/persons/retention", "/api/projects/1/persons/retention/?selected_interval=0", "person:read", null,
                        Kind.STORE_READ),
                new Row("GET", P + "/persons/funnel", "/api/projects/1/persons/funnel/?funnel_step=1&events="
                        + query("[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1}]"), "person:read", null, Kind.STORE_READ),
                new Row("POST", P + "/persons/funnel", "/api/projects/1/persons/funnel/", "person:read",
                        "{\"funnel_step\":-2,\"events\":[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1}]}", Kind.STORE_READ),
                new Row("GET", P + "/persons/funnel/correlation", "/api/projects/1/persons/funnel/correlation/?funnel_correlation_person_converted=true"
                        + "&funnel_correlation_person_entity=" + query("{\"id\":\"c\",\"type\":\"events\"}") + "&events="
                        + query("[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1}]"), "person:read", null, Kind.STORE_READ),
                new Row("POST", P + "/persons/funnel/correlation", "/api/projects/1/persons/funnel/correlation/", "person:read",
                        "{\"funnel_correlation_person_converted\":\"false\",\"funnel_correlation_person_entity\":{\"id\":\"c\"},"
                        + "\"events\":[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1}]}", Kind.STORE_READ),
                new Row("GET", P + "/persons/lifecycle", "/api/projects/1/persons/lifecycle/?target_date=-1d&lifecycle_type=new&events="
                        + query("[{\"id\":\"$pageview\"}]"), "person:read", null, Kind.STORE_READ),
                new Row("GET", P + "/persons/:uuid", "/api/projects/1/persons/" + UUID.randomUUID() + "/", "person:read", null,
                        Kind.STORE_READ),
                new Row("GET", P + "/groups/find", "/api/projects/1/groups/find/?group_type_index=0&group_key=x", "person:read", null,
                        Kind.STORE_READ),
                new Row("GET", P + "/dashboards", "/api/projects/1/dashboards/", "dashboard:read", null, Kind.PROJECT),
                new Row("POST", P + "/dashboards", "/api/projects/1/dashboards/", "dashboard:write", "{\"name\":\"x\"}", Kind.PROJECT),
                new Row("POST", P + "/dashboards/create_from_template_json", "/api/projects/1/dashboards/create_from_template_json/",
                        "dashboard:write", templateBody, Kind.PROJECT),
                new Row("PATCH", P + "/dashboards/:id/move_tile", "/api/projects/1/dashboards/{d}/move_tile/", "dashboard:write",
                        "{\"tile\":{\"id\":999999},\"toDashboard\":{d}}", Kind.PROJECT_MAY_BE_ABSENT),
                new Row("GET", P + "/dashboards/:id", "/api/projects/1/dashboards/{d}/", "dashboard:read", null, Kind.PROJECT),
                new Row("PATCH", P + "/dashboards/:id", "/api/projects/1/dashboards/{d}/", "dashboard:write", "{}", Kind.PROJECT),
                new Row("DELETE", P + "/dashboards/:id", "/api/projects/1/dashboards/{d}/", "dashboard:write", null, Kind.PROJECT),
                new Row("GET", P + "/dashboards/:id/stream", "/api/projects/1/dashboards/{d}/stream/", "dashboard:read", null,
                        Kind.PROJECT_STREAM),
                new Row("GET", P + "/dashboards/:dashboard_id/collaborators", "/api/projects/1/dashboards/{d}/collaborators/",
                        "dashboard:read", null, Kind.PROJECT),
                new Row("POST", P + "/dashboards/:dashboard_id/collaborators", "/api/projects/1/dashboards/{d}/collaborators/",
                        "dashboard:write", "{\"user_uuid\":\"{u}\",\"level\":37}", Kind.PROJECT),
                new Row("DELETE", P + "/dashboards/:dashboard_id/collaborators/:user_uuid",
                        "/api/projects/1/dashboards/{d}/collaborators/{u}/", "dashboard:write", null, Kind.PROJECT_MAY_BE_ABSENT),
                new Row("GET", P + "/dashboards/:id/sharing", "/api/projects/1/dashboards/{d}/sharing/", "sharing_configuration:read", null,
                        Kind.PROJECT),
                new Row("PATCH", P + "/dashboards/:id/sharing", "/api/projects/1/dashboards/{d}/sharing/", "sharing_configuration:write",
                        "{}", Kind.PROJECT),
                new Row("POST", P + "/dashboards/:id/sharing/refresh", "/api/projects/1/dashboards/{d}/sharing/refresh/",
                        "sharing_configuration:write", null, Kind.PROJECT),
                new Row("GET", P + "/insights/:id/sharing", "/api/projects/1/insights/{i}/sharing/", "sharing_configuration:read", null,
                        Kind.PROJECT),
                new Row("PATCH", P + "/insights/:id/sharing", "/api/projects/1/insights/{i}/sharing/", "sharing_configuration:write", "{}",
                        Kind.PROJECT),
                new Row("POST", P + "/insights/:id/sharing/refresh", "/api/projects/1/insights/{i}/sharing/refresh/",
                        "sharing_configuration:write", null, Kind.PROJECT),
                new Row("GET", P + "/activity_log", "/api/projects/1/activity_log/", "activity_log:read", null, Kind.PROJECT),
                new Row("GET", P + "/insights/activity", "/api/projects/1/insights/activity/", "activity_log:read", null, Kind.PROJECT),
                new Row("GET", P + "/insights/my_last_viewed", "/api/projects/1/insights/my_last_viewed/", "insight:read", null, Kind.PROJECT),
                new Row("POST", P + "/insights/cancel", "/api/projects/1/insights/cancel/", "insight:read", "{\"client_query_id\":\"q1\"}",
                        Kind.PROJECT),
                // Bodies the route does not read (the two refreshes, viewed) are not parsed, as in PostHog: rows without one.
                new Row("POST", P + "/query", "/api/projects/1/query/", "query:read", "{\"query\":{\"kind\":\"TrendsQuery\","
                        + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}]}}", Kind.STORE_READ),
                new Row("GET", P + "/query/:query_id", "/api/projects/1/query/q1/", "query:read", null, Kind.PROJECT_MAY_BE_ABSENT),
                new Row("DELETE", P + "/query/:query_id", "/api/projects/1/query/q1/", "query:read", null, Kind.PROJECT),
                new Row("POST", P + "/insights/timing", "/api/projects/1/insights/timing/", "insight:read",
                        "{\"type\":\"insight_load\",\"context\":\"insight\",\"time_to_see_data_ms\":120}", Kind.PROJECT),
                new Row("POST", P + "/insights/:id/viewed", "/api/projects/1/insights/{i}/viewed/", "insight:read", null, Kind.PROJECT),
                new Row("GET", P + "/insights", "/api/projects/1/insights/", "insight:read", null, Kind.PROJECT),
                new Row("POST", P + "/insights", "/api/projects/1/insights/", "insight:write", "{}", Kind.PROJECT),
                new Row("GET", P + "/insights/:id/activity", "/api/projects/1/insights/{i}/activity/", "activity_log:read", null, Kind.PROJECT),
                new Row("GET", P + "/insights/:id", "/api/projects/1/insights/{i}/", "insight:read", null, Kind.PROJECT),
                new Row("PATCH", P + "/insights/:id", "/api/projects/1/insights/{i}/", "insight:write", "{}", Kind.PROJECT),
                new Row("DELETE", P + "/insights/:id", "/api/projects/1/insights/{i}/", "insight:write", null, Kind.PROJECT),
                new Row("GET", P + "/feature_flags", "/api/projects/1/feature_flags/", "feature_flag:read", null, Kind.PROJECT),
                new Row("POST", P + "/feature_flags", "/api/projects/1/feature_flags/", "feature_flag:write",
                        "{\"key\":\"matrix-created-{n}\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":10}]}}", Kind.PROJECT),
                new Row("GET", P + "/feature_flags/:id", "/api/projects/1/feature_flags/{f}/", "feature_flag:read", null, Kind.PROJECT),
                new Row("PATCH", P + "/feature_flags/:id", "/api/projects/1/feature_flags/{f}/", "feature_flag:write", "{}", Kind.PROJECT),
                new Row("DELETE", P + "/feature_flags/:id", "/api/projects/1/feature_flags/{fx}/", "feature_flag:write", null, Kind.PROJECT),
                new Row("GET", "/api/feature_flag/local_evaluation", "/api/feature_flag/local_evaluation/?token={t}", "feature_flag:read", null,
                        Kind.PROJECT),
                new Row("GET", P + "/actions", "/api/projects/1/actions/", "action:read", null, Kind.PROJECT),
                new Row("POST", P + "/actions", "/api/projects/1/actions/", "action:write", "{\"name\":\"matrix-created-{n}\"}", Kind.PROJECT),
                new Row("GET", P + "/actions/:id", "/api/projects/1/actions/{a}/", "action:read", null, Kind.PROJECT),
                new Row("PATCH", P + "/actions/:id", "/api/projects/1/actions/{a}/", "action:write", "{}", Kind.PROJECT),
                new Row("DELETE", P + "/actions/:id", "/api/projects/1/actions/{a}/", "action:write", null, Kind.PROJECT),
                new Row("GET", P + "/cohorts", "/api/projects/1/cohorts/", "cohort:read", null, Kind.PROJECT),
                new Row("POST", P + "/cohorts", "/api/projects/1/cohorts/", "cohort:write", "{\"name\":\"matrix-{n}\",\"is_static\":true}", Kind.PROJECT),
                new Row("GET", P + "/cohorts/:id", "/api/projects/1/cohorts/{c}/", "cohort:read", null, Kind.PROJECT),
                new Row("PATCH", P + "/cohorts/:id", "/api/projects/1/cohorts/{c}/", "cohort:write", "{}", Kind.PROJECT),
                new Row("DELETE", P + "/cohorts/:id", "/api/projects/1/cohorts/{c}/", "cohort:write", null, Kind.PROJECT),
                new Row("GET", P + "/cohorts/:id/persons", "/api/projects/1/cohorts/{c}/persons/", "cohort:read", null, Kind.STORE_READ),
                new Row("PATCH", P + "/cohorts/:id/add_persons_to_static_cohort", "/api/projects/1/cohorts/{c}/add_persons_to_static_cohort/",
                        "cohort:write", "{\"person_ids\":[\"" + UUID.randomUUID() + "\"]}", Kind.STORE_READ),
                new Row("PATCH", P + "/cohorts/:id/remove_person_from_static_cohort", "/api/projects/1/cohorts/{c}/remove_person_from_static_cohort/",
                        "cohort:write", "{\"person_id\":\"" + UUID.randomUUID() + "\"}", Kind.STORE_READ),
                new Row("GET", "/flags/definitions", "/flags/definitions?token={t}", "feature_flag:read", null, Kind.PROJECT));
    }

    @BeforeAll
    static void setUp() throws Exception {
        // Each row fails authentication four times from this address; the limiter is tested in AuthThrottlingTest.
        eddy = RouteTier.start(Map.of("EDDY_RATE_LIMITS_AUTH_FAILURES_BURST", "1000000"));
        noScopes = TestUsers.member(eddy.config().pg(), 15, "other:read");
        outsider = TestUsers.outsider(eddy.config().pg(), "*");
        final String marker = "matrix-" + UUID.randomUUID().toString().substring(0, 8);
        dashboard = created("/api/projects/1/dashboards/", "{\"name\":\"" + marker + "-dashboard\"}");
        insight = created("/api/projects/1/insights/", "{\"name\":\"" + marker + "-insight\"}");
        flag = newFlag(marker + "-flag");
        action = created("/api/projects/1/actions/", "{\"name\":\"" + marker + "-action\",\"steps\":[{\"event\":\"$pageview\"}]}");
        cohort = created("/api/projects/1/cohorts/", "{\"name\":\"" + marker + "-cohort\",\"is_static\":true}");
        projectData = List.of(marker, eddy.projectToken());

        final long other = created("/api/projects/", "{\"name\":\"B\"}");
        otherProjectKey = newKey("{\"label\":\"B only\",\"scopes\":[\"*\"],\"scoped_teams\":[" + other + "]}").get("value").asText();
        final JsonNode revoked = newKey("{\"label\":\"revoked\",\"scopes\":[\"*\"]}");
        revokedKey = revoked.get("value").asText();
        assertThat(eddy.request(eddy.personalKey(), "DELETE", "/api/personal_api_keys/" + revoked.get("id").asText() + "/", null)
                .statusCode()).isEqualTo(204);
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    /** Every mounted management path with the methods it takes. */
    private static Map<String, Set<String>> mountedMethods() {
        final Map<String, Set<String>> mounted = new java.util.TreeMap<>();
        for (final Route route : eddy.routes()) {
            final String path = route.getPath();
            if (path == null || route.methods() == null || route.methods().isEmpty()
                    || !(path.startsWith("/api/") || PERSONAL_KEY_ROUTES_OUTSIDE_API.contains(path))) {
                // Paths without methods are steps every request takes (body limits, authentication, validation).
                continue;
            }
            for (final HttpMethod method : route.methods()) {
                mounted.computeIfAbsent(path, p -> new TreeSet<>()).add(method.name());
            }
        }
        return mounted;
    }

    @Test
    void everyMountedManagementRouteHasARow() {
        final Set<String> mounted = new TreeSet<>();
        mountedMethods().forEach((path, methods) -> methods.forEach(method -> mounted.add(method + " " + path)));
        final Set<String> table = new TreeSet<>(PUBLIC);
        routes().forEach(row -> table.add(row.toString()));

        assertThat(mounted).as("mounted management routes").hasSizeGreaterThan(40);
        assertThat(table).as("the table must list exactly the mounted routes (add a row for a new one)").isEqualTo(mounted);
    }

    @Test
    void theApiSchemaIsPublic() {
        assertThat(eddy.get("/api/schema/", Map.of()).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void everyRouteChecksKeyScopeAndProject(final Row row) throws Exception {

        assertThat(call(row, Optional.empty()).status()).as("no key").isEqualTo(401);
        for (final String header : List.of("Basic dXNlcjpwYXNz", "Bearer not-a-personal-key", "Bearer " + ApiKeys.newPersonalKey(),
                "Bearer " + revokedKey, "Bearer", "Bearer " + eddy.projectToken())) {
            final Answer refused = call(row, Optional.of(header));
            assertThat(refused.status()).as(header).isEqualTo(401);
            assertThat(refused.json().get("type").asText()).isEqualTo("authentication_error");
        }

        final Answer unscoped = call(row, Optional.of("Bearer " + noScopes.key()));
        assertThat(unscoped.status()).as("without " + row.scope() + ": " + unscoped.body()).isEqualTo(403);
        assertThat(unscoped.json().get("detail").asText()).contains(row.scope());

        for (final String stranger : List.of(outsider.key(), otherProjectKey)) {
            final Answer foreign = call(row, Optional.of("Bearer " + stranger));
            if (row.kind() == Kind.ACCOUNT) {
                assertThat(foreign.status()).as(foreign.body()).isLessThan(500);
            } else {
                assertThat(foreign.status()).as("a key that may not see project 1: " + foreign.body()).isIn(403, 404);
                assertThat(fieldNames(foreign.json())).as("an error and nothing else").isEqualTo(ERROR_FIELDS);
            }
            assertThat(foreign.body()).as("nothing of project 1").doesNotContain(projectData);
        }

        final Answer allowed = call(row, Optional.of("Bearer " + eddy.personalKey()));
        if (row.kind() == Kind.STORE_READ) {
            assertThat(allowed.status()).as(allowed.body()).isEqualTo(503);
            assertThat(allowed.json().get("code").asText()).isEqualTo("no_streams_instance");
            return;
        }
        if (row.kind() == Kind.PROJECT_MAY_BE_ABSENT) {
            assertThat(allowed.status()).as(allowed.body()).isNotIn(401, 403);
        } else {
            assertThat(allowed.status()).as(allowed.body()).isNotIn(401, 403, 404);
        }
        assertThat(allowed.status()).as(allowed.body()).isLessThan(500);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void everyRouteRefusesInOneShape(final Row row) throws Exception {
        final Optional<String> admin = Optional.of("Bearer " + eddy.personalKey());
        final boolean stream = row.kind() == Kind.PROJECT_STREAM;
        final String body = row.body() == null ? null : resolve(row.body());
        if (row.path().startsWith("/api/projects/1/")) {
            for (final String project : List.of("999999", "abc")) {
                assertRefused(send(row.method(), resolve(row.path()).replace("/api/projects/1/", "/api/projects/" + project + "/"), body,
                        admin, stream), 404, "not_found", "project " + project);
            }
        }
        final java.util.regex.Matcher object = OBJECT.matcher(row.path());
        if (object.find()) {
            for (final String id : List.of("999999999", "x")) {
                final Answer absent = send(row.method(), resolve(object.replaceFirst(id)), body, admin, stream);
                if (HARD_DELETE_REFUSED.contains(row.toString())) {
                    assertThat(absent.status()).as("always refused, as PostHog does").isEqualTo(405);
                    assertThat(absent.body()).as("405 without a body").isEmpty();
                } else {
                    assertRefused(absent, 404, "not_found", "object " + id);
                }
            }
        }
        if (row.body() != null) {
            final String path = resolve(row.path());
            assertRefused(send(row.method(), path, "{\"name\":", admin, stream), 400, "parse_error", "not JSON");
            assertRefused(send(row.method(), path, "[1]", admin, stream), 400, "invalid_input", "not an object");
            final int limit = row.mounted().startsWith(P + "/cohorts") ? COHORT_BODY_BYTES : API_BODY_BYTES;
            assertRefused(send(row.method(), path, "x".repeat(limit + 1), admin, stream), 413, "payload_too_large", "over the body limit");
        }
        final Set<String> methods = mountedMethods().get(row.mounted());
        for (final String method : List.of("PUT", "PATCH", "DELETE", "POST")) {
            if (!methods.contains(method)) {
                assertRefused(send(method, resolve(row.path()), null, admin, stream), 405, "method_not_allowed", method);
                break;
            }
        }
    }

    @Test
    void anotherUsersKeyCannotBeRevoked() {
        final JsonNode key = newKey("{\"label\":\"kept\",\"scopes\":[\"project:read\"]}");
        final HttpResponse<String> revoked = eddy.request(outsider.key(), "DELETE", "/api/personal_api_keys/" + key.get("id").asText() + "/", null);

        assertThat(revoked.statusCode()).isEqualTo(404);
        assertThat(eddy.request(key.get("value").asText(), "GET", "/api/projects/1/", null).statusCode()).as("still valid").isEqualTo(200);
    }

    @Test
    void aKeyScopedToOneProjectNeverSeesAnother() {
        final long other = created("/api/projects/", "{\"name\":\"B\"}");
        final long otherDashboard = created("/api/projects/" + other + "/dashboards/", "{\"name\":\"secret of B\"}");
        final String onlyA = newKey("{\"label\":\"A only\",\"scopes\":[\"dashboard:read\",\"project:read\"],\"scoped_teams\":[1]}")
                .get("value").asText();

        assertThat(eddy.request(onlyA, "GET", "/api/projects/" + other + "/dashboards/", null).statusCode()).isEqualTo(404);
        final HttpResponse<String> byId = eddy.request(onlyA, "GET", "/api/projects/" + other + "/dashboards/" + otherDashboard + "/", null);
        assertThat(byId.statusCode()).isEqualTo(404);
        assertThat(byId.body()).doesNotContain("secret of B");
        assertThat(eddy.request(onlyA, "GET", "/api/projects/1/dashboards/" + otherDashboard + "/", null).statusCode())
                .as("B's dashboard id under A's path").isEqualTo(404);
        assertThat(RouteTier.json(eddy.request(onlyA, "GET", "/api/projects/", null)).get("count").asInt()).isEqualTo(1);
        assertThat(eddy.request(onlyA, "GET", "/api/projects/1/dashboards/", null).statusCode()).isEqualTo(200);
    }

    private static String resolve(final String template) {
        String path = template.replace("{d}", Long.toString(dashboard)).replace("{i}", Long.toString(insight))
                .replace("{f}", Long.toString(flag)).replace("{a}", Long.toString(action)).replace("{c}", Long.toString(cohort))
                .replace("{t}", eddy.projectToken())
                .replace("{u}", noScopes.uuid().toString());
        path = path.replace("{n}", UUID.randomUUID().toString().substring(0, 8));
        if (path.contains("{fx}")) {
            path = path.replace("{fx}", Long.toString(newFlag("matrix-doomed-" + UUID.randomUUID().toString().substring(0, 8))));
        }
        if (path.contains("{k}")) {
            path = path.replace("{k}", newKey("{\"label\":\"doomed\",\"scopes\":[\"insight:read\"]}").get("id").asText());
        }
        return path;
    }

    private static String query(final String value) {
        return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    record Answer(int status, String body, String contentType) {
        JsonNode json() {
            try {
                return dev.eddy.serde.Json.mapper().readTree(body);
            } catch (final IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }
    }

    /** Calls a route; a stream's answer is its status and no body (its events would never end). */
    private static Answer call(final Row row, final Optional<String> authorization) throws Exception {
        // Objects a row deletes are made anew for each caller: one that may delete them does not spoil the next.
        return send(row.method(), resolve(row.path()), row.body() == null ? null : resolve(row.body()), authorization,
                row.kind() == Kind.PROJECT_STREAM);
    }

    private static Answer send(final String method, final String path, final String body, final Optional<String> authorization,
                               final boolean stream) throws Exception {
        final HttpRequest.Builder request = HttpRequest.newBuilder(eddy.uri(path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        authorization.ifPresent(value -> request.header("Authorization", value));
        final HttpResponse<InputStream> response = eddy.http().send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = response.body()) {
            if (stream && response.statusCode() == 200) {
                return new Answer(200, "", "text/event-stream");
            }
            return new Answer(response.statusCode(), new String(in.readAllBytes(), StandardCharsets.UTF_8),
                    response.headers().firstValue("Content-Type").orElse(""));
        }
    }

    /** Asserts PostHog's error answer: {@code status}, JSON, exactly its four fields, {@code code}. */
    private static void assertRefused(final Answer answer, final int status, final String code, final String what) {
        assertThat(answer.status()).as(what + ": " + answer.body()).isEqualTo(status);
        assertThat(answer.contentType()).as(what).startsWith("application/json");
        assertThat(fieldNames(answer.json())).as(what + ": " + answer.body()).isEqualTo(ERROR_FIELDS);
        assertThat(answer.json().get("code").asText()).as(what + ": " + answer.body()).isEqualTo(code);
        assertThat(answer.json().get("detail").asText()).as(what).isNotBlank();
    }

    private static Set<String> fieldNames(final JsonNode node) {
        final Set<String> names = new TreeSet<>();
        for (final Iterator<String> it = node.fieldNames(); it.hasNext();) {
            names.add(it.next());
        }
        return names;
    }

    private static long created(final String path, final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", path, body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return RouteTier.json(response).get("id").asLong();
    }

    private static long newFlag(final String key) {
        return created("/api/projects/1/feature_flags/",
                "{\"key\":\"" + key + "\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":10}]}}");
    }

    private static JsonNode newKey(final String body) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/personal_api_keys/", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return RouteTier.json(response);
    }
}
