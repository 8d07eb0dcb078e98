package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.stores.StoreNames;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second streams instance joins while trends and funnels are being asked: every answer during the rebalance is
 * either exactly right or a 503 to retry, never a sum over some of the partitions; afterwards both instances'
 * partitions (the new one's restored from the changelogs, rollups included) give the same exact answers.
 */
@ExtendWith(SharedInfrastructure.class)
class InsightRebalanceIT {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String SECRET = "insight-rebalance-test-secret";
    private static final int PERSONS = 30;

    @TempDir
    Path firstState;
    @TempDir
    Path secondState;

    @Test
    void queriesDuringARebalanceAreExactOr503(final Infrastructure infra) throws Exception {
        try (TestEddy first = TestEddy.start(infra, firstState, Map.of("EDDY_HTTP_INTERNAL_SECRET", SECRET))) {
            final Instant day = Instant.now().truncatedTo(ChronoUnit.DAYS);
            final List<String> events = new ArrayList<>();
            for (int i = 0; i < PERSONS; i++) {
                final String user = "rebalance-" + i;
                events.add(event("view", user, day.minus(Duration.ofDays(2)).plusSeconds(60L * i)));
                if (i % 2 == 0) {
                    events.add(event("buy", user, day.minus(Duration.ofDays(1)).plusSeconds(60L * i)));
                }
            }
            final HttpResponse<String> sent = first.post("/batch/", "{\"api_key\":\"" + first.projectToken()
                    + "\",\"historical_migration\":true,\"batch\":[" + String.join(",", events) + "]}");
            assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
            first.waitUntil(() -> answers(first).equals(EXPECTED), WAIT, "every event counted");

            try (TestEddy second = TestEddy.start(infra, secondState, Map.of("EDDY_ROLE", "streams",
                    "EDDY_HTTP_INTERNAL_SECRET", SECRET, "EDDY_KAFKA_TOPIC_PREFIX", first.topicPrefix()))) {
                // Ask over and over from the moment the second instance joins until it has answered its share a few times.
                int exactWithBoth = 0;
                final long until = System.nanoTime() + WAIT.toNanos();
                while (System.nanoTime() < until && exactWithBoth < 3) {
                    final boolean both = owners(first).size() == 2;
                    final List<Object> answer = answersOr503(first);
                    if (answer != null) {
                        assertThat(answer).as("an answer during the rebalance").isEqualTo(EXPECTED);
                        exactWithBoth += both ? 1 : 0;
                    }
                }
                assertThat(owners(first)).as("both instances own timeline partitions").hasSize(2);
                assertThat(exactWithBoth).as("exact answers with the partitions on two instances").isEqualTo(3);
                assertThat(first.get("/metrics", Map.of()).body()).as("partials were asked of the second instance")
                        .containsPattern("eddy_scatter_partial_seconds_count\\S* [1-9]");
            }
        }
    }

    /** Pageviews, daily actives (from the markers), buyers and the funnel. */
    private static final List<Object> EXPECTED = List.of(PERSONS, PERSONS, PERSONS / 2, List.of(PERSONS, PERSONS / 2));

    private static List<Object> answers(final TestEddy eddy) {
        final List<Object> answer = answersOr503(eddy);
        return answer == null ? List.of() : answer;
    }

    /** The four figures, or null if any query answered 503. */
    private static List<Object> answersOr503(final TestEddy eddy) {
        final JsonNode views = insight(eddy, "trend", "{\"events\":[{\"id\":\"view\"}],\"date_from\":\"-7d\"}");
        final JsonNode actives = insight(eddy, "trend", "{\"events\":[{\"id\":\"view\",\"math\":\"dau\"}],\"date_from\":\"-7d\","
                + "\"display\":\"BoldNumber\"}");
        final JsonNode buys = insight(eddy, "trend", "{\"events\":[{\"id\":\"buy\"}],\"date_from\":\"-7d\",\"properties\":[{\"key\":\"n\","
                + "\"value\":\"1\"}]}");
        final JsonNode funnel = insight(eddy, "funnel", "{\"events\":[{\"id\":\"view\",\"order\":0},{\"id\":\"buy\",\"order\":1}],"
                + "\"date_from\":\"-7d\"}");
        if (views == null || actives == null || buys == null || funnel == null) {
            return null;
        }
        final List<Integer> steps = new ArrayList<>();
        funnel.forEach(step -> steps.add(step.path("count").asInt()));
        return List.of(views.path(0).path("count").asInt(), actives.path(0).path("aggregated_value").asInt(),
                buys.path(0).path("count").asInt(), steps);
    }

    private static JsonNode insight(final TestEddy eddy, final String kind, final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/" + kind, query);
        if (response.statusCode() == 503) {
            return null;
        }
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).path("result");
    }

    private static String event(final String name, final String user, final Instant at) {
        return "{\"event\":\"" + name + "\",\"distinct_id\":\"" + user + "\",\"uuid\":\"" + UUID.randomUUID()
                + "\",\"timestamp\":\"" + at + "\",\"properties\":{\"n\":1}}";
    }

    private static Set<String> owners(final TestEddy eddy) {
        return eddy.eddy().streams().filter(app -> app.isRunning()).map(app -> app.routing().instancesWith(StoreNames.EVENT_TIMELINES).stream()
                .map(m -> m.hostInfo().host() + ":" + m.hostInfo().port()).collect(Collectors.toSet())).orElse(Set.of());
    }

}
