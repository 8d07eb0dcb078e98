package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.FuzzInputs;
import dev.eddy.gateway.testing.TestEddy;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The requests PostHog's SDKs send, byte for byte as their sources build them (paths with and without the trailing
 * slash, headers, encodings, body shapes and the field names each uses), answered as PostHog answers them and, for
 * capture, each event counted once. What the SDKs that run here do is also tested by running them
 * ({@code PostHogJsBrowserIT}, {@code PostHogNodeSdkIT}, {@code PostHogJsLiteSdkIT}, {@code PostHogJavaSdkIT}); these
 * cover the rest, read from their sources (docs/api.md, "SDK compatibility").
 */
class SdkWireFormatsIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String FLAG = "wire-flag";

    @BeforeAll
    static void flag() throws InterruptedException {
        final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"" + FLAG + "\",\"filters\":{\"groups\":[{\"properties\":[],\"rollout_percentage\":100}],"
                        + "\"payloads\":{\"true\":\"{\\\"tier\\\":1}\"}}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        eddy.waitUntil(() -> flags(post("/flags/?v=2", "application/json", Map.of(),
                utf8("{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"x\"}"))).path(FLAG).path("enabled").asBoolean(false),
                WAIT, "the flag is served");
    }

    @Test
    void everySdksCaptureRequestIsAcceptedAndCountedOnce() throws Exception {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final Map<String, HttpResponse<String>> answers = new LinkedHashMap<>();
        // posthog-js, fetch with gzip (after its remote config said gzip-js): text/plain, no compression parameter.
        answers.put("js-gzip", post("/e/", "text/plain", Map.of(), FuzzInputs.gzip(utf8(batch(run, "js-gzip", true)))));
        // posthog-js without gzip (no remote config yet, or sendBeacon's fallback): a base64 form.
        answers.put("js-base64", post("/i/v0/e/?compression=base64", "application/x-www-form-urlencoded", Map.of(),
                utf8("data=" + URLEncoder.encode(base64(batch(run, "js-base64", true)), StandardCharsets.UTF_8))));
        // posthog-js with compression off: JSON.
        answers.put("js-json", post("/i/v0/e/", "application/json", Map.of(), utf8(batch(run, "js-json", true))));
        // posthog-android, posthog-ios, posthog-flutter, @posthog/core (node): /batch without the slash, gzip announced.
        answers.put("mobile", post("/batch", "application/json; charset=utf-8", Map.of("Content-Encoding", "gzip"),
                FuzzInputs.gzip(utf8(batch(run, "mobile", true)))));
        // posthog-go with gzip: announced twice, no sent_at.
        answers.put("go", post("/batch/?compression=gzip", "application/json", Map.of("Content-Encoding", "gzip"),
                FuzzInputs.gzip(utf8("{\"api_key\":\"" + eddy.projectToken() + "\",\"historical_migration\":false,\"batch\":["
                        + event(run, "go") + "]}"))));
        // posthog-ruby (gzip by default) and posthog-php: {api_key, batch}, PHP's timestamps with microseconds.
        answers.put("ruby", post("/batch/", "application/json", Map.of("Content-Encoding", "gzip"),
                FuzzInputs.gzip(utf8(batch(run, "ruby", false)))));
        answers.put("php", post("/batch/", "application/json", Map.of(), utf8("{\"batch\":[{\"event\":\"wire php " + run
                + "\",\"properties\":{\"$lib\":\"posthog-php\"},\"distinct_id\":\"wire-php\",\"groups\":[],"
                + "\"timestamp\":\"2026-11-24T10:00:00.123456+00:00\",\"uuid\":\"" + UUID.randomUUID() + "\"}],\"api_key\":\""
                + eddy.projectToken() + "\"}")));
        // posthog-dotnet's identify: one event on /capture without the slash.
        answers.put("dotnet", post("/capture", "application/json", Map.of(), utf8("{\"event\":\"wire dotnet " + run
                + "\",\"distinct_id\":\"wire-dotnet\",\"properties\":{\"$lib\":\"posthog-dotnet\"},\"api_key\":\""
                + eddy.projectToken() + "\",\"timestamp\":\"" + Instant.now() + "\"}")));
        // Old posthog-js: GET with base64 data and its clock in _.
        answers.put("legacy-get", eddy.send(HttpRequest.newBuilder(eddy.uri("/e/?ver=1.30.0&_=" + System.currentTimeMillis()
                + "&data=" + URLEncoder.encode(base64(batch(run, "legacy-get", false)), StandardCharsets.UTF_8))).GET().build()));

        answers.forEach((sdk, answer) -> assertThat(answer.statusCode()).as(sdk + ": " + answer.body()).isEqualTo(200));
        final Map<String, Long> expected = new HashMap<>();
        answers.keySet().forEach(sdk -> expected.put("wire " + sdk + " " + run, 1L));
        eddy.waitUntil(() -> eddy.eventCounts().entrySet().containsAll(expected.entrySet()), WAIT,
                () -> "counts " + expected + ", got " + eddy.eventCounts());
    }

    @Test
    void everySdksFlagsRequestGetsItsFlags() {
        final String token = eddy.projectToken();
        // posthog-js: base64 form before it knows gzip is accepted, gzip text/plain after.
        final String js = "{\"token\":\"" + token + "\",\"distinct_id\":\"js\",\"groups\":{},\"$anon_distinct_id\":\"anon\","
                + "\"person_properties\":{\"$lib\":\"web\"},\"timezone\":\"Europe/Paris\",\"sent_at\":\"" + Instant.now() + "\"}";
        assertEnabled("js-base64", post("/flags/?v=2&compression=base64", "application/x-www-form-urlencoded", Map.of(),
                utf8("data=" + URLEncoder.encode(base64(js), StandardCharsets.UTF_8))));
        assertEnabled("js-gzip", post("/flags/?v=2", "text/plain", Map.of(), FuzzInputs.gzip(utf8(js))));
        // posthog-android and posthog-server: gzip announced by Content-Encoding, api_key.
        final String android = "{\"api_key\":\"" + token + "\",\"distinct_id\":\"android\",\"timezone\":\"UTC\",\"groups\":{},"
                + "\"group_properties\":{},\"geoip_disable\":false}";
        assertEnabled("android", post("/flags/?v=2", "application/json; charset=utf-8", Map.of("Content-Encoding", "gzip"),
                FuzzInputs.gzip(utf8(android))));
        // posthog-ios: no slash before the query.
        assertEnabled("ios", post("/flags?v=2", "application/json; charset=utf-8", Map.of(), utf8(android)));
        // posthog-ruby: the key as token, the flags named.
        assertEnabled("ruby", post("/flags/?v=2", "application/json", Map.of(), utf8("{\"distinct_id\":\"ruby\",\"groups\":{},"
                + "\"person_properties\":{},\"group_properties\":{},\"flag_keys_to_evaluate\":[\"" + FLAG + "\"],\"token\":\"" + token + "\"}")));

        // @posthog/core (posthog-react-native): with config=true, the configuration comes along, as in remote config.
        final JsonNode core = TestEddy.json(post("/flags/?v=2&config=true", "application/json", Map.of(), utf8(js)));
        assertThat(core.get("flags").get(FLAG).get("enabled").asBoolean()).isTrue();
        assertThat(core.get("supportedCompression").toString()).isEqualTo("[\"gzip\",\"gzip-js\"]");
        assertThat(core.get("sessionRecording").asBoolean(true)).isFalse();
        assertThat(core.get("surveys").asBoolean(true)).isFalse();
        assertThat(core.get("analytics").get("endpoint").asText()).isEqualTo("/i/v0/e/");
        // Without v and config, PostHog answers v2 with the configuration.
        final JsonNode bare = TestEddy.json(post("/flags/", "application/json", Map.of(), utf8(js)));
        assertThat(bare.get("flags").get(FLAG).get("enabled").asBoolean()).isTrue();
        assertThat(bare.has("supportedCompression")).isTrue();
        // v=2 alone: the flags only.
        assertThat(TestEddy.json(post("/flags/?v=2", "application/json", Map.of(), utf8(js))).has("supportedCompression")).isFalse();

        // disable_flags: the configuration without evaluating anything; flag_keys restricts the answer.
        final JsonNode disabled = TestEddy.json(post("/flags/?v=2&config=true", "application/json", Map.of(),
                utf8(js.replace("\"groups\":{}", "\"groups\":{},\"disable_flags\":true"))));
        assertThat(disabled.get("flags").size()).isZero();
        assertThat(disabled.has("supportedCompression")).isTrue();
        final JsonNode none = TestEddy.json(post("/flags/?v=2", "application/json", Map.of(),
                utf8(js.replace("\"groups\":{}", "\"groups\":{},\"flag_keys\":[\"another\"]"))));
        assertThat(none.get("flags").size()).isZero();

        // GET evaluates nothing; HEAD is a 200.
        final HttpResponse<String> get = eddy.send(HttpRequest.newBuilder(eddy.uri("/flags/?v=2")).GET().build());
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(get).get("flags").size()).isZero();
        assertThat(eddy.send(HttpRequest.newBuilder(eddy.uri("/flags/")).method("HEAD", HttpRequest.BodyPublishers.noBody())
                .build()).statusCode()).isEqualTo(200);
    }

    @Test
    void remoteConfigIsServedAsPostHogServesItWithCorsAndCaching() {
        final String token = eddy.projectToken();
        final HttpResponse<String> config = eddy.get("/array/" + token + "/config", Map.of("Origin", "https://site.example"));
        assertThat(config.statusCode()).isEqualTo(200);
        assertThat(config.headers().firstValue("Access-Control-Allow-Origin")).contains("https://site.example");
        assertThat(config.headers().firstValue("Content-Type")).contains("application/json");
        assertThat(config.headers().firstValue("Cache-Control")).hasValueSatisfying(c -> assertThat(c).startsWith("public, max-age="));
        final JsonNode body = TestEddy.json(config);
        assertThat(body.get("token").asText()).isEqualTo(token);
        assertThat(body.get("hasFeatureFlags").asBoolean()).as("the project has an active flag").isTrue();
        for (final String off : List.of("sessionRecording", "heatmaps", "surveys", "capturePerformance", "autocaptureExceptions",
                "captureDeadClicks", "conversations", "productTours")) {
            assertThat(body.get(off).asBoolean(true)).as(off).isFalse();
        }
        assertThat(body.get("supportedCompression").toString()).isEqualTo("[\"gzip\",\"gzip-js\"]");
        assertThat(body.get("siteApps")).isEmpty();
        final String etag = config.headers().firstValue("ETag").orElseThrow();
        assertThat(eddy.get("/array/" + token + "/config", Map.of("If-None-Match", etag)).statusCode()).isEqualTo(304);

        final HttpResponse<String> script = eddy.get("/array/" + token + "/config.js", Map.of());
        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.headers().firstValue("Content-Type")).contains("application/javascript");
        assertThat(script.body()).contains("window._POSTHOG_REMOTE_CONFIG['" + token + "'] = {")
                .contains("\"hasFeatureFlags\":true").contains("siteApps: []");
        final HttpResponse<String> bundle = eddy.get("/array/" + token + "/array.js", Map.of());
        assertThat(bundle.statusCode()).isEqualTo(200);
        assertThat(bundle.body()).startsWith(eddy.get("/static/array.js", Map.of()).body()).endsWith(script.body());

        // An unknown token is a 404 the browser can read (CORS on it), a malformed one a 400.
        final HttpResponse<String> unknown = eddy.get("/array/phc_nobodyHasThisToken/config", Map.of("Origin", "https://site.example"));
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.headers().firstValue("Access-Control-Allow-Origin")).contains("https://site.example");
        assertThat(eddy.get("/array/bad%22token/config.js", Map.of()).statusCode()).isEqualTo(400);
    }

    @Test
    void posthogJsBundlesAreServedLikePostHogsAssetHost() {
        final HttpResponse<String> array = eddy.get("/static/array.js", Map.of("Origin", "https://site.example"));
        assertThat(array.statusCode()).isEqualTo(200);
        assertThat(array.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/javascript"));
        assertThat(array.headers().firstValue("Access-Control-Allow-Origin")).contains("*");
        assertThat(array.body()).contains("posthog").hasSizeGreaterThan(100_000);
        // posthog-js asks for its extensions by version first, then without.
        final HttpResponse<String> versioned = eddy.get("/static/1.449.2/surveys.js", Map.of());
        assertThat(versioned.statusCode()).isEqualTo(200);
        assertThat(versioned.headers().firstValue("Cache-Control")).hasValueSatisfying(c -> assertThat(c).contains("immutable"));
        assertThat(eddy.get("/static/surveys.js?v=1.300.0", Map.of()).statusCode()).isEqualTo(200);
        assertThat(eddy.get("/static/not-a-bundle.js", Map.of()).statusCode()).isEqualTo(404);
    }

    @Test
    void localEvaluationAnswersOnEveryPathTheServerSdksUse() {
        final Map<String, String> bearer = Map.of("Authorization", "Bearer " + eddy.personalKey());
        for (final String path : List.of(
                "/flags/definitions?send_cohorts=true&token=" + eddy.projectToken(),
                "/flags/definitions?send_cohorts&token=" + eddy.projectToken(),
                "/api/feature_flag/local_evaluation/?token=" + eddy.projectToken() + "&send_cohorts",
                "/api/feature_flag/local_evaluation?token=" + eddy.projectToken())) {
            final HttpResponse<String> answer = eddy.get(path, bearer);
            assertThat(answer.statusCode()).as(path + ": " + answer.body()).isEqualTo(200);
            final List<String> keys = new java.util.ArrayList<>();
            TestEddy.json(answer).get("flags").forEach(f -> keys.add(f.get("key").asText()));
            assertThat(keys).as(path).contains(FLAG);
        }
    }

    private static void assertEnabled(final String sdk, final HttpResponse<String> answer) {
        assertThat(answer.statusCode()).as(sdk + ": " + answer.body()).isEqualTo(200);
        assertThat(flags(answer).path(FLAG).path("enabled").asBoolean(false)).as(sdk + ": " + answer.body()).isTrue();
    }

    private static JsonNode flags(final HttpResponse<String> answer) {
        return answer.statusCode() == 200 ? TestEddy.json(answer).path("flags") : TestEddy.json(answer);
    }

    /** {@code {api_key, batch: [one event], sent_at?}} as the SDKs batch. */
    private static String batch(final String run, final String sdk, final boolean sentAt) {
        return "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":[" + event(run, sdk) + "]"
                + (sentAt ? ",\"sent_at\":\"" + Instant.now() + "\"" : "") + "}";
    }

    private static String event(final String run, final String sdk) {
        return "{\"event\":\"wire " + sdk + " " + run + "\",\"distinct_id\":\"wire-" + sdk + "\",\"properties\":{\"$lib\":\""
                + sdk + "\"},\"timestamp\":\"" + Instant.now() + "\",\"uuid\":\"" + UUID.randomUUID() + "\"}";
    }

    private static HttpResponse<String> post(final String path, final String contentType, final Map<String, String> headers,
                                             final byte[] body) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(eddy.uri(path)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(request::header);
        return eddy.send(request.build());
    }


    private static byte[] utf8(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String base64(final String text) {
        return Base64.getEncoder().encodeToString(utf8(text));
    }
}
