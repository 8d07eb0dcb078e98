package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.events.CapturedEvent;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.gateway.testing.TopicRecorder;
import dev.eddy.gateway.testing.TopicRecorder.Recorded;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every ingestion path and encoding, asserted on the exact records that reached Kafka. */
@ExtendWith(SharedInfrastructure.class)
class CaptureRoutesIT {
    private static final String TOKEN = "phc_routeTestToken0000001";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final List<String> ROUTES = List.of("/capture/", "/batch/", "/e/", "/i/v0/e/", "/track/", "/engage/");
    /** lz-string 1.5.0 compressToBase64 (npm) of {"api_key":TOKEN,"event":"lz64-event","distinct_id":"lz64-<route>",...}. */
    private static final Map<String, String> LZ64 = Map.ofEntries(
            Map.entry("/capture/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46TOyQSRPAi4ZCEBHhJRqaUAOx7JUiwHcCeXegA/DAD3IAC+IUA"),
            Map.entry("/e/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46XK4ZCEBHhJRqaUAOx7JUowHcCeXegA/DAPcgAvn5AA==="),
            Map.entry("/i/v0/e/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46TKgzeTOVwyEICPCSjU0oAdj2Sp5gO4E8u9AB+GAPcgAL7BQA="),
            Map.entry("/track/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46TJJ4w2OFwyEICPCSjU0oAdj2Sp5gO4E8u9AB+GAPcgAL7BQA="),
            Map.entry("/engage/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46XIYBzMEYRcMhCAjwko1NKAHY9kqRYDuBPLvQAfhgB7kABfEKA"),
            Map.entry("/batch/", "N4IghgDglg+g1gUwJ4gFwggCwMYwE4D2ArgC4IAqCAzieQYgHYAMLrAjCADQgIBuCDEmhAAbAF4A2ACwBaPgKHcAJlBpQG2EjChLh46TIBGYEtkxcMhCAjwko1NKAHY9kqRYDuBPLvQAfhgB7kABfEKA"));

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static TopicRecorder recorder;

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, stateDir, Map.of(
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", TOKEN,
                "EDDY_CAPTURE_OVERFLOW_EVENTS_PER_SECOND", "1",
                "EDDY_CAPTURE_OVERFLOW_BURST", "20"));
        recorder = new TopicRecorder(infra.kafkaBootstrap(),
                List.of(eddy.topic("events.ingest"), eddy.topic("events.historical"), eddy.topic("events.overflow")));
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

    static Stream<Arguments> routesAndEncodings() {
        return ROUTES.stream().flatMap(route -> Stream.of("json", "form-base64", "gzip", "gzip-magic", "lz64")
                .map(encoding -> Arguments.of(route, encoding)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("routesAndEncodings")
    void everyRouteAcceptsEveryEncoding(final String route, final String encoding) throws Exception {
        final String distinctId = "lz64".equals(encoding) ? "lz64-" + route.replaceAll("^/|/$", "").replace('/', '-')
                : encoding + route.replace('/', '-') + UUID.randomUUID();
        final String json = "{\"api_key\":\"" + TOKEN + "\",\"event\":\"" + encoding + "-event\",\"distinct_id\":\""
                + distinctId + "\",\"properties\":{\"enc\":\"" + encoding + "\",\"word\":\"ünï\"}}";
        final HttpRequest.Builder request = HttpRequest.newBuilder();
        switch (encoding) {
            case "json" -> request.uri(eddy.uri(route)).POST(HttpRequest.BodyPublishers.ofString(json))
                    .header("Content-Type", "application/json");
            case "form-base64" -> request.uri(eddy.uri(route)).header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("data=" + URLEncoder.encode(
                            Base64.getEncoder().encodeToString(json.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8)));
            case "gzip" -> request.uri(eddy.uri(route + "?compression=gzip-js"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(gzip(json))).header("Content-Type", "text/plain");
            case "gzip-magic" -> request.uri(eddy.uri(route))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(gzip(json))).header("Content-Type", "text/plain");
            case "lz64" -> request.uri(eddy.uri(route)).header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString("data=" + URLEncoder.encode(LZ64.get(route), StandardCharsets.UTF_8)
                            + "&compression=lz64"));
            default -> throw new IllegalArgumentException(encoding);
        }

        final HttpResponse<String> response = eddy.send(request.build());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"status\":1}");
        final List<Recorded> arrived = recorder.await(r -> r.event().distinctId().equals(distinctId), 1, WAIT);
        assertThat(arrived).hasSize(1);
        final Recorded record = arrived.get(0);
        assertThat(record.topic()).isEqualTo(eddy.topic("events.ingest"));
        assertThat(record.key()).isEqualTo(TOKEN + ":" + distinctId);
        final CapturedEvent event = record.event();
        assertThat(event.event()).isEqualTo(encoding + "-event");
        assertThat(event.token()).isEqualTo(TOKEN);
        assertThat(event.projectId()).isEqualTo(1);
        assertThat(event.properties().get("enc").asText()).isEqualTo(encoding);
        assertThat(event.properties().get("word").asText()).isEqualTo("ünï");
        assertThat(event.ip()).isEqualTo("127.0.0.1");
        assertThat(event.siteUrl()).isEqualTo("http://127.0.0.1:" + eddy.eddy().port());
        assertThat(event.timestamp()).isBetween(Instant.now().minusSeconds(60), Instant.now());
    }

    @Test
    void getWithDataParameterAndBeaconAnswers204() throws Exception {
        final String id = "get-" + UUID.randomUUID();
        final String data = Base64.getEncoder().encodeToString(("{\"api_key\":\"" + TOKEN + "\",\"event\":\"get-event\","
                + "\"distinct_id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8));

        final HttpResponse<String> response = eddy.get("/e/?beacon=1&data=" + URLEncoder.encode(data, StandardCharsets.UTF_8), Map.of());

        assertThat(response.statusCode()).isEqualTo(204);
        assertThat(recorder.await(r -> r.event().distinctId().equals(id), 1, WAIT)).hasSize(1);
    }

    @Test
    void rawJsonLabelledAsAFormIsTheCurlDashDPayload() throws Exception {
        final String id = "curl-" + UUID.randomUUID();
        final HttpResponse<String> response = eddy.send(HttpRequest.newBuilder(eddy.uri("/capture/"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("{\"api_key\":\"" + TOKEN + "\",\"event\":\"curl\",\"distinct_id\":\""
                        + id + "\",\"properties\":{\"url\":\"https://x.test/?a=1&b=2\"}}")).build());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final List<Recorded> arrived = recorder.await(r -> r.event().distinctId().equals(id), 1, WAIT);
        assertThat(arrived.get(0).event().event()).isEqualTo("curl");
        assertThat(arrived.get(0).event().properties().get("url").asText()).isEqualTo("https://x.test/?a=1&b=2");
    }

    @Test
    void batchKeepsItsValidEventsAndSilentlyDropsTheSeedsInvalidOnes() throws Exception {
        final String id = "mixed-" + UUID.randomUUID();
        final double droppedBefore = dropped("missing_event_name") + dropped("missing_distinct_id") + dropped("empty_distinct_id");
        final String body = "{\"api_key\":\"" + TOKEN + "\",\"sent_at\":\"" + Instant.now() + "\",\"batch\":["
                + "{\"event\":\"kept-1\",\"properties\":{\"distinct_id\":\"" + id + "\"}},"
                + "{\"properties\":{\"distinct_id\":\"" + id + "\"}},"
                + "{\"event\":\"no-distinct-id\"},"
                + "{\"event\":\"empty-distinct-id\",\"distinct_id\":\"\"},"
                + "{\"event\":\"kept-2\",\"distinct_id\":\"" + id + "\"}]}";

        final HttpResponse<String> response = eddy.post("/batch/", body);

        assertThat(response.statusCode()).isEqualTo(200);
        final List<Recorded> kept = recorder.await(r -> r.event().distinctId().equals(id), 2, WAIT);
        assertThat(kept).extracting(r -> r.event().event()).containsExactly("kept-1", "kept-2");
        // A marker for the same distinct id, sent after the batch's 200, lands behind its events on the same partition.
        assertThat(eddy.post("/capture/", "{\"api_key\":\"" + TOKEN + "\",\"event\":\"marker\",\"distinct_id\":\"" + id + "\"}")
                .statusCode()).isEqualTo(200);
        recorder.await(r -> r.event().distinctId().equals(id) && r.event().event().equals("marker"), 1, WAIT);
        assertThat(recorder.matching(r -> r.event().distinctId().equals(id))).extracting(r -> r.event().event())
                .containsExactly("kept-1", "kept-2", "marker");
        assertThat(dropped("missing_event_name") + dropped("missing_distinct_id") + dropped("empty_distinct_id") - droppedBefore)
                .isEqualTo(3.0);
    }

    @Test
    void historicalMigrationGoesToItsOwnTopicInOrder() throws Exception {
        final String id = "history-" + UUID.randomUUID();
        final StringBuilder batch = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"event\":\"replayed\",\"distinct_id\":\"").append(id)
                    .append("\",\"timestamp\":\"2021-03-0").append(1 + i % 9).append("T10:00:00Z\",\"properties\":{\"seq\":")
                    .append(i).append("}}");
        }

        final HttpResponse<String> response = eddy.post("/batch/",
                "{\"api_key\":\"" + TOKEN + "\",\"historical_migration\":true,\"batch\":[" + batch + "]}");

        assertThat(response.statusCode()).isEqualTo(200);
        final List<Recorded> replayed = recorder.await(r -> r.event().distinctId().equals(id), 200, WAIT);
        assertThat(replayed).hasSize(200).allMatch(r -> r.topic().equals(eddy.topic("events.historical")));
        assertThat(replayed.stream().map(Recorded::partition).distinct()).hasSize(1);
        assertThat(replayed.stream().sorted(java.util.Comparator.comparingLong(Recorded::offset))
                .map(r -> r.event().properties().get("seq").asInt()))
                .containsExactlyElementsOf(IntStream.range(0, 200).boxed().toList());
        assertThat(replayed.get(0).event().timestamp()).isEqualTo(Instant.parse("2021-03-01T10:00:00Z"));
        eddy.waitUntil(() -> total("replayed", "2021-03-01", "2021-03-10") == 200, WAIT, "historical events counted");
    }

    @Test
    void aBurstFromOneUserSpillsToTheUnkeyedOverflowTopicAndIsStillCounted() throws Exception {
        final String id = "hot-" + UUID.randomUUID();
        final String events = String.join(",", IntStream.range(0, 60)
                .mapToObj(i -> "{\"event\":\"burst\",\"distinct_id\":\"" + id + "\"}").toList());

        final HttpResponse<String> response = eddy.post("/batch/", "{\"api_key\":\"" + TOKEN + "\",\"batch\":[" + events + "]}");

        assertThat(response.statusCode()).isEqualTo(200);
        final List<Recorded> all = recorder.await(r -> r.event().distinctId().equals(id), 60, WAIT);
        assertThat(all).hasSize(60);
        final List<Recorded> live = all.stream().filter(r -> r.topic().equals(eddy.topic("events.ingest"))).toList();
        final List<Recorded> spilled = all.stream().filter(r -> r.topic().equals(eddy.topic("events.overflow"))).toList();
        assertThat(live.size()).as("the burst capacity, plus at most what refilled meanwhile").isBetween(20, 22);
        assertThat(spilled).hasSize(60 - live.size()).allMatch(r -> r.key() == null);
        eddy.waitUntil(() -> total("burst", null, null) == 60, WAIT, "every burst event counted");
    }

    @Test
    void oversizedBatchIs413AndNothingOfItIsProduced() {
        final String id = "huge-" + UUID.randomUUID();
        final String body = "{\"api_key\":\"" + TOKEN + "\",\"batch\":[{\"event\":\"huge\",\"distinct_id\":\"" + id
                + "\",\"properties\":{\"blob\":\"" + "x".repeat(21 * 1024 * 1024) + "\"}}]}";

        final HttpResponse<String> response = eddy.post("/batch/", body);

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(recorder.matching(r -> r.event().distinctId().equals(id))).isEmpty();
    }

    @Test
    void undecodableBodiesAre400() {
        assertThat(eddy.send(HttpRequest.newBuilder(eddy.uri("/e/?compression=gzip"))
                .POST(HttpRequest.BodyPublishers.ofString("not gzip")).build()).statusCode()).isEqualTo(400);
        assertThat(eddy.send(HttpRequest.newBuilder(eddy.uri("/e/")).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("data=%%%")).build()).statusCode()).isEqualTo(400);
        final HttpResponse<String> deep = eddy.post("/e/", "{\"api_key\":\"" + TOKEN + "\",\"event\":\"e\",\"distinct_id\":\"d\","
                + "\"properties\":" + "[".repeat(500) + "]".repeat(500) + "}");
        assertThat(deep.statusCode()).isEqualTo(400);
        assertThat(TestEddy.json(deep).get("type").asText()).isEqualTo("validation_error");
    }

    @Test
    void corsPreflightIsAnsweredForBrowserSdks() {
        final HttpResponse<String> response = eddy.send(HttpRequest.newBuilder(eddy.uri("/e/"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://app.example.com")
                .header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "content-type").build());

        assertThat(response.statusCode()).isBetween(200, 204);
        assertThat(response.headers().firstValue("Access-Control-Allow-Origin")).contains("https://app.example.com");
    }

    private static long total(final String event, final String from, final String to) {
        final String path = "/api/projects/1/event_counts/?event=" + event + (from == null ? "" : "&date_from=" + from + "&date_to=" + to);
        final HttpResponse<String> response = eddy.getAuthorized(path);
        return response.statusCode() == 200 ? TestEddy.json(response).get("total").asLong() : -1;
    }

    private static double dropped(final String reason) {
        final String metrics = eddy.get("/metrics", Map.of()).body();
        return metrics.lines().filter(l -> l.startsWith("eddy_capture_events_dropped_total{") && l.contains("reason=\"" + reason + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    private static byte[] gzip(final String text) throws IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }
}
