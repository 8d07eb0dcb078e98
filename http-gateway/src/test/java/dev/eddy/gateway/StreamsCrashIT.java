package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SdkLoad;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.StreamsProcess;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.BytesDeserializer;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once through a crash: a gateway in this JVM takes events while a streams instance runs as its own
 * process ({@code eddy.jar streams}); the instance is killed with SIGKILL mid-stream and started again on the
 * same state directory. Every acknowledged event must come out of the topology exactly once, and each person's
 * events in the order they were sent (each sets the person's {@code seq}, which must only grow). Then, once
 * everything is counted, the instance is killed again while idle: the restarted instance rebuilds what it derives
 * from the restored timelines (the event blocks), and trends and funnels answer exactly as before the kill, both
 * while that rebuild runs (from the timelines) and after it (from the blocks).
 */
@ExtendWith(SharedInfrastructure.class)
class StreamsCrashIT {
    private static final int USERS = 20;
    private static final int BATCHES = 60;
    private static final int BATCH = 50;
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String SECRET = "crash-test-secret";

    @TempDir
    static Path dir;
    private static TestEddy gateway;
    private static Infrastructure infra;

    @BeforeAll
    static void start(final Infrastructure shared) throws Exception {
        infra = shared;
        gateway = TestEddy.start(shared, dir.resolve("gateway"), Map.of("EDDY_ROLE", "gateway",
                "EDDY_CAPTURE_OVERFLOW_ENABLED", "false", "EDDY_HTTP_INTERNAL_SECRET", SECRET));
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
    }

    @Test
    void aKilledStreamsInstanceResumesWithoutLosingOrRepeatingAnEvent() throws Exception {
        final Set<String> acked = ConcurrentHashMap.newKeySet();
        final AtomicInteger batchesSent = new AtomicInteger();
        final String run = UUID.randomUUID().toString().substring(0, 8);
        StreamsProcess streams = startStreams();
        final Thread sender = new Thread(() -> {
            for (int b = 0; b < BATCHES; b++) {
                final List<String> uuids = new ArrayList<>();
                final StringBuilder events = new StringBuilder();
                for (int i = 0; i < BATCH; i++) {
                    final int seq = b * BATCH + i;
                    final String uuid = UUID.randomUUID().toString();
                    uuids.add(uuid);
                    final String user = "crash-" + run + "-" + seq % USERS;
                    events.append(i == 0 ? "" : ",").append("{\"event\":\"tick\",\"distinct_id\":\"").append(user)
                            .append("\",\"uuid\":\"").append(uuid).append("\",\"properties\":{\"user\":\"").append(user)
                            .append("\",\"$set\":{\"seq\":").append(seq).append("}}}");
                }
                final HttpResponse<String> response = gateway.post("/batch/",
                        "{\"api_key\":\"" + gateway.projectToken() + "\",\"batch\":[" + events + "]}");
                if (response.statusCode() == 200) {
                    acked.addAll(uuids);
                }
                batchesSent.incrementAndGet();
                sleep(30);
            }
        }, "crash-test-sender");
        sender.start();

        gateway.waitUntil(() -> batchesSent.get() >= BATCHES / 3, WAIT, "a third of the batches sent");
        streams.kill();
        streams = startStreams();
        sender.join();
        assertThat(acked).hasSize(BATCHES * BATCH);

        // What the topology committed into the timelines (their changelog, read committed): every acknowledged event
        // written exactly once, and each person's events in the order they were sent.
        final Map<String, Integer> writes = new HashMap<>();
        final Map<String, List<Integer>> seqsByUser = new HashMap<>();
        try (KafkaConsumer<Bytes, byte[]> consumer = committedReader()) {
            consumer.subscribe(List.of(gateway.topic("eddy-" + StoreNames.EVENT_TIMELINES + "-changelog")));
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (!writes.keySet().containsAll(acked) && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500)).forEach(record -> written(record.value(), writes, seqsByUser));
            }
            // Anything a replay would have repeated is already in the log: read a little past the last event.
            consumer.poll(Duration.ofSeconds(2)).forEach(record -> written(record.value(), writes, seqsByUser));
            assertThat(writes.keySet()).as("every acknowledged event reached its timeline").containsAll(acked);
            assertThat(writes.values()).as("and none twice").allMatch(copies -> copies == 1);
            assertThat(seqsByUser).hasSize(USERS);
            seqsByUser.forEach((user, seqs) -> assertThat(seqs).as(user + "'s person saw its events in order")
                    .isSortedAccordingTo(Integer::compare).doesNotHaveDuplicates().hasSize(BATCHES * BATCH / USERS));

            // The stores agree, read through the gateway: each person's events counted once.
            final Map<String, Long> perPerson = new TreeMap<>();
            seqsByUser.keySet().forEach(user -> perPerson.put(user, (long) BATCHES * BATCH / USERS));
            SdkLoad.assertCountedExactly(gateway, "tick", perPerson, WAIT);

            final List<String> answers = insightAnswers();
            assertThat(answers.get(1)).as("the funnel saw every user twice").contains("\"count\":" + USERS);
            final String before = streams.output();
            streams.kill();
            streams = startStreams();
            gateway.waitUntil(() -> insightAnswers().equals(answers), WAIT, "answers after the restart equal those before it");
            final StreamsProcess restarted = streams;
            gateway.waitUntil(() -> rebuildsFinished(outputOf(restarted).substring(before.length())), WAIT,
                    "every rebuild the restarted instance started finished");
            assertThat(insightAnswers()).as("answered from the rebuilt blocks").isEqualTo(answers);
        } finally {
            streams.close();
        }
    }

    /** A trend per user (events and active users) and a two-step funnel, as answered now. */
    private static List<String> insightAnswers() {
        final String trend = "{\"events\":[{\"id\":\"tick\"},{\"id\":\"tick\",\"math\":\"dau\"}],\"date_from\":\"-1d\","
                + "\"breakdown\":\"user\",\"breakdown_limit\":1000}";
        final String funnel = "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"tick\",\"order\":0},{\"id\":\"tick\",\"order\":1}],"
                + "\"date_from\":\"-1d\"}";
        final List<String> answers = new ArrayList<>();
        for (final String[] query : new String[][] {{"trend", trend}, {"funnel", funnel}}) {
            final HttpResponse<String> response = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/insights/" + query[0] + "/", query[1]);
            answers.add(response.statusCode() + " " + TestEddy.json(response).path("result"));
        }
        return answers;
    }

    private static String outputOf(final StreamsProcess process) {
        try {
            return process.output();
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Whether every rebuild in this output (one per task that needed one) has finished: at least one ran. */
    private static boolean rebuildsFinished(final String output) {
        final long started = output.lines().filter(line -> line.contains("rebuilding") && line.contains("from the stored timelines")).count();
        final long finished = output.lines().filter(line -> line.contains("rebuilt from the stored timelines")).count();
        return started > 0 && finished == started;
    }

    private StreamsProcess startStreams() throws IOException, InterruptedException {
        final Path config = dir.resolve("streams.conf");
        // A killed member is noticed after its session times out; keep that short for the test.
        Files.writeString(config, "kafka.client { session.timeout.ms = 6000, heartbeat.interval.ms = 1500 }\n");
        return StreamsProcess.start("crash-streams", infra, gateway.topicPrefix(), SECRET, dir.resolve("streams-state"),
                List.of("--config", config.toString()));
    }

    /** Counts a timeline write of an event (not a deletion) and notes its {@code seq} under its distinct id. */
    private static void written(final byte[] value, final Map<String, Integer> writes, final Map<String, List<Integer>> seqsByUser) {
        if (value == null) {
            return;
        }
        final TimelineEvent event = TimelineEvent.decode(value);
        writes.merge(event.uuid().toString(), 1, Integer::sum);
        try {
            seqsByUser.computeIfAbsent(event.distinctId(), k -> new ArrayList<>())
                    .add(Json.mapper().readTree(event.properties()).path("$set").path("seq").asInt());
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static KafkaConsumer<Bytes, byte[]> committedReader() {
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafkaBootstrap());
        p.putAll(dev.eddy.gateway.testing.Infrastructure.kafkaClientProperties());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "crash-check-" + UUID.randomUUID());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // Only what the topology committed: an aborted transaction's records are exactly the ones a replay redoes.
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(p, new BytesDeserializer(), new ByteArrayDeserializer());
    }

    private static void sleep(final long millis) {
        try {
            Thread.sleep(millis);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
