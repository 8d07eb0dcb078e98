package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.posthog.java.PostHog;
import dev.eddy.events.CapturedEvent;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TopicRecorder;
import dev.eddy.gateway.testing.TopicRecorder.Recorded;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** PostHog's own Java client ({@code com.posthog.java:posthog}), unmodified, pointed at Eddy. */
@ExtendWith(SharedInfrastructure.class)
class PostHogJavaSdkIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static TopicRecorder recorder;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, stateDir, Map.of("EDDY_ROLE", "gateway"));
        recorder = new TopicRecorder(infra.kafkaBootstrap(), List.of(eddy.topic("events.ingest")));
    }

    @AfterAll
    static void stop() throws Exception {
        if (recorder != null) {
            recorder.close();
        }
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void captureIdentifyAliasAndGroupsArriveIntact() throws Exception {
        final String user = "sdk-" + UUID.randomUUID();
        final PostHog posthog = new PostHog.Builder(eddy.projectToken()).host("http://127.0.0.1:" + eddy.eddy().port()).build();
        posthog.capture(user, "sdk purchase", Map.of("amount", 42, "currency", "EUR"));
        posthog.identify(user, Map.of("email", "ada@example.com"), Map.of("first_plan", "free"));
        posthog.alias(user, user + "-alias");
        posthog.capture(user, "$groupidentify", Map.of("$group_type", "company", "$group_key", "acme",
                "$group_set", Map.of("name", "Acme Inc.")));
        posthog.capture(user, "with group", Map.of("$groups", Map.of("company", "acme")));
        posthog.shutdown();

        final List<Recorded> arrived = recorder.await(r -> r.event().distinctId().equals(user), 5, WAIT);
        assertThat(arrived).extracting(r -> r.event().event())
                .containsExactly("sdk purchase", "$identify", "$create_alias", "$groupidentify", "with group");
        assertThat(arrived).allMatch(r -> r.key().equals(eddy.projectToken() + ":" + user));

        final CapturedEvent purchase = arrived.get(0).event();
        assertThat(purchase.properties().get("amount").asInt()).isEqualTo(42);
        assertThat(purchase.properties().get("currency").asText()).isEqualTo("EUR");
        assertThat(UUID.fromString(purchase.uuid()).version()).as("the SDK's own uuid is kept").isEqualTo(4);
        assertThat(purchase.timestamp()).isBetween(purchase.now().minusSeconds(30), purchase.now());

        final CapturedEvent identify = arrived.get(1).event();
        assertThat(identify.properties().get("$set").get("email").asText()).isEqualTo("ada@example.com");
        assertThat(identify.properties().get("$set_once").get("first_plan").asText()).isEqualTo("free");

        assertThat(arrived.get(2).event().properties().get("alias").asText()).isEqualTo(user + "-alias");

        final CapturedEvent group = arrived.get(3).event();
        assertThat(group.properties().get("$group_type").asText()).isEqualTo("company");
        assertThat(group.properties().get("$group_set").get("name").asText()).isEqualTo("Acme Inc.");
        assertThat(arrived.get(4).event().properties().get("$groups").get("company").asText()).isEqualTo("acme");
    }
}
