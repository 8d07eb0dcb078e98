package dev.eddy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import dev.eddy.trends.HourlyEventKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EddyTopologyTest {
    private static final Instant H10 = Instant.parse("2026-11-22T10:00:00Z");
    private static final Instant H11 = Instant.parse("2026-11-22T11:00:00Z");

    @TempDir
    Path stateDir;

    private TopologyTestDriver driver;
    private TestInputTopic<String, CapturedEvent> ingest;
    private EddyTopics topics;

    @BeforeEach
    void setUp() {
        final EddyConfig config = ConfigLoader.load(Map.of("EDDY_STATE_DIR", stateDir.toString()), Optional.empty());
        topics = EddyTopics.of(config.kafka());
        final Properties props = StreamsProperties.of(config, "127.0.0.1:8000");
        driver = new TopologyTestDriver(EddyTopology.build(topics, config.streams()), props);
        ingest = driver.createInputTopic(topics.ingest().name(),
                topics.ingest().keySerde().serializer(), topics.ingest().valueSerde().serializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    @Test
    void countsEventsPerProjectHourAndName() {
        send(1, "$pageview", H10.plusSeconds(5));
        send(1, "$pageview", H10.plusSeconds(3599));
        send(1, "signup", H10.plusSeconds(60));
        send(1, "$pageview", H11);
        send(2, "$pageview", H10.plusSeconds(1));

        assertThat(query(1, H10, H11.plusSeconds(3599), Optional.empty())).containsExactly(
                new HourlyCount("$pageview", H10, 2),
                new HourlyCount("signup", H10, 1),
                new HourlyCount("$pageview", H11, 1));
        assertThat(query(2, H10, H11, Optional.empty())).containsExactly(new HourlyCount("$pageview", H10, 1));
    }

    @Test
    void rangeAndEventFilterBoundTheAnswer() {
        send(1, "$pageview", H10.minusSeconds(1));
        send(1, "$pageview", H10);
        send(1, "signup", H10);
        send(1, "$pageview", H11);

        assertThat(query(1, H10, H10.plusSeconds(3599), Optional.of("$pageview")))
                .containsExactly(new HourlyCount("$pageview", H10, 1));
    }

    @Test
    void unreadableRecordDoesNotStopProcessing() {
        // TopologyTestDriver does not produce dead-letter records; CaptureToQueryIT checks events.dlq on a real broker.
        final TestInputTopic<byte[], byte[]> raw = driver.createInputTopic(topics.ingest().name(),
                new ByteArraySerializer(), new ByteArraySerializer());

        raw.pipeInput("phc_x:u".getBytes(StandardCharsets.UTF_8), "{broken".getBytes(StandardCharsets.UTF_8));
        send(1, "after-poison", H10);

        assertThat(query(1, H10, H10, Optional.empty())).containsExactly(new HourlyCount("after-poison", H10, 1));
    }

    @Test
    void anUnreadableGlobalRecordGoesToTheDeadLettersAndKeepsTheKeysValue() {
        final java.util.List<String> dead = new java.util.ArrayList<>();
        final DeadLetters recording = (topic, partition, offset, key, value, cause) ->
                dead.add(topic + "@" + offset + " " + new String(key, StandardCharsets.UTF_8) + " " + cause.getClass().getSimpleName());
        driver.close();
        final EddyConfig config = ConfigLoader.load(Map.of("EDDY_STATE_DIR", stateDir.resolve("dead").toString()), Optional.empty());
        driver = new TopologyTestDriver(EddyTopology.build(topics, config.streams(), recording),
                StreamsProperties.of(config, "127.0.0.1:8000"));
        final TestInputTopic<String, byte[]> types = driver.createInputTopic(topics.groupTypes().name(),
                new org.apache.kafka.common.serialization.StringSerializer(), new ByteArraySerializer());

        types.pipeInput("1", "{\"types\":{\"company\":0}}".getBytes(StandardCharsets.UTF_8));
        // A global thread that threw here would stop the whole instance.
        types.pipeInput("1", "\u0000 not group types".getBytes(StandardCharsets.UTF_8));
        types.pipeInput("2", "[1,2]".getBytes(StandardCharsets.UTF_8));
        types.pipeInput("3", "{\"types\":{\"team\":0}}".getBytes(StandardCharsets.UTF_8));

        final org.apache.kafka.streams.state.KeyValueStore<String, dev.eddy.groups.GroupTypes> store =
                driver.getKeyValueStore(dev.eddy.stores.StoreNames.GROUP_TYPES);
        assertThat(store.get("1").types()).containsExactly(Map.entry("company", 0));
        assertThat(store.get("2")).isNull();
        assertThat(store.get("3").types()).containsExactly(Map.entry("team", 0));
        assertThat(dead).containsExactly(topics.groupTypes().name() + "@1 1 SerializationException",
                topics.groupTypes().name() + "@2 2 SerializationException");

        // Valid JSON is not enough for a flag definition: /decide would read a flag without a key or conditions.
        dead.clear();
        final TestInputTopic<String, byte[]> flags = driver.createInputTopic(topics.flagDefinitions().name(),
                new org.apache.kafka.common.serialization.StringSerializer(), new ByteArraySerializer());
        final String good = "{\"id\":7,\"key\":\"beta\",\"active\":true,\"filters\":{\"groups\":[{\"properties\":[],"
                + "\"rollout_percentage\":50}],\"multivariate\":{\"variants\":[{\"key\":\"a\",\"rollout_percentage\":100}]}}}";
        flags.pipeInput("1:beta", good.getBytes(StandardCharsets.UTF_8));
        flags.pipeInput("1:beta", "{\"poison\":true,\"properties\":[1,2]}".getBytes(StandardCharsets.UTF_8));
        flags.pipeInput("1:beta", "{\"id\":7,\"key\":\"beta\",\"filters\":{\"groups\":{\"a\":1}}}".getBytes(StandardCharsets.UTF_8));
        flags.pipeInput("1:beta", "{\"id\":7,\"key\":\"beta\",\"filters\":{\"groups\":[{\"properties\":[\"plan\"]}]}}"
                .getBytes(StandardCharsets.UTF_8));
        flags.pipeInput("1:gamma", "{\"id\":8,\"key\":\"gamma\",\"filters\":{\"multivariate\":{\"variants\":[{\"key\":\"a\"}]}}}"
                .getBytes(StandardCharsets.UTF_8));
        final org.apache.kafka.streams.state.KeyValueStore<String, com.fasterxml.jackson.databind.JsonNode> definitions =
                driver.getKeyValueStore(dev.eddy.stores.StoreNames.FLAG_DEFINITIONS);
        assertThat(definitions.get("1:beta").toString()).isEqualTo(good);
        assertThat(definitions.get("1:gamma")).isNull();
        assertThat(dead).containsExactly(topics.flagDefinitions().name() + "@1 1:beta SerializationException",
                topics.flagDefinitions().name() + "@2 1:beta SerializationException",
                topics.flagDefinitions().name() + "@3 1:beta SerializationException",
                topics.flagDefinitions().name() + "@4 1:gamma SerializationException");
    }

    private void send(final long project, final String name, final Instant at) {
        final CapturedEvent e = new CapturedEvent(1, UUID.randomUUID().toString(), project, "phc_" + project, "user-1",
                name, Json.mapper().createObjectNode(), at, at, null, "127.0.0.1", null, null);
        ingest.pipeInput(e.partitionKey(), e, at);
    }

    private List<HourlyCount> query(final long project, final Instant from, final Instant to, final Optional<String> event) {
        final KeyValueStore<HourlyEventKey, Long> store = driver.getKeyValueStore(StoreNames.HOURLY_COUNTS);
        return new HourlyCountQuery(project, from, to, event).run(store);
    }
}
