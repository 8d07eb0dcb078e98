package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What browsers and abusive clients meet on the public routes: CORS as PostHog's capture answers it (any origin, its
 * requested headers, credentials) and none on the management API; the per-token limit of {@code /decide} and
 * {@code /flags} with small limits (burst 5, 1 a second); capture never refused by rate; unknown tokens throttled per
 * address. A route tier of its own, since the limits are its configuration.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PublicRoutesSecurityTest {
    private static final String ORIGIN = "https://shop.example.com";
    private static final int FLAGS_BURST = 5;
    private static final int AUTH_FAILURE_BURST = 8;

    private static RouteTier eddy;

    @BeforeAll
    static void start() throws Exception {
        eddy = RouteTier.start(Map.of(
                "EDDY_RATE_LIMITS_FLAGS_ENABLED", "true", "EDDY_RATE_LIMITS_FLAGS_BURST", Integer.toString(FLAGS_BURST),
                "EDDY_RATE_LIMITS_FLAGS_REQUESTS_PER_SECOND", "1",
                "EDDY_RATE_LIMITS_AUTH_FAILURES_BURST", Integer.toString(AUTH_FAILURE_BURST),
                "EDDY_RATE_LIMITS_AUTH_FAILURES_REFILL_EVERY", "60s"));
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/capture/", "/batch/", "/e/", "/i/v0/e/", "/track/", "/engage/", "/decide/?v=3", "/flags/?v=2"})
    @Order(1)
    void publicRoutesAnswerABrowsersPreflightForAnyOriginAndHeader(final String path) {
        // posthog-js sends Content-Type; old SDKs and proxies send headers of their own.
        final HttpResponse<String> preflight = preflight(path, "POST", "content-type,x-custom-proxy-header");

        assertThat(preflight.statusCode()).isIn(200, 204);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin")).contains(ORIGIN);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Credentials")).contains("true");
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Methods").orElseThrow()).contains("POST");
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Headers").orElseThrow().toLowerCase(java.util.Locale.ROOT))
                .contains("content-type", "x-custom-proxy-header");
    }

    @Test
    @Order(1)
    void aCrossOriginCaptureIsAnsweredWithTheOriginAllowed() {
        final HttpResponse<String> captured = eddy.send(HttpRequest.newBuilder(eddy.uri("/e/"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"cors\",\"distinct_id\":\"c\"}"))
                .header("Origin", ORIGIN).header("Content-Type", "application/json").build());

        assertThat(captured.statusCode()).isEqualTo(200);
        assertThat(captured.headers().firstValue("Access-Control-Allow-Origin")).contains(ORIGIN);
        assertThat(captured.headers().firstValue("Access-Control-Allow-Credentials")).contains("true");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/api/projects/", "/api/projects/1/dashboards/", "/api/personal_api_keys/", "/api/feature_flag/local_evaluation/"})
    @Order(1)
    void theManagementApiAllowsNoCrossOriginCall(final String path) {
        final HttpResponse<String> preflight = preflight(path, "GET", "authorization");
        final HttpResponse<String> call = eddy.get(path, Map.of("Origin", ORIGIN, "Authorization", "Bearer " + eddy.personalKey()));

        assertThat(preflight.statusCode()).as("a preflight is no success").isGreaterThanOrEqualTo(400);
        for (final HttpResponse<String> response : List.of(preflight, call)) {
            assertThat(response.headers().map().keySet())
                    .as("no CORS header on " + response.request().method())
                    .noneMatch(name -> name.toLowerCase(java.util.Locale.ROOT).startsWith("access-control-"));
        }
    }

    @Test
    @Order(2)
    void aTokenPastItsFlagsRateGets429WithRetryAfterAndOtherTokensDoNot() {
        final String decide = "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"rate\"}";
        final String otherToken = RouteTier.json(eddy.request(eddy.personalKey(), "POST", "/api/projects/", "{\"name\":\"B\"}"))
                .get("api_token").asText();
        final String other = "{\"token\":\"" + otherToken + "\",\"distinct_id\":\"rate\"}";
        // Burst 5, one more a second: a few may have refilled while the requests run, never 5 more.
        int answered = 0;
        HttpResponse<String> limited = null;
        for (int i = 0; i < FLAGS_BURST + 3 && limited == null; i++) {
            final HttpResponse<String> response = eddy.post(i % 2 == 0 ? "/decide/?v=3" : "/flags/?v=2", decide);
            if (response.statusCode() == 429) {
                limited = response;
            } else {
                assertThat(response.statusCode()).as(response.body()).isNotIn(401, 403, 404);
                answered++;
            }
        }

        assertThat(answered).isBetween(FLAGS_BURST, FLAGS_BURST + 2);
        assertThat(limited).as("the request past the burst").isNotNull();
        assertThat(limited.headers().firstValue("Retry-After")).contains("1");
        assertThat(RouteTier.json(limited).get("type").asText()).isEqualTo("validation_error");
        assertThat(RouteTier.json(limited).get("code").asText()).isEqualTo("rate_limit_exceeded");
        assertThat(eddy.post("/flags/?v=2", other).statusCode()).as("another token is not limited").isNotIn(401, 429);
        assertThat(eddy.meter("eddy.flags.rate_limited")).as("refusals counted").isGreaterThanOrEqualTo(1);
    }

    @Test
    @Order(2)
    void captureIsNeverRefusedByRate() {
        for (int i = 0; i < 3 * FLAGS_BURST; i++) {
            final HttpResponse<String> captured = eddy.post("/e/", "{\"api_key\":\"" + eddy.projectToken()
                    + "\",\"event\":\"burst\",\"distinct_id\":\"hot\"}");
            assertThat(captured.statusCode()).as("event %d", i).isEqualTo(200);
        }
    }

    @Test
    @Order(3)
    void unknownTokensAreThrottledPerAddressButAValidTokenStillCaptures() {
        int unauthorized = 0;
        HttpResponse<String> last = null;
        for (int i = 0; i < AUTH_FAILURE_BURST + 2; i++) {
            last = eddy.post(i % 2 == 0 ? "/e/" : "/decide/?v=3", "{\"api_key\":\"phc_guess" + i + "\",\"event\":\"x\",\"distinct_id\":\"x\"}");
            if (last.statusCode() == 401) {
                unauthorized++;
            }
        }

        assertThat(unauthorized).isEqualTo(AUTH_FAILURE_BURST);
        assertThat(last.statusCode()).isEqualTo(429);
        assertThat(last.headers().firstValue("Retry-After")).contains("60");
        assertThat(RouteTier.json(last).get("type").asText()).isEqualTo("throttled_error");
        assertThat(eddy.get("/api/projects/", Map.of("Authorization", "Bearer phx_guessedPersonalKeyThatIsWrong")).statusCode())
                .as("one limiter for the management routes too").isEqualTo(429);
        assertThat(eddy.post("/e/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"kept\",\"distinct_id\":\"x\"}").statusCode())
                .as("a valid token from the same address is never held back").isEqualTo(200);
    }

    private static HttpResponse<String> preflight(final String path, final String method, final String headers) {
        return eddy.send(HttpRequest.newBuilder(eddy.uri(path))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", ORIGIN)
                .header("Access-Control-Request-Method", method)
                .header("Access-Control-Request-Headers", headers)
                .build());
    }
}
