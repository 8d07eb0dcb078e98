package dev.eddy.gateway.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.ErrorHandler;
import dev.eddy.serde.Json;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The internal protocol's messages: read strictly, and refused in another version. */
class InternalProtocolTest {

    @Test
    void aPartialRequestReadsBackAsWritten() {
        final InternalProtocol.PartialRequest sent = InternalProtocol.PartialRequest.of(Json.mapper().createObjectNode().put("project", 4),
                List.of(0, 3), Duration.ofMillis(1500));
        final InternalProtocol.PartialRequest read = decode(sent.encode(), false);
        assertThat(read).isEqualTo(sent);
        assertThat(read.timeout()).isEqualTo(Duration.ofMillis(1500));

        final InternalProtocol.PartialRequest whole = InternalProtocol.PartialRequest.whole(Json.mapper().createObjectNode(), Duration.ZERO);
        assertThat(decode(whole.encode(), true)).isEqualTo(whole);
        assertThat(whole.timeoutMs()).as("never a deadline already past").isEqualTo(1);
    }

    @Test
    void nothingIsFilledInByDefault() {
        for (final String[] bad : new String[][] {
                {"{\"partitions\":[1],\"timeout_ms\":100}", "request"},
                {"{\"request\":{},\"partitions\":[1]}", "timeout_ms"},
                {"{\"request\":{},\"partitions\":[1],\"timeout_ms\":\"100\"}", "timeout_ms"},
                {"{\"request\":{},\"partitions\":[1],\"timeout_ms\":0}", "timeout_ms"},
                {"{\"request\":{},\"timeout_ms\":100}", "partitions"},
                {"{\"request\":{},\"partitions\":[\"1\"],\"timeout_ms\":100}", "partitions"},
                {"{\"request\":{},\"partitions\":[-1],\"timeout_ms\":100}", "partitions"},
                {"[]", "request"},
                {"{", "request"}}) {
            assertThatThrownBy(() -> decode(bad[0], false)).as(bad[0]).isInstanceOfSatisfying(ApiError.class, e -> {
                assertThat(e.status()).isEqualTo(400);
                assertThat(e.attr()).isEqualTo(bad[1]);
            });
        }
        assertThatThrownBy(() -> decode("{\"request\":{},\"partitions\":[1],\"timeout_ms\":100}", true)).as("a gather names none")
                .isInstanceOf(ApiError.class);
    }

    @Test
    void anotherVersionIsRefusedWith422() throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            final Router router = Router.router(vertx);
            router.get("/_internal/x").handler(ctx -> {
                InternalProtocol.require(ctx);
                ctx.response().end("ok");
            });
            router.route().failureHandler(ErrorHandler::handle);
            final HttpServer server = vertx.createHttpServer().requestHandler(router).listen(0).toCompletionStage()
                    .toCompletableFuture().get(10, TimeUnit.SECONDS);
            final HttpClient http = HttpClient.newHttpClient();
            final URI uri = URI.create("http://127.0.0.1:" + server.actualPort() + "/_internal/x");

            final HttpResponse<String> none = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            final HttpResponse<String> older = http.send(HttpRequest.newBuilder(uri).header(InternalProtocol.HEADER, "0").build(),
                    HttpResponse.BodyHandlers.ofString());
            final HttpResponse<String> same = http.send(HttpRequest.newBuilder(uri)
                    .header(InternalProtocol.HEADER, Integer.toString(InternalProtocol.VERSION)).build(), HttpResponse.BodyHandlers.ofString());

            assertThat(none.statusCode()).isEqualTo(InternalProtocol.OTHER_VERSION);
            assertThat(older.statusCode()).isEqualTo(InternalProtocol.OTHER_VERSION);
            assertThat(older.body()).contains("\"code\":\"protocol_version\"").contains("version 0");
            assertThat(same.statusCode()).isEqualTo(200);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static InternalProtocol.PartialRequest decode(final String body, final boolean whole) {
        return InternalProtocol.PartialRequest.decode(body.getBytes(StandardCharsets.UTF_8), whole);
    }
}
