package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.events.EventSerdes;
import dev.eddy.gateway.geoip.GeoIp;
import dev.eddy.gateway.http.ErrorHandler;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a client sees when Kafka does not acknowledge: 503 with Retry-After, never 200. The broker's failure
 * is simulated with Kafka's MockProducer; the happy path against a real broker is in CaptureRoutesIT.
 */
class CaptureUnavailableTest {
    private static final String BODY = "{\"api_key\":\"phc_known\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"u\"},"
            + "{\"event\":\"b\",\"distinct_id\":\"u\"}]}";

    private Vertx vertx;
    private HttpServer server;
    private MockProducer<String, byte[]> kafka;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        final EddyConfig config = ConfigLoader.load(Map.of(), Optional.empty());
        vertx = Vertx.vertx();
        kafka = new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
        final Router router = Router.router(vertx);
        new CaptureRoutes(new ProjectTokens(token -> Future.succeededFuture(Optional.of(1L))),
                new dev.eddy.gateway.auth.AuthFailureLimiter(config.rateLimits().authFailures()),
                new EventProducer(kafka),
                EddyTopics.of(config.kafka()), config.capture(), new SimpleMeterRegistry(),
                GeoIpTransformation.of(GeoIp.disabled())).mount(router);
        router.route().failureHandler(ErrorHandler::handle);
        server = vertx.createHttpServer().requestHandler(router).listen(0).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void noAcknowledgementIs503WithRetryAfter() throws Exception {
        final var response = http.sendAsync(post(), HttpResponse.BodyHandlers.ofString());
        awaitSent(2);
        kafka.completeNext();
        kafka.errorNext(new TimeoutException("Expiring 1 record(s): 10000 ms has passed since batch creation"));

        final HttpResponse<String> answer = response.get(10, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Retry-After")).contains("5");
        assertThat(answer.body()).contains("\"code\":\"kafka_unavailable\"");
    }

    @Test
    void notEnoughReplicasIs503() throws Exception {
        final var response = http.sendAsync(post(), HttpResponse.BodyHandlers.ofString());
        awaitSent(2);
        kafka.errorNext(new NotEnoughReplicasException("below min.insync.replicas"));

        assertThat(response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(503);
    }

    @Test
    void answersOnlyOnceEveryEventIsAcknowledged() throws Exception {
        final var response = http.sendAsync(post(), HttpResponse.BodyHandlers.ofString());
        awaitSent(2);
        kafka.completeNext();
        Thread.sleep(200);
        assertThat(response.isDone()).as("one of two events still unacknowledged").isFalse();

        kafka.completeNext();
        final HttpResponse<String> answer = response.get(10, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(kafka.history()).extracting(r -> EventSerdes.capturedEvent().deserializer().deserialize("t", r.value()).event())
                .containsExactly("a", "b");
    }

    private HttpRequest post() {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + "/batch/"))
                .POST(HttpRequest.BodyPublishers.ofString(BODY)).build();
    }

    private void awaitSent(final int records) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (kafka.history().size() < records && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(kafka.history()).hasSize(records);
    }
}
