package dev.eddy.gateway.capture;

import dev.eddy.config.CaptureConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Public ingestion: {@code POST /capture/} (one event) and {@code POST /batch/}. Authenticated by the project
 * API key in the body; answers {@code {"status": 1}} only after Kafka acknowledged every event of the request.
 */
public final class CaptureRoutes {
    private static final Logger LOG = LoggerFactory.getLogger(CaptureRoutes.class);
    private static final Map<String, Integer> OK = Map.of("status", 1);
    private static final int RETRY_AFTER_SECONDS = 5;

    private final ProjectTokens tokens;
    private final EventProducer producer;
    private final String ingestTopic;
    private final CaptureConfig limits;

    public CaptureRoutes(final ProjectTokens tokens, final EventProducer producer, final String ingestTopic,
                         final CaptureConfig limits) {
        this.tokens = tokens;
        this.producer = producer;
        this.ingestTopic = ingestTopic;
        this.limits = limits;
    }

    public void mount(final Router router) {
        // File uploads off: a public route must never write request data to disk.
        router.post("/capture").handler(BodyHandler.create(false).setBodyLimit(limits.maxEventBodyBytes())).handler(this::capture);
        router.post("/batch").handler(BodyHandler.create(false).setBodyLimit(limits.maxBatchBodyBytes())).handler(this::capture);
    }

    private void capture(final RoutingContext ctx) {
        final CaptureRequest request = CaptureRequest.parse(ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes());
        final String token = request.token().orElseThrow(() -> ApiError.unauthenticated("missing_api_key",
                "API key not provided. You can find your project API key in your project settings."));
        final Instant now = Instant.now();
        final String ip = clientIp(ctx);
        tokens.projectOf(token)
                .recover(e -> Future.failedFuture(ApiError.unavailable("database_unavailable",
                        "Cannot check the project API key right now; retry.", RETRY_AFTER_SECONDS)))
                .compose(project -> {
                    if (project.isEmpty()) {
                        return Future.failedFuture(ApiError.unauthenticated("invalid_api_key",
                                "Project API key invalid. You can find your project API key in your project settings."));
                    }
                    final List<CapturedEvent> events = new ArrayList<>(request.events().size());
                    request.events().forEach(raw ->
                            EventBuilder.build(raw, project.get(), token, now, ip).ifPresent(events::add));
                    return producer.send(ctx.vertx().getOrCreateContext(), ingestTopic, events);
                })
                .onSuccess(v -> Responses.json(ctx, 200, OK))
                .onFailure(e -> ctx.fail(asApiError(e)));
    }

    private static Throwable asApiError(final Throwable e) {
        if (e instanceof ApiError) {
            return e;
        }
        if (e instanceof EventProducer.Overloaded) {
            return ApiError.unavailable("overloaded", "Eddy is receiving more events than it can write; retry.", 1);
        }
        if (e instanceof KafkaException) {
            LOG.warn("events not acknowledged by Kafka: {}", e.toString());
            return ApiError.unavailable("kafka_unavailable", "Events were not stored; retry.", RETRY_AFTER_SECONDS);
        }
        return e;
    }

    private static String clientIp(final RoutingContext ctx) {
        final String forwarded = ctx.request().getHeader("X-Forwarded-For");
        if (forwarded != null && !forwarded.isBlank()) {
            final int comma = forwarded.indexOf(',');
            return (comma < 0 ? forwarded : forwarded.substring(0, comma)).trim();
        }
        return ctx.request().remoteAddress() == null ? null : ctx.request().remoteAddress().hostAddress();
    }
}
