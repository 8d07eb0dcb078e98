package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.CommittedRecords;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The walking skeleton end to end: HTTP capture → Kafka → Streams store → interactive query over HTTP. */
@ExtendWith(SharedInfrastructure.class)
class CaptureToQueryIT {
    private static final Duration COUNT_TIMEOUT = Duration.ofSeconds(60);
    private static final Instant HOUR = Instant.now().truncatedTo(ChronoUnit.HOURS).minus(3, ChronoUnit.HOURS);

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static Infrastructure infra;

    @BeforeAll
    static void start(final Infrastructure shared) throws Exception {
        infra = shared;
        eddy = TestEddy.start(shared, stateDir, Map.of());
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
    }

    @Test
    void thousandCapturedEventsAreCountedExactlyOnceEach() throws Exception {
        final int events = 1_000;
        final Semaphore inFlight = new Semaphore(32);
        final List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < events; i++) {
            final Instant at = HOUR.plus(i % 3, ChronoUnit.HOURS).plusSeconds(i);
            final String body = "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"thousand\",\"distinct_id\":\"user-"
                    + (i % 50) + "\",\"properties\":{\"i\":" + i + "},\"timestamp\":\"" + at + "\"}";
            inFlight.acquire();
            responses.add(eddy.http().sendAsync(HttpRequest.newBuilder(eddy.uri("/capture/"))
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((r, e) -> inFlight.release()));
        }
        for (final CompletableFuture<HttpResponse<String>> response : responses) {
            assertThat(response.get().statusCode()).isEqualTo(200);
            assertThat(response.get().body()).isEqualTo("{\"status\":1}");
        }

        eddy.waitUntil(() -> total("thousand") == events, COUNT_TIMEOUT, "1000 events counted");

        final JsonNode counts = TestEddy.json(eddy.getAuthorized(countsPath("thousand")));
        assertThat(counts.get("total").asLong()).isEqualTo(events);
        assertThat(counts.get("results")).hasSize(3);
        assertThat(counts.get("results").get(0).get("hour").asText()).isEqualTo(HOUR.toString());
        assertThat(counts.get("results").get(0).get("count").asLong()).isEqualTo(334);
        assertThat(counts.get("results").get(1).get("count").asLong()).isEqualTo(333);
        assertThat(counts.get("results").get(2).get("count").asLong()).isEqualTo(333);
    }

    @Test
    void batchOfEventsIsAcceptedAndNamelessOrAnonymousOnesAreDroppedSilently() throws Exception {
        final String body = "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":["
                + "{\"event\":\"batched\",\"properties\":{\"distinct_id\":\"b1\"},\"timestamp\":\"" + HOUR + "\"},"
                + "{\"event\":\"batched\",\"distinct_id\":\"b2\",\"timestamp\":\"" + HOUR + "\"},"
                + "{\"properties\":{\"distinct_id\":\"no-name\"}},"
                + "{\"event\":\"batched\",\"distinct_id\":\"\"},"
                + "{\"event\":\"batched\"}]}";

        final HttpResponse<String> response = eddy.post("/batch/", body);

        assertThat(response.statusCode()).isEqualTo(200);
        eddy.waitUntil(() -> total("batched") == 2, COUNT_TIMEOUT, "2 batched events counted");
    }

    @Test
    void unknownTokenIsRejectedAndNothingIsProduced() throws Exception {
        final String unknown = "phc_" + UUID.randomUUID().toString().replace("-", "");
        final HttpResponse<String> response = eddy.post("/capture/",
                "{\"api_key\":\"" + unknown + "\",\"event\":\"intruder\",\"distinct_id\":\"x\"}");

        assertThat(response.statusCode()).isEqualTo(401);
        final JsonNode error = TestEddy.json(response);
        assertThat(error.get("type").asText()).isEqualTo("authentication_error");
        assertThat(error.get("code").asText()).isEqualTo("invalid_api_key");

        final List<ConsumerRecord<byte[], byte[]>> ingested = readAll(eddy.topic("events.ingest"));
        assertThat(ingested).noneMatch(r -> new String(r.key(), StandardCharsets.UTF_8).startsWith(unknown));
    }

    @Test
    void missingTokenIsRejectedAndMalformedBodyIsABadRequest() {
        final HttpResponse<String> noToken = eddy.post("/capture/", "{\"event\":\"e\",\"distinct_id\":\"x\"}");
        assertThat(noToken.statusCode()).isEqualTo(401);
        assertThat(TestEddy.json(noToken).get("code").asText()).isEqualTo("missing_api_key");

        final HttpResponse<String> broken = eddy.post("/capture/", "{\"api_key\": \"phc_x\", \"event\": ");
        assertThat(broken.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(broken).get("type").asText()).isEqualTo("validation_error");

        final HttpResponse<String> personalKeyAsToken = eddy.post("/capture/",
                "{\"api_key\":\"" + eddy.personalKey() + "\",\"event\":\"e\",\"distinct_id\":\"x\"}");
        assertThat(personalKeyAsToken.statusCode()).isEqualTo(401);
    }

    @Test
    void oversizedCaptureBodyIs413() {
        final String body = "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"big\",\"distinct_id\":\"x\","
                + "\"properties\":{\"blob\":\"" + "a".repeat(3 * 1024 * 1024) + "\"}}";

        final HttpResponse<String> response = eddy.post("/capture/", body);

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(TestEddy.json(response).get("code").asText()).isEqualTo("payload_too_large");
    }

    @Test
    void poisonRecordOnTheIngestTopicGoesToTheDeadLetterTopic() throws Exception {
        final byte[] poison = ("{not an event " + UUID.randomUUID() + "}").getBytes(StandardCharsets.UTF_8);
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafkaBootstrap());
        props.putAll(dev.eddy.gateway.testing.Infrastructure.kafkaClientProperties());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(eddy.topic("events.ingest"), "k".getBytes(StandardCharsets.UTF_8), poison)).get();
        }

        eddy.waitUntil(() -> readAll(eddy.topic("events.dlq")).stream()
                .anyMatch(r -> java.util.Arrays.equals(r.value(), poison)), COUNT_TIMEOUT, "poison record in events.dlq");

        // The topology is still running and counting.
        eddy.post("/capture/", "{\"api_key\":\"" + eddy.projectToken() + "\",\"event\":\"after-poison\",\"distinct_id\":\"x\","
                + "\"timestamp\":\"" + HOUR + "\"}");
        eddy.waitUntil(() -> total("after-poison") == 1, COUNT_TIMEOUT, "event after the poison record counted");
    }

    @Test
    void healthAndMetricsDescribeTheRunningProcess() {
        final HttpResponse<String> health = eddy.get("/_health", Map.of());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(TestEddy.json(health).get("checks").get("streams").asText()).isEqualTo("RUNNING");
        assertThat(TestEddy.json(health).get("checks").get("postgres").asText()).isEqualTo("up");

        final HttpResponse<String> metrics = eddy.get("/metrics", Map.of());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("jvm_memory_used_bytes", "kafka_producer_", "kafka_stream_",
                "vertx_http_server_requests_total");
        // By route, so that /capture, /flags and each management route can be told apart (one series a route, never a URL).
        assertThat(metrics.body()).containsPattern("vertx_http_server_requests_total\\{code=\"200\",method=\"POST\",route=\"/capture\"} [1-9]")
                .containsPattern("vertx_http_server_requests_total\\{code=\"200\",method=\"GET\",route=\"/api/projects/:project_id/event_counts\"}")
                .contains("vertx_http_server_response_time_seconds_count{code=\"200\",method=\"POST\",route=\"/capture\"}");
    }

    /**
     * The Grafana dashboard and the Prometheus alert rules under {@code deploy/} name only metrics this process serves
     * (after a capture, a flags request and an insight), so neither shows an empty panel nor an alert that never fires.
     */
    @Test
    void theShippedDashboardAndAlertsNameOnlyMetricsEddyServes() throws Exception {
        assertThat(eddy.post("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\"metrics\"}").statusCode()).isEqualTo(200);
        assertThat(eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/trend/", "{\"events\":[{\"id\":\"$pageview\"}]}")
                .statusCode()).isEqualTo(200);
        final String metrics = eddy.get("/metrics", Map.of()).body();
        final Path deploy = Path.of("..", "deploy");
        final String named = java.nio.file.Files.readString(deploy.resolve("prometheus/eddy-alerts.yaml"))
                + java.nio.file.Files.readString(deploy.resolve("grafana/eddy-dashboard.json"));
        final java.util.Set<String> names = new java.util.TreeSet<>();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b(?:eddy|vertx|kafka|jvm)_[a-z0-9_]+").matcher(named);
        while (m.find()) {
            names.add(m.group());
        }
        assertThat(names).hasSizeGreaterThan(10);
        assertThat(names).allSatisfy(name -> assertThat(metrics).as("/metrics serves " + name).containsPattern("(?m)^" + name + "[{ ]"));
        // The flags' latency histogram has its buckets by route.
        assertThat(metrics).containsPattern("vertx_http_server_response_time_seconds_bucket\\{code=\"200\",method=\"POST\",route=\"/flags\",le=\"0\\.25\"} [1-9]");
    }

    private static String countsPath(final String event) {
        return "/api/projects/" + eddy.eddy().bootstrap().orElseThrow().projectId() + "/event_counts/?event=" + event;
    }

    private static long total(final String event) {
        final HttpResponse<String> response = eddy.getAuthorized(countsPath(event));
        return response.statusCode() == 200 ? TestEddy.json(response).get("total").asLong() : -1;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(final String topic) {
        return CommittedRecords.readAll(infra.kafkaBootstrap(), topic);
    }
}
