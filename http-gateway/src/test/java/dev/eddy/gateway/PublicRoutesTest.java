package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.events.EventSerdes;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every public route (what SDKs, browsers and shared links call, without a personal API key) and how it refuses what
 * it cannot take, always in PostHog's {@code {type, code, detail, attr}}: no project API key, an unknown one, a body
 * that is not JSON, nested too deep or over the route's limit, a method the path does not take, a token or file that
 * names nothing. {@link #everyMountedPublicRouteHasARow} keeps the table whole. The happy paths with Kafka and the
 * stores behind them are CaptureRoutesIT's, DecideIT's and the SDK tests'.
 */
class PublicRoutesTest {
    /** Public routes outside this table: the management API's personal-key routes (ManagementRoutesTest). */
    private static final Set<String> MANAGEMENT = Set.of("GET /flags/definitions");
    private static final Set<String> ERROR_FIELDS = Set.of("type", "code", "detail", "attr");
    private static final int EVENT_BODY_BYTES = 4096;
    private static final int BATCH_BODY_BYTES = 8192;
    /** {@code /decide} and {@code /flags}' body limit ({@code DecideRoutes}). */
    private static final int FLAGS_BODY_BYTES = 1024 * 1024;
    private static final String TOO_DEEP = "[".repeat(100) + "]".repeat(100);

    private static RouteTier eddy;

    enum Kind {
        /** Takes events: {@code api_key} (or {@code token}) in the body. */
        EVENT,
        /** Takes a batch of events. */
        BATCH,
        /** Evaluates flags: {@code token} and {@code distinct_id} in the body. */
        FLAGS,
        /** Serves what a project API key in the path names. */
        BY_TOKEN,
        /** Serves a file of posthog-js or of the shared page. */
        FILE,
        /** Serves what a sharing token in the path names. */
        SHARED
    }

    /** A public route: its methods and path as mounted, the path to call ({t}: a token or name that names nothing) and its kind. */
    record Row(String methods, String mounted, String path, Kind kind) {
        @Override
        public String toString() {
            return methods + " " + mounted;
        }
    }

    static Stream<Row> routes() {
        final List<Row> rows = new ArrayList<>();
        for (final String path : List.of("/capture", "/e", "/i/v0/e", "/track", "/engage")) {
            rows.add(new Row("GET POST OPTIONS", path, path + "/", Kind.EVENT));
        }
        rows.add(new Row("GET POST OPTIONS", "/batch", "/batch/", Kind.BATCH));
        rows.add(new Row("GET HEAD POST OPTIONS", "/decide", "/decide/?v=3", Kind.FLAGS));
        rows.add(new Row("GET HEAD POST OPTIONS", "/flags", "/flags/?v=2", Kind.FLAGS));
        rows.add(new Row("GET HEAD OPTIONS", "/array/:token/config", "/array/{t}/config", Kind.BY_TOKEN));
        rows.add(new Row("GET HEAD OPTIONS", "/array/:token/config.js", "/array/{t}/config.js", Kind.BY_TOKEN));
        rows.add(new Row("GET HEAD OPTIONS", "/array/:token/array.js", "/array/{t}/array.js", Kind.BY_TOKEN));
        rows.add(new Row("GET HEAD", "/static/:file", "/static/{t}.js", Kind.FILE));
        rows.add(new Row("GET HEAD", "/static/:version/:file", "/static/1.0.0/{t}.js", Kind.FILE));
        rows.add(new Row("GET", "/static/", "/static/{t}.css", Kind.FILE));
        rows.add(new Row("GET", "/shared/:access_token", "/shared/{t}", Kind.SHARED));
        rows.add(new Row("GET", "/shared/:access_token/stream", "/shared/{t}/stream", Kind.SHARED));
        return rows.stream();
    }

    @BeforeAll
    static void start() throws Exception {
        // Unknown tokens are refused from this address hundreds of times; the limiter is PublicRoutesSecurityTest's.
        eddy = RouteTier.start(Map.of("EDDY_RATE_LIMITS_AUTH_FAILURES_BURST", "1000000",
                "EDDY_CAPTURE_MAX_EVENT_BODY_BYTES", Integer.toString(EVENT_BODY_BYTES),
                "EDDY_CAPTURE_MAX_BATCH_BODY_BYTES", Integer.toString(BATCH_BODY_BYTES)));
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void everyMountedPublicRouteHasARow() {
        final Set<String> mounted = new TreeSet<>();
        for (final Route route : eddy.routes()) {
            if (route.getPath() == null || route.methods() == null || route.getPath().startsWith("/api/")) {
                continue;
            }
            for (final HttpMethod method : route.methods()) {
                mounted.add(method.name() + " " + route.getPath());
            }
        }
        mounted.removeAll(MANAGEMENT);
        final Set<String> table = new TreeSet<>();
        routes().forEach(row -> Stream.of(row.methods().split(" ")).forEach(method -> table.add(method + " " + row.mounted())));

        assertThat(table).as("the table must list exactly the mounted public routes (add a row for a new one)").isEqualTo(mounted);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void everyRouteRefusesInOneShape(final Row row) {
        final String token = eddy.projectToken();
        switch (row.kind()) {
            case EVENT, BATCH -> {
                final String path = row.path();
                assertRefused(post(path, events(row, null)), 401, "missing_api_key");
                assertRefused(post(path, events(row, "phc_names_nothing")), 401, "invalid_api_key");
                assertRefused(post(path, "{\"api_key\":"), 400, "invalid_payload");
                assertRefused(post(path, "{\"api_key\":\"" + token + "\",\"event\":\"a\",\"distinct_id\":\"u\",\"properties\":{\"x\":"
                        + TOO_DEEP + "}}"), 400, "invalid_payload");
                final int limit = row.kind() == Kind.BATCH ? BATCH_BODY_BYTES : EVENT_BODY_BYTES;
                assertRefused(post(path, events(row, token).replace("\"u\"", "\"" + "u".repeat(limit) + "\"")), 413, "payload_too_large");
                assertRefused(call("PUT", path, "{}"), 405, "method_not_allowed");

                final int before = eddy.written("events.ingest").size();
                final HttpResponse<String> kept = post(path, events(row, token));
                assertThat(kept.statusCode()).as(kept.body()).isEqualTo(200);
                assertThat(eddy.written("events.ingest")).as("the valid event, written").hasSize(before + 1);
                assertThat(EventSerdes.capturedEvent().deserializer().deserialize("t",
                        eddy.written("events.ingest").get(before).value()).distinctId()).isEqualTo("u");
            }
            case FLAGS -> {
                final String path = row.path();
                assertRefused(post(path, "{\"distinct_id\":\"u\"}"), 401, "missing_api_key");
                assertRefused(post(path, "{\"token\":\"phc_names_nothing\",\"distinct_id\":\"u\"}"), 401, "invalid_api_key");
                assertRefused(post(path, "{\"token\":"), 400, "invalid_payload");
                assertRefused(post(path, "{\"token\":\"" + token + "\"}"), 400, "missing_distinct_id");
                assertRefused(post(path, "{\"token\":\"" + token + "\",\"distinct_id\":\"u\",\"person_properties\":{\"x\":" + TOO_DEEP
                        + "}}"), 400, "invalid_payload");
                assertRefused(post(path, "{\"token\":\"" + token + "\",\"distinct_id\":\"" + "u".repeat(FLAGS_BODY_BYTES) + "\"}"), 413,
                        "payload_too_large");
                assertRefused(call("PUT", path, "{}"), 405, "method_not_allowed");
                assertThat(post(path, "{\"token\":\"" + token + "\",\"distinct_id\":\"u\"}").statusCode()).isEqualTo(200);
            }
            case BY_TOKEN -> {
                assertRefused(call("GET", row.path().replace("{t}", "phc_names_nothing"), null), 404, "not_found");
                assertRefused(call("POST", row.path().replace("{t}", token), "{}"), 405, "method_not_allowed");
                assertThat(call("GET", row.path().replace("{t}", token), null).statusCode()).isEqualTo(200);
            }
            case FILE, SHARED -> {
                final String path = row.path().replace("{t}", "names-nothing");
                assertRefused(call("GET", path, null), 404, "not_found");
                assertRefused(call("POST", path, "{}"), 405, "method_not_allowed");
            }
            default -> throw new AssertionError(row.kind());
        }
    }

    /** One event (or a batch of one) for distinct id {@code u}, with {@code key} as its project API key (none if null). */
    private static String events(final Row row, final String key) {
        final String apiKey = key == null ? "" : "\"api_key\":\"" + key + "\",";
        return row.kind() == Kind.BATCH ? "{" + apiKey + "\"batch\":[{\"event\":\"a\",\"distinct_id\":\"u\"}]}"
                : "{" + apiKey + "\"event\":\"a\",\"distinct_id\":\"u\"}";
    }

    private static HttpResponse<String> post(final String path, final String body) {
        return call("POST", path, body);
    }

    private static HttpResponse<String> call(final String method, final String path, final String body) {
        return eddy.send(HttpRequest.newBuilder(eddy.uri(path)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build());
    }

    private static void assertRefused(final HttpResponse<String> answer, final int status, final String code) {
        final String what = answer.request().method() + " " + answer.request().uri().getPath() + ": " + answer.body();
        assertThat(answer.statusCode()).as(what).isEqualTo(status);
        assertThat(answer.headers().firstValue("Content-Type")).as(what).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        final JsonNode error = RouteTier.json(answer);
        final Set<String> fields = new TreeSet<>();
        for (final Iterator<String> it = error.fieldNames(); it.hasNext();) {
            fields.add(it.next());
        }
        assertThat(fields).as(what).isEqualTo(ERROR_FIELDS);
        assertThat(error.get("code").asText()).as(what).isEqualTo(code);
        assertThat(error.get("detail").asText()).as(what).isNotBlank();
    }
}
