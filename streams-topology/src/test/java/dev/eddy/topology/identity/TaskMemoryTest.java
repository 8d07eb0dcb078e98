package dev.eddy.topology.identity;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.events.CapturedEvent;
import dev.eddy.persons.Hold;
import dev.eddy.persons.PersonSerdes;
import dev.eddy.serde.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;

/**
 * What the identity processor keeps in memory beside its stores (which of them hold anything at all) must be read
 * back from the stores when a task starts on state it did not write: after a restore, or on another instance.
 * Each test writes through one instance, then starts a second on the same stores.
 */
class TaskMemoryTest {
    private static final Instant NOW = Instant.parse("2026-11-27T12:00:00Z");
    private final MockProcessorContext<String, Object> context = new MockProcessorContext<>(config());
    private final WindowStore<String, Long> live = window("live");
    private final WindowStore<String, Long> historical = window("historical");
    private final KeyValueStore<String, Hold> holds = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("holds"),
            Serdes.String(), PersonSerdes.hold()).withLoggingDisabled().build();

    TaskMemoryTest() {
        holds.init(context.getStateStoreContext(), holds);
    }

    @Test
    void anImportedEventSentLiveAgainIsADuplicateAlsoAfterARestart() {
        final CapturedEvent imported = event("a");
        assertThat(dedup().firstTime(imported, true)).isTrue();
        final Deduplicator restarted = dedup();

        assertThat(restarted.firstTime(imported, false)).as("found in the historical store the restart read").isFalse();
        assertThat(restarted.firstTime(event("b"), false)).isTrue();
    }

    @Test
    void anImportedEventIsADuplicateOfOneSentLiveBeforeAndViceVersaInOneTask() {
        final Deduplicator dedup = dedup();
        final CapturedEvent first = event("a");
        final CapturedEvent second = event("b");
        assertThat(dedup.firstTime(first, false)).isTrue();
        assertThat(dedup.firstTime(second, true)).isTrue();

        assertThat(dedup.firstTime(first, true)).isFalse();
        assertThat(dedup.firstTime(second, false)).as("the historical store is read once it was written").isFalse();
    }

    @Test
    void holdsOfAnEarlierTaskStillHoldAfterARestart() {
        final HeldEvents before = new HeldEvents(holds);
        before.hold(1, "user");
        before.append(event("user"), true, 0);
        final HeldEvents after = new HeldEvents(holds);

        assertThat(after.held(1, "user")).isTrue();
        assertThat(after.held(1, "other")).isFalse();
        final List<String> replayed = new ArrayList<>();
        after.release(1, "user", (event, linked, timestamp) -> {
            replayed.add(event.distinctId());
            return false;
        });
        assertThat(replayed).containsExactly("user");
        assertThat(after.held(1, "user")).as("released").isFalse();
        assertThat(new HeldEvents(holds).held(1, "user")).isFalse();
    }

    private Deduplicator dedup() {
        return new Deduplicator(live, historical, Duration.ofDays(7), Duration.ofDays(30));
    }

    private WindowStore<String, Long> window(final String name) {
        final WindowStore<String, Long> store = Stores.windowStoreBuilder(Stores.inMemoryWindowStore(name, Duration.ofDays(30),
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        return store;
    }

    private static CapturedEvent event(final String distinctId) {
        return new CapturedEvent(1, UUID.randomUUID().toString(), 1, "phc_test", distinctId, "e",
                Json.mapper().createObjectNode(), NOW, NOW, null, null, null, null);
    }

    private static Properties config() {
        final Properties config = new Properties();
        config.put("application.id", "task-memory");
        config.put("bootstrap.servers", "unused:9092");
        return config;
    }
}
