package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.testing.FuzzInputs;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thousands of generated hostile requests against one running Eddy: the public capture and flag routes (malformed
 * JSON, invalid UTF-8, deep nesting, bodies past the limits, bad base64 and compression, gzip and lz64 bombs, abused
 * headers, wrong-typed fields) and the management API with a valid key (path traversal, SQL injection, NUL bytes
 * and very long strings in every path id, query parameter and filter value, regex bombs in filters). Every answer is
 * a 4xx in PostHog's error shape, or the 200 PostHog answers there; nothing is a 5xx or hangs. Afterwards the
 * instance is ready and a batch mixing valid and invalid events keeps exactly its valid ones. The seed is printed;
 * {@code -Deddy.fuzz.seed=N} replays a run.
 */
@ExtendWith(SharedInfrastructure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BadInputFuzzIT {
    /** Limits small enough that bodies past them are cheap to send. */
    private static final int EVENT_LIMIT = 64 * 1024;
    private static final int BATCH_LIMIT = 256 * 1024;
    private static final int DECODED_LIMIT = 1024 * 1024;
    private static final int DECIDE_LIMIT = 1024 * 1024;
    private static final Duration HANG = Duration.ofSeconds(20);
    private static final List<String> CAPTURE_ROUTES = List.of("/capture/", "/batch/", "/e/", "/i/v0/e/", "/track/", "/engage/");
    private static final int CASES_PER_CAPTURE_ROUTE = 250;
    private static final int CASES_PER_FLAG_ROUTE = 200;
    private static final int MANAGEMENT_CASES = 1200;
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static HttpClient http;
    private static long seed;
    private static long dashboard;
    private static long insight;
    private static final Map<String, Map<Integer, Integer>> STATUSES = new TreeMap<>();

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, stateDir, Map.of(
                "EDDY_CAPTURE_MAX_EVENT_BODY_BYTES", Integer.toString(EVENT_LIMIT),
                "EDDY_CAPTURE_MAX_BATCH_BODY_BYTES", Integer.toString(BATCH_LIMIT),
                "EDDY_CAPTURE_MAX_DECODED_BYTES", Integer.toString(DECODED_LIMIT)));
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        seed = FuzzInputs.seed("BadInputFuzzIT");
        dashboard = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"name\":\"kept\"}"))
                .get("id").asLong();
        insight = TestEddy.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/", "{\"name\":\"kept\"}"))
                .get("id").asLong();
    }

    @AfterAll
    static void stop() {
        System.out.println("BadInputFuzzIT statuses by group: " + STATUSES);
        if (eddy != null) {
            eddy.close();
        }
    }

    /** One generated request and the statuses it may get. */
    private record Case(String kind, HttpRequest request, Set<Integer> allowed) {
    }

    @Test
    @Order(1)
    void publicCaptureRoutesAnswerEveryHostileBodyWithA4xxOrTheSilent200() {
        final SplittableRandom random = new SplittableRandom(seed);
        for (final String route : CAPTURE_ROUTES) {
            final int limit = "/batch/".equals(route) ? BATCH_LIMIT : EVENT_LIMIT;
            for (int i = 0; i < CASES_PER_CAPTURE_ROUTE; i++) {
                check("capture", i, publicCase(random, route, limit, capturePayload(random)));
            }
        }
    }

    @Test
    @Order(2)
    void decideAndFlagsAnswerEveryHostileBodyWithA4xxOrFlags() {
        final SplittableRandom random = new SplittableRandom(seed + 1);
        for (final String route : List.of("/decide/?v=3", "/flags/?v=2")) {
            for (int i = 0; i < CASES_PER_FLAG_ROUTE; i++) {
                check("flags", i, publicCase(random, route, DECIDE_LIMIT, decidePayload(random)));
            }
        }
    }

    @Test
    @Order(3)
    void managementRoutesRefuseHostileIdsParametersAndFilters() {
        final SplittableRandom random = new SplittableRandom(seed + 2);
        for (int i = 0; i < MANAGEMENT_CASES; i++) {
            check("management", i, managementCase(random));
        }
        // Nothing the injection strings said was done: the project's rows are as they were.
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/dashboards/")).get("count").asInt()).isEqualTo(1);
        assertThat(TestEddy.json(eddy.getAuthorized("/api/projects/1/insights/")).get("count").asInt()).isEqualTo(1);
        assertThat(eddy.getAuthorized("/api/projects/1/dashboards/" + dashboard + "/").statusCode()).isEqualTo(200);
    }

    @Test
    @Order(4)
    void afterTheFuzzEddyIsReadyAndAMixedBatchKeepsExactlyItsValidEvents() throws Exception {
        final int distinctIds = 7;
        assertThat(eddy.get("/_health/ready", Map.of()).statusCode()).isEqualTo(200);
        final String name = "fuzz-kept-" + UUID.randomUUID();
        final SplittableRandom random = new SplittableRandom(seed + 3);
        final ArrayNode batch = NODES.arrayNode();
        final int valid = 30;
        for (int i = 0; i < valid; i++) {
            final ObjectNode good = batch.addObject().put("event", name).put("distinct_id", "kept-" + (i % distinctIds));
            // Hostile values (keys with a lone surrogate would refuse the whole request, as in PostHog).
            good.putObject("properties").put("hostile", FuzzInputs.string(random)).putArray("any").add(FuzzInputs.string(random))
                    .add(Long.MAX_VALUE).add(1e308).addNull().addObject().put("nested", FuzzInputs.string(random));
            if (i % 3 == 0) {
                good.put("timestamp", java.time.Instant.now().minusSeconds(60).toString());
            }
            batch.add(invalid(random, name, i));
        }
        final ObjectNode body = NODES.objectNode().put("api_key", eddy.projectToken());
        body.set("batch", batch);

        final HttpResponse<String> response = eddy.post("/batch/", Json.mapper().writer()
                .with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).writeValueAsString(body));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final String query = "{\"events\":[{\"id\":\"" + name + "\"}],\"date_from\":\"-1d\",\"display\":\"BoldNumber\"}";
        final long[] counted = {-1};
        eddy.waitUntil(() -> (counted[0] = count(query)) >= valid, Duration.ofSeconds(60), "the batch's valid events counted");
        // One marker per distinct id, sent after the batch was acknowledged: each is counted after that id's events,
        // so once all are, a second copy of any kept event would have been counted too.
        final ArrayNode markers = NODES.arrayNode();
        for (int id = 0; id < distinctIds; id++) {
            markers.addObject().put("event", name + "-marker").put("distinct_id", "kept-" + id);
        }
        assertThat(eddy.post("/batch/", NODES.objectNode().put("api_key", eddy.projectToken()).set("batch", markers).toString())
                .statusCode()).isEqualTo(200);
        final String markerQuery = query.replace(name, name + "-marker");
        eddy.waitUntil(() -> count(markerQuery) == distinctIds, Duration.ofSeconds(60), "the markers counted");
        assertThat(count(query)).as("valid events of the mixed batch, each once").isEqualTo(valid);
    }

    /** An event PostHog does not ingest: no name, a name that is not a string, or no usable distinct id. */
    private static ObjectNode invalid(final SplittableRandom random, final String name, final int i) {
        final ObjectNode bad = NODES.objectNode();
        switch (i % 6) {
            case 0 -> bad.put("distinct_id", "kept-0");
            case 1 -> bad.put("event", name);
            case 2 -> bad.put("event", name).put("distinct_id", "   ");
            case 3 -> bad.put("event", name).putObject("distinct_id").put("id", 1);
            case 4 -> bad.put("distinct_id", "kept-1").putArray("event").add(name);
            default -> bad.put("event", name).putNull("distinct_id").putObject("properties").putArray("distinct_id");
        }
        bad.put("junk", FuzzInputs.string(random));
        return bad;
    }

    private static long count(final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", query);
        return response.statusCode() == 200 ? TestEddy.json(response).path("result").path(0).path("aggregated_value").asLong(-1) : -1;
    }

    /** A public route's payload: events (capture) with every field of any type. */
    private static JsonNode capturePayload(final SplittableRandom random) {
        final ObjectNode envelope = NODES.objectNode().put("api_key", eddy.projectToken());
        final ArrayNode batch = envelope.putArray("batch");
        for (int n = random.nextInt(1, 4); n > 0; n--) {
            batch.add(FuzzInputs.event(random));
        }
        return random.nextBoolean() ? envelope : ((ObjectNode) batch.get(0)).put("api_key", eddy.projectToken());
    }

    /** A flags request whose every field may be of any type. */
    private static JsonNode decidePayload(final SplittableRandom random) {
        final ObjectNode body = NODES.objectNode().put("api_key", eddy.projectToken());
        for (final String field : List.of("distinct_id", "groups", "person_properties", "group_properties", "$anon_distinct_id")) {
            if (random.nextBoolean()) {
                body.set(field, FuzzInputs.value(random, 3));
            }
        }
        if (random.nextInt(3) == 0) {
            body.put("distinct_id", "fuzz-" + random.nextInt(100));
        }
        return body;
    }

    /**
     * One hostile request to a public route: {@code payload} (which the route may accept) sent as is, or broken in
     * one of many ways, each with the statuses it may get.
     */
    private static Case publicCase(final SplittableRandom random, final String route, final int limit, final JsonNode payload) {
        final byte[] json = bytes(payload);
        final Set<Integer> anyRefusal = Set.of(400, 401, 413);
        final Set<Integer> acceptedOrRefused = Set.of(200, 400, 401, 413);
        final HttpRequest.Builder post = HttpRequest.newBuilder(eddy.uri(route)).timeout(HANG);
        return switch (random.nextInt(16)) {
            case 0, 1 -> new Case("wrong-typed fields", post.POST(HttpRequest.BodyPublishers.ofByteArray(json))
                    .header("Content-Type", "application/json").build(), acceptedOrRefused);
            case 2 -> {
                final int cut = random.nextInt(0, json.length);
                yield new Case("truncated JSON", post.POST(HttpRequest.BodyPublishers.ofByteArray(java.util.Arrays.copyOf(json, cut)))
                        .header("Content-Type", "application/json").build(), Set.of(400));
            }
            case 3 -> new Case("invalid UTF-8", post.POST(HttpRequest.BodyPublishers.ofByteArray(FuzzInputs.withInvalidUtf8(random, json)))
                    .header("Content-Type", "application/json").build(), acceptedOrRefused);
            case 4 -> {
                final int depth = random.nextInt(Json.MAX_NESTING_DEPTH + 1, 20_000);
                final String deep = "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"deep\",\"distinct_id\":\"d\",\"properties\":{\"x\":"
                        + "[".repeat(depth) + "]".repeat(depth) + "}}";
                yield new Case("deep nesting", post.POST(HttpRequest.BodyPublishers.ofString(deep)).build(),
                        deep.length() > limit ? Set.of(413) : Set.of(400));
            }
            case 5 -> {
                final String huge = "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"huge\",\"distinct_id\":\"d\",\"properties\":{\"s\":\""
                        + "x".repeat(limit + random.nextInt(1, 1000)) + "\"}}";
                yield new Case("body past the limit", post.POST(HttpRequest.BodyPublishers.ofString(huge)).build(), Set.of(413));
            }
            case 6 -> {
                final StringBuilder array = new StringBuilder("{\"api_key\":\"" + eddy.projectToken()
                        + "\",\"event\":\"array\",\"distinct_id\":\"d\",\"properties\":{\"a\":[0");
                final int items = random.nextInt(1000, limit / 2 + 1000);
                array.append(",1".repeat(items)).append("]}}");
                yield new Case("huge array", post.POST(HttpRequest.BodyPublishers.ofString(array.toString())).build(),
                        array.length() > limit ? Set.of(413) : Set.of(200));
            }
            case 7 -> new Case("bad base64 field", post.header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("data=" + URLEncoder.encode("!" + FuzzInputs.string(random) + "%",
                            StandardCharsets.UTF_8))).build(), Set.of(400));
            case 8 -> {
                final String compression = FuzzInputs.pick(random, List.of("gzip", "gzip-js", "lz64", "br", "deflate", "x".repeat(500)));
                yield new Case("bad compression " + compression.substring(0, Math.min(8, compression.length())),
                        HttpRequest.newBuilder(eddy.uri(route + (route.contains("?") ? "&" : "?") + "compression=" + compression)).timeout(HANG)
                                .POST(HttpRequest.BodyPublishers.ofByteArray(FuzzInputs.bytes(random, 200))).build(), anyRefusal);
            }
            case 9 -> new Case("Content-Encoding gzip on plain bytes", post.header("Content-Encoding", "gzip")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(random.nextBoolean() ? json : FuzzInputs.bytes(random, 200))).build(), anyRefusal);
            case 10 -> new Case("gzip bomb", post.header("Content-Encoding", "gzip")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(GZIP_BOMB)).build(), Set.of(413));
            case 11 -> new Case("lz64 bomb", post.header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("compression=lz64&data=" + URLEncoder.encode(LZ64_BOMB, StandardCharsets.UTF_8)))
                    .build(), route.startsWith("/decide") || route.startsWith("/flags") ? Set.of(400, 413) : Set.of(413));
            case 12 -> headerAbuse(random, post, json);
            case 13 -> new Case("random bytes", post.POST(HttpRequest.BodyPublishers.ofByteArray(FuzzInputs.bytes(random, 400))).build(),
                    anyRefusal);
            case 14 -> new Case("hostile api_key", post.POST(HttpRequest.BodyPublishers.ofByteArray(bytes(((ObjectNode) payload.deepCopy())
                    .set("api_key", random.nextBoolean() ? NODES.textNode(FuzzInputs.string(random)) : FuzzInputs.value(random, 1)))))
                    // Past rate-limits.auth-failures unknown keys from this address are throttled.
                    .build(), Set.of(400, 401, 413, 429));
            default -> new Case("wrong method", post.method(FuzzInputs.pick(random, List.of("PUT", "DELETE", "PATCH")),
                    HttpRequest.BodyPublishers.ofByteArray(json)).build(), Set.of(404, 405));
        };
    }

    /** Huge, duplicated and odd Content-Type and Content-Encoding headers, and odd extra headers. */
    private static Case headerAbuse(final SplittableRandom random, final HttpRequest.Builder post, final byte[] json) {
        final Function<HttpRequest.Builder, HttpRequest.Builder> abuse = switch (random.nextInt(7)) {
            case 0 -> b -> b.header("Content-Type", "application/json; " + "x=".repeat(random.nextInt(1000, 6000)));
            case 1 -> b -> b.header("Content-Type", "application/json").header("Content-Type", "application/x-www-form-urlencoded");
            case 2 -> b -> b.header("Content-Encoding", "gzip").header("Content-Encoding", "identity");
            case 3 -> b -> b.header("Content-Type", FuzzInputs.pick(random, List.of("multipart/form-data; boundary=zz",
                    "application/json; charset=utf-16", "text/plain", "application/x-www-form-urlencoded; charset=latin1", "*/*", ";;;")));
            case 4 -> b -> b.header("Content-Encoding", FuzzInputs.pick(random, List.of("identity", "chunked", "gzip, br", "*", "GZIP ")));
            case 5 -> b -> b.header("X-Forwarded-For", FuzzInputs.pick(random, List.of("999.999.999.999", "::::", "1.2.3.4, evil",
                    "'; DROP TABLE x; --", "x".repeat(5000))));
            default -> b -> b.header("X-Huge", "y".repeat(random.nextInt(8_000, 70_000)));
        };
        return new Case("header abuse", abuse.apply(post).POST(HttpRequest.BodyPublishers.ofByteArray(json)).build(),
                Set.of(200, 400, 401, 413, 415, 431));
    }

    private static final byte[] GZIP_BOMB = FuzzInputs.gzipBomb(8 * DECODED_LIMIT);
    private static final String LZ64_BOMB = FuzzInputs.lz64Bomb(3000);

    /** Management routes whose path has an id; {p} is the project, {x} the hostile id. */
    private static final List<String> ID_ROUTES = List.of(
            "/api/projects/{x}/", "/api/projects/{x}/dashboards/", "/api/projects/{p}/dashboards/{x}/",
            "/api/projects/{p}/dashboards/{x}/collaborators/", "/api/projects/{p}/dashboards/{d}/collaborators/{x}/",
            "/api/projects/{p}/dashboards/{x}/sharing/", "/api/projects/{p}/dashboards/{x}/stream/", "/api/projects/{p}/insights/{x}/",
            "/api/projects/{p}/insights/{x}/activity/", "/api/projects/{p}/insights/{x}/sharing/", "/api/projects/{p}/persons/{x}/",
            "/api/projects/{p}/feature_flags/{x}/", "/api/personal_api_keys/{x}/", "/api/projects/{x}/insights/trend/");
    /** List and query routes and the parameters they read. */
    private static final Map<String, List<String>> PARAM_ROUTES = Map.of(
            "/api/projects/1/dashboards/", List.of("limit", "offset", "search"),
            "/api/projects/1/insights/", List.of("limit", "offset", "short_id", "created_by", "refresh", "format", "saved"),
            "/api/projects/1/insights/" + "{i}" + "/", List.of("refresh", "format", "from_dashboard"),
            "/api/projects/1/persons/", List.of("distinct_id", "search", "properties", "limit", "offset", "cursor"),
            "/api/projects/1/groups/find/", List.of("group_type_index", "group_key"),
            "/api/projects/1/event_counts/", List.of("event", "date_from", "date_to"),
            "/api/projects/1/insights/trend/", List.of("events", "properties", "date_from", "date_to", "interval", "breakdown", "display"),
            "/api/projects/1/insights/funnel/", List.of("events", "properties", "date_from", "funnel_window_interval", "breakdown"),
            "/api/feature_flag/local_evaluation", List.of("token", "send_cohorts"),
            "/api/projects/1/feature_flags/", List.of("limit", "offset", "search", "active"));
    private static final List<String> OPERATORS = List.of("exact", "is_not", "icontains", "regex", "not_regex", "gt", "lt", "between",
            "is_date_before", "semver_gt", "in", "bogus'; --");
    private static final List<String> REGEX_BOMBS = List.of("(a+)+$", "((a{1000}){1000}){1000}", "(a{1000}){1000}", "(.*a){25}",
            "(x+x+)+y", "([a-z]+)*$", "\\", "[", "(?<n>a)\\k<n>");

    private static Case managementCase(final SplittableRandom random) {
        final String key = eddy.personalKey();
        final Set<Integer> refused = Set.of(400, 404, 405);
        switch (random.nextInt(4)) {
            case 0 -> {
                final String route = FuzzInputs.pick(random, ID_ROUTES);
                final String id = hostileId(random);
                final String method = FuzzInputs.pick(random, List.of("GET", "GET", "PATCH", "DELETE", "POST"));
                final String path = route.replace("{p}", "1").replace("{d}", Long.toString(dashboard)).replace("{x}", id);
                final String bodyText = "{\"name\":\"" + json(FuzzInputs.string(random)) + "\"}";
                final HttpRequest.BodyPublisher body = "GET".equals(method) ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(bodyText);
                final String normalized = java.net.URI.create(path.replace("%2e", ".")).normalize().getRawPath();
                if (!normalized.equals(path.replace("%2e", "."))) {
                    // A dot segment ("..", "%2e%2e": '.' is unreserved, so the same) is removed as RFC 3986 says: the
                    // request is the one for the normalized path, with that route's own scope check; outside /api, none.
                    if (!normalized.startsWith("/api/")) {
                        return new Case("dot segments out of /api " + method, authorized(path, key).method(method, body).build(), refused);
                    }
                    final int status = send(authorized(normalized, key).method(method, body).build()).statusCode();
                    // Refused as an id, or answered as the normalized path is: never a route the path does not name.
                    return new Case("dot segments " + method, authorized(path, key).method(method, body).build(),
                            union(refused, Set.of(status)));
                }
                return new Case("hostile id " + method, authorized(path, key).method(method, body).build(), refused);
            }
            case 1 -> {
                final List<String> routes = new ArrayList<>(PARAM_ROUTES.keySet());
                routes.sort(null);
                final String template = FuzzInputs.pick(random, routes);
                final String route = template.replace("{i}", Long.toString(insight));
                final StringBuilder query = new StringBuilder("?");
                for (final String param : PARAM_ROUTES.get(template)) {
                    if (random.nextBoolean()) {
                        query.append(param).append('=').append(URLEncoder.encode(hostileValue(random), StandardCharsets.UTF_8)).append('&');
                    }
                }
                return new Case("hostile query parameters", authorized(route + query, key).GET().build(), Set.of(200, 400, 404));
            }
            case 2 -> {
                final String route = FuzzInputs.pick(random, List.of("/api/projects/1/insights/trend/", "/api/projects/1/insights/funnel/"));
                return new Case("hostile filters", authorized(route, key)
                        .POST(HttpRequest.BodyPublishers.ofString(bytesText(filterQuery(random, route.contains("funnel"))))).build(),
                        Set.of(200, 400));
            }
            default -> {
                final String route = FuzzInputs.pick(random, List.of("/api/projects/1/dashboards/" + dashboard + "/",
                        "/api/projects/1/insights/" + insight + "/"));
                final ObjectNode body = NODES.objectNode();
                for (final String field : List.of("name", "description", "filters", "tags", "deleted", "pinned", "key", "query",
                        "dashboards", "restriction_level", "rollout_percentage")) {
                    if (random.nextInt(3) == 0) {
                        body.set(field, FuzzInputs.value(random, 3));
                    }
                }
                // Writes of wrong-typed fields: refused, or stored as given; the rows stay (deleted is false).
                body.put("deleted", false);
                return new Case("wrong-typed body", authorized(route, key).method("PATCH",
                        HttpRequest.BodyPublishers.ofString(bytesText(body))).build(), Set.of(200, 400));
            }
        }
    }

    /** A trend or funnel query whose property filters carry hostile keys, values, operators and regex bombs. */
    private static JsonNode filterQuery(final SplittableRandom random, final boolean funnel) {
        final ObjectNode query = NODES.objectNode().put("date_from", "-1d");
        final ArrayNode events = query.putArray("events");
        events.addObject().put("id", FuzzInputs.pick(random, List.of("$pageview", FuzzInputs.string(random)))).put("order", 0);
        if (funnel) {
            events.addObject().put("id", FuzzInputs.string(random)).put("order", 1);
        }
        final ArrayNode properties = query.putArray("properties");
        for (int n = random.nextInt(1, 4); n > 0; n--) {
            final String operator = FuzzInputs.pick(random, OPERATORS);
            final ObjectNode filter = properties.addObject().put("key", FuzzInputs.string(random)).put("operator", operator)
                    .put("type", FuzzInputs.pick(random, List.of("event", "person", "group", "cohort", "'; --")));
            filter.set("value", operator.contains("regex") ? NODES.textNode(FuzzInputs.pick(random, REGEX_BOMBS)) : FuzzInputs.value(random, 2));
        }
        if (random.nextBoolean()) {
            query.set("breakdown", FuzzInputs.value(random, 1));
        }
        if (random.nextBoolean()) {
            query.put("date_to", FuzzInputs.string(random));
        }
        return query;
    }

    /** An id as a client might put it in a path: traversal, injection, NUL, very long, non-numeric, or huge numbers. */
    private static String hostileId(final SplittableRandom random) {
        return switch (random.nextInt(5)) {
            case 0 -> FuzzInputs.pick(random, List.of("../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%2e%2e", "..", "%00", "1%00", "1;2"));
            case 1 -> "9".repeat(random.nextInt(19, 400));
            case 2 -> FuzzInputs.pick(random, List.of("-1", "0", "1.5", "1e3", "0x1", "NaN", "@me", "00000000-0000-0000-0000-000000000000"));
            default -> URLEncoder.encode(FuzzInputs.string(random), StandardCharsets.UTF_8);
        };
    }

    private static String hostileValue(final SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> "[{\"key\":\"" + json(FuzzInputs.string(random)) + "\",\"value\":\"" + json(FuzzInputs.pick(random, REGEX_BOMBS))
                    + "\",\"operator\":\"regex\"}]";
            case 1 -> bytesText(FuzzInputs.value(random, 2));
            default -> FuzzInputs.string(random);
        };
    }

    private static HttpRequest.Builder authorized(final String path, final String key) {
        return HttpRequest.newBuilder(eddy.uri(path)).timeout(HANG).header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json");
    }

    /** Sends the case and checks its answer: an allowed status, never 5xx, no hang, 4xx in PostHog's error shape. */
    private static void check(final String group, final int index, final Case c) {
        final String what = group + " case " + index + " (" + c.kind() + ", seed " + seed + "): " + c.request().method() + " "
                + abbreviated(c.request().uri().toString());
        HttpResponse<String> response;
        try {
            try {
                response = http.send(c.request(), HttpResponse.BodyHandlers.ofString());
            } catch (final IOException e) {
                if (e instanceof HttpTimeoutException) {
                    throw e;
                }
                // The pooled connection may be one the server closed after refusing the previous request: once more.
                response = http.send(c.request(), HttpResponse.BodyHandlers.ofString());
            }
        } catch (final HttpTimeoutException e) {
            throw new AssertionError(what + " hung: no answer within " + HANG, e);
        } catch (final IOException e) {
            // A server that refuses a body past its limit may close the connection while the client still sends it.
            assertThat(c.allowed()).as(what + " closed the connection: " + e).contains(413);
            STATUSES.computeIfAbsent(group, g -> new TreeMap<>()).merge(-1, 1, Integer::sum);
            return;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        STATUSES.computeIfAbsent(group, g -> new TreeMap<>()).merge(response.statusCode(), 1, Integer::sum);
        // 414 and 431: Netty's refusal of a request line or headers past its limits, before any route.
        assertThat(response.statusCode()).as(what + " -> " + response.statusCode() + " " + abbreviated(response.body()))
                .isLessThan(500).isIn(union(c.allowed(), Set.of(414, 431)));
        if (response.statusCode() >= 400 && !response.body().isEmpty()) {
            final JsonNode error = TestEddy.json(response);
            assertThat(error.fieldNames()).toIterable().as(what).containsExactly("type", "code", "detail", "attr");
            assertThat(error.get("detail").asText()).as(what).isNotBlank();
        } else if (response.statusCode() >= 400 && !Set.of(405, 414, 431).contains(response.statusCode())) {
            throw new AssertionError(what + " answered " + response.statusCode() + " without PostHog's error body");
        }
    }

    private static HttpResponse<String> send(final HttpRequest request) {
        try {
            try {
                return http.send(request, HttpResponse.BodyHandlers.ofString());
            } catch (final IOException e) {
                // The server may close a kept-alive connection after refusing a request (an oversized or malformed one)
                // while the client reuses it for the next: asked again once, on a new connection. A request that
                // makes the server drop its connection fails both times.
                return http.send(request, HttpResponse.BodyHandlers.ofString());
            }
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Set<Integer> union(final Set<Integer> a, final Set<Integer> b) {
        final java.util.Set<Integer> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return all;
    }

    private static byte[] bytes(final JsonNode json) {
        try {
            return Json.mapper().writer().with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).writeValueAsBytes(json);
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String bytesText(final JsonNode json) {
        return new String(bytes(json), StandardCharsets.UTF_8);
    }

    /** {@code text} escaped for a JSON string literal. */
    private static String json(final String text) {
        final String quoted = NODES.textNode(text).toString();
        return quoted.substring(1, quoted.length() - 1);
    }

    private static String abbreviated(final String text) {
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }
}
