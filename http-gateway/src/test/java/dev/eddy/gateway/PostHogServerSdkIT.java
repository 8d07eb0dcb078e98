package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.posthog.server.PostHog;
import com.posthog.server.PostHogCaptureOptions;
import com.posthog.server.PostHogConfig;
import com.posthog.server.PostHogFeatureFlagOptions;
import com.posthog.server.PostHogInterface;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostHog's current Java server SDK ({@code com.posthog:posthog-server}), unmodified, against Eddy: it captures,
 * identifies, aliases and joins a group through gzipped {@code /batch} requests, asks {@code /flags/?v=2} for flags and
 * payloads, and evaluates them locally from {@code /api/feature_flag/local_evaluation/}; what it sends is counted once
 * and what it evaluates equals {@code /decide}.
 */
class PostHogServerSdkIT extends EddyIT {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @BeforeAll
    static void flags() throws InterruptedException {
        for (final String body : List.of(
                "{\"key\":\"jvm-pro\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}],"
                        + "\"payloads\":{\"true\":\"{\\\"seats\\\":5}\"}}}",
                "{\"key\":\"jvm-abc\",\"filters\":{\"groups\":[{\"properties\":[]}],\"multivariate\":{\"variants\":["
                        + "{\"key\":\"a\",\"rollout_percentage\":34},{\"key\":\"b\",\"rollout_percentage\":33},{\"key\":\"c\",\"rollout_percentage\":33}]}}}")) {
            final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", body);
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        }
        eddy.waitUntil(() -> decide("anyone").has("jvm-abc"), WAIT, "the flags are served");
    }

    @Test
    void theServerSdkCapturesOnceAndItsRemoteAndLocalFlagsAgreeWithDecide() throws Exception {
        final String run = UUID.randomUUID().toString().substring(0, 8);
        final String user = "jvm-" + run;
        final PostHogInterface posthog = PostHog.with(PostHogConfig.Companion.builder(eddy.projectToken())
                .host("http://127.0.0.1:" + eddy.eddy().port()).flushAt(1).build());
        posthog.capture(user + "-anon", "jvm visit " + run);
        posthog.identify(user, Map.of("plan", "pro", "email", user + "@example.com"));
        posthog.alias(user, user + "-anon");
        posthog.group(user, "company", "jvm-" + run, Map.of("name", "JVM Inc."));
        posthog.capture(user, "jvm purchase " + run, PostHogCaptureOptions.builder().property("amount", 42)
                .group("company", "jvm-" + run).build());
        posthog.flush();
        eddy.waitUntil(() -> eddy.eventCounts().getOrDefault("jvm purchase " + run, 0L) == 1
                        && eddy.eventCounts().getOrDefault("jvm visit " + run, 0L) == 1
                        && decide(user).path("jvm-pro").asBoolean(false),
                WAIT, () -> "the SDK's events counted and plan=pro on the person; counts " + eddy.eventCounts());

        final JsonNode decided = decide(user);
        assertThat(posthog.isFeatureEnabled(user, "jvm-pro")).isTrue();
        assertThat(posthog.getFeatureFlag(user, "jvm-abc")).isEqualTo(decided.get("jvm-abc").asText());
        assertThat(String.valueOf(posthog.getFeatureFlagPayload(user, "jvm-pro"))).contains("seats");
        posthog.close();

        // Local evaluation, against a host that serves the SDK the definitions from Eddy and refuses everything else:
        // an answer that needed /flags would be the SDK's default instead.
        try (DefinitionsOnly host = new DefinitionsOnly()) {
            final PostHogInterface local = PostHog.with(PostHogConfig.Companion.builder(eddy.projectToken()).host(host.url())
                    .personalApiKey(eddy.personalKey()).localEvaluation(true).pollIntervalSeconds(1).sendFeatureFlagEvent(false).build());
            try {
                eddy.waitUntil(() -> host.served() > 0, WAIT, "the SDK loaded the definitions");
                assertThat(local.getFeatureFlag(user, "jvm-abc")).isEqualTo(decided.get("jvm-abc").asText());
                for (int i = 0; i < 20; i++) {
                    final String someone = "someone-" + i;
                    assertThat(local.getFeatureFlag(someone, "jvm-abc")).as(someone)
                            .isEqualTo(decide(someone).get("jvm-abc").asText());
                }
                assertThat(local.isFeatureEnabled("anyone-" + run, "jvm-pro",
                        PostHogFeatureFlagOptions.builder().personProperty("plan", "pro").build())).isTrue();
            } finally {
                local.close();
            }
            assertThat(host.refused()).as("requests the SDK needed beyond the definitions").isEmpty();
        }
        assertThat(eddy.eventCounts()).containsEntry("$identify", 1L).containsEntry("$create_alias", 1L)
                .containsEntry("$groupidentify", 1L);
        // The group reaches every instance's copy of the groups (a global store) on its own path, after the event counts.
        final String find = "/api/projects/1/groups/find?group_type_index=0&group_key=jvm-" + run;
        eddy.waitUntil(() -> eddy.getAuthorized(find).statusCode() == 200, WAIT, "the group reached the groups store");
        assertThat(TestEddy.json(eddy.getAuthorized(find)).get("group_properties").get("name").asText()).isEqualTo("JVM Inc.");
    }

    /** A host that forwards the local-evaluation definitions to Eddy and refuses every other request. */
    private static final class DefinitionsOnly implements AutoCloseable {
        private final com.sun.net.httpserver.HttpServer server;
        private final java.util.concurrent.atomic.AtomicInteger served = new java.util.concurrent.atomic.AtomicInteger();
        private final List<String> refused = new java.util.concurrent.CopyOnWriteArrayList<>();

        DefinitionsOnly() throws java.io.IOException {
            server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", exchange -> {
                final String path = exchange.getRequestURI().toString();
                try (exchange) {
                    if (path.startsWith("/api/feature_flag/local_evaluation") || path.startsWith("/flags/definitions")) {
                        final HttpResponse<String> definitions = eddy.get(path, Map.of("Authorization",
                                exchange.getRequestHeaders().getFirst("Authorization")));
                        final byte[] body = definitions.body().getBytes(java.nio.charset.StandardCharsets.UTF_8);
                        exchange.getResponseHeaders().add("Content-Type", "application/json");
                        exchange.sendResponseHeaders(definitions.statusCode(), body.length);
                        exchange.getResponseBody().write(body);
                        served.incrementAndGet();
                    } else {
                        refused.add(exchange.getRequestMethod() + " " + path);
                        exchange.sendResponseHeaders(503, -1);
                    }
                }
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        int served() {
            return served.get();
        }

        List<String> refused() {
            return refused;
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    private static JsonNode decide(final String user) {
        final HttpResponse<String> response = eddy.post("/decide/?v=3",
                "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"" + user + "\"}");
        return response.statusCode() == 200 ? TestEddy.json(response).get("featureFlags") : TestEddy.json(response);
    }
}
