package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SdkLoad;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TcpProxy;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL holds the management data only. While it is out of reach (every connection reset, new ones refused),
 * capture and flags keep working, management routes answer 503 with a retry time, and health says degraded; once it
 * is back the same Eddy serves everything again, without a restart, and every acknowledged event is counted once.
 */
@ExtendWith(SharedInfrastructure.class)
class PostgresOutageIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration OUTAGE = Duration.ofSeconds(8);

    @TempDir
    static Path stateDir;
    private static TcpProxy postgres;
    private static TestEddy eddy;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        postgres = TcpProxy.to(infra.pgHostPort());
        final String database = infra.newDatabase("pg_outage").replace(infra.pgHostPort(), postgres.hostPort());
        eddy = TestEddy.start(infra, stateDir, Map.of("EDDY_PG_URL", database));
    }

    @AfterAll
    static void stop() throws Exception {
        if (eddy != null) {
            eddy.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void captureAndFlagsKeepWorkingAndManagementAnswers503UntilPostgresIsBack() throws Exception {
        final HttpResponse<String> flag = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/",
                "{\"key\":\"pro-only\",\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}],"
                        + "\"rollout_percentage\":100}]}}");
        assertThat(flag.statusCode()).as(flag.body()).isEqualTo(201);
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"$identify\",\"distinct_id\":\"pro-user\","
                + "\"properties\":{\"$set\":{\"plan\":\"pro\"}}}").statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> "true".equals(flagOf("pro-user")) && "false".equals(flagOf("free-user")), WAIT, "the flag evaluated");

        try (SdkLoad load = SdkLoad.start(eddy, "pg_outage", 5, 10, Duration.ofMillis(50))) {
            eddy.waitUntil(() -> load.batchesAcked() >= 10, WAIT, "capture under way");

            postgres.cut();
            final long before = load.batchesAcked();
            final long outageEnds = System.nanoTime() + OUTAGE.toNanos();
            int managementAnswers = 0;
            while (System.nanoTime() < outageEnds) {
                for (final String path : List.of("/api/projects/1/dashboards/", "/api/users/@me/", "/api/projects/1/feature_flags/")) {
                    final HttpResponse<String> management = eddy.request(eddy.personalKey(), "GET", path, null);
                    assertThat(management.statusCode()).as(path + " " + management.body()).isEqualTo(503);
                    assertThat(TestEddy.json(management).path("code").asText()).isEqualTo("database_unavailable");
                    assertThat(management.headers().firstValue("Retry-After")).contains("5");
                    managementAnswers++;
                }
                // Flags read the definitions and the person from the streams stores, the project from the token cache.
                assertThat(flagOf("pro-user")).isEqualTo("true");
                assertThat(flagOf("free-user")).isEqualTo("false");
                final HttpResponse<String> health = eddy.get("/_health/ready", Map.of());
                assertThat(health.statusCode()).isEqualTo(200);
                assertThat(TestEddy.json(health).path("status").asText()).isEqualTo("degraded");
                assertThat(TestEddy.json(health).path("checks").path("postgres").asText()).isEqualTo("down");
                Thread.sleep(500);
            }
            assertThat(managementAnswers).isGreaterThanOrEqualTo(3 * 5);
            assertThat(load.batchesAcked() - before).as("batches acknowledged while PostgreSQL was down").isGreaterThanOrEqualTo(20);

            postgres.restore();
            eddy.waitUntil(() -> eddy.getAuthorized("/api/projects/1/dashboards/").statusCode() == 200, WAIT,
                    "management routes answering again without a restart");
            final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/dashboards/", "{\"name\":\"after\"}");
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            eddy.waitUntil(() -> "ok".equals(TestEddy.json(eddy.get("/_health/ready", Map.of())).path("status").asText()), WAIT,
                    "health ok again");

            final Map<String, Long> acked = load.stop();
            assertThat(load.answers()).as("capture never needed PostgreSQL: no request was refused").containsOnlyKeys(200);
            load.assertCountedExactly(acked, WAIT);
        }
    }

    /** The {@code pro-only} flag for {@code distinctId} ("true"/"false"), asserting it was computed without errors. */
    private static String flagOf(final String distinctId) {
        final HttpResponse<String> answer = eddy.post("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\""
                + distinctId + "\"}");
        if (answer.statusCode() != 200) {
            return "status " + answer.statusCode();
        }
        final JsonNode body = TestEddy.json(answer);
        assertThat(body.path("errorsWhileComputingFlags").asBoolean()).as(answer.body()).isFalse();
        return body.path("flags").path("pro-only").path("enabled").asText();
    }
}
