package dev.eddy.gateway.capture;

import dev.eddy.config.CaptureConfig;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.ClientAddress;
import dev.eddy.gateway.http.PublicCors;
import dev.eddy.gateway.http.Responses;
import dev.eddy.topology.EddyTopics;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.CorsHandler;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Public ingestion on every path PostHog SDKs call ({@code /capture}, {@code /batch}, {@code /e},
 * {@code /i/v0/e}, {@code /track}, {@code /engage}; GET, POST and CORS preflight). Authenticated by the project
 * API key in the payload; answers {@code {"status": 1}} (or 204 for {@code beacon=1}) only after Kafka
 * acknowledged every event of the request. Which events are kept and where they go is {@link CaptureAdmission}'s;
 * {@link EventProducer} only writes.
 */
public final class CaptureRoutes {
    private static final Logger LOG = LoggerFactory.getLogger(CaptureRoutes.class);
    private static final Map<String, Integer> OK = Map.of("status", 1);
    private static final int RETRY_AFTER_SECONDS = 5;
    private static final List<String> EVENT_PATHS = List.of("/capture", "/e", "/i/v0/e", "/track", "/engage");
    private static final String BATCH_PATH = "/batch";
    private static final String ENGAGE_PATH = "/engage";
    private static final Instant EARLIEST_CLOCK = Instant.parse("2021-01-01T00:00:00Z");

    private final ProjectTokens tokens;
    private final AuthFailureLimiter failures;
    private final EventProducer producer;
    private final CaptureConfig limits;
    private final PayloadDecoder decoder;
    private final CaptureAdmission admission;
    private final GeoIpTransformation geoip;

    /** @param geoip PostHog's GeoIP transformation, applied to every event but a historical migration's */
    public CaptureRoutes(final ProjectTokens tokens, final AuthFailureLimiter failures, final EventProducer producer,
                         final EddyTopics topics, final CaptureConfig limits, final MeterRegistry registry,
                         final GeoIpTransformation geoip) {
        this.tokens = tokens;
        this.failures = failures;
        this.producer = producer;
        this.limits = limits;
        this.decoder = new PayloadDecoder(limits.maxDecodedBytes());
        this.admission = new CaptureAdmission(topics, limits.overflow(), registry);
        this.geoip = geoip;
    }

    public void mount(final Router router) {
        // Browser SDKs post from any site: answer CORS for every origin, as PostHog's capture does.
        final CorsHandler cors = PublicCors.handler();
        for (final String path : EVENT_PATHS) {
            mount(router, cors, path, limits.maxEventBodyBytes());
        }
        mount(router, cors, BATCH_PATH, limits.maxBatchBodyBytes());
    }

    private void mount(final Router router, final CorsHandler cors, final String path, final int bodyLimit) {
        final boolean engage = ENGAGE_PATH.equals(path);
        router.route(path).method(HttpMethod.GET).method(HttpMethod.POST).method(HttpMethod.OPTIONS)
                .handler(cors)
                // Bounded while streaming: past the limit the request fails with 413 before more is read.
                // File uploads off: a public route never writes request data to disk.
                .handler(BodyHandler.create(false).setBodyLimit(bodyLimit))
                .handler(ctx -> capture(ctx, engage));
    }

    private void capture(final RoutingContext ctx, final boolean engage) {
        final CaptureRequest request = CaptureRequest.parse(decoder.decode(RequestPayload.of(ctx)));
        final String token = request.token().orElseThrow(() -> ApiError.unauthenticated("missing_api_key",
                "API key not provided. You can find your project API key in your project settings."));
        final Instant now = Instant.now();
        final Optional<Instant> sentAt = request.sentAt().or(() -> legacySentAt(ctx));
        // Every continuation runs on this request's event loop.
        final Context loop = Vertx.currentContext();
        tokens.authenticate(token, AuthFailureLimiter.address(ctx), failures, loop)
                .recover(e -> Future.failedFuture(e instanceof ApiError refused ? refused : ApiError.unavailable("database_unavailable",
                        "Cannot check the project API key right now; retry.", RETRY_AFTER_SECONDS)))
                .compose(project -> {
                    if (project.isEmpty()) {
                        return Future.failedFuture(ApiError.unauthenticated("invalid_api_key",
                                "Project API key invalid. You can find your project API key in your project settings."));
                    }
                    final String address = ClientAddress.of(ctx);
                    // A historical migration replays events as first captured, with the addresses and locations derived then.
                    final EventBuilder.RequestContext context = new EventBuilder.RequestContext(project.get(), token, now,
                            sentAt, address, siteUrl(ctx), engage ? Optional.of("$identify") : Optional.empty(),
                            request.historical() ? GeoIpTransformation.Lookups.NONE : geoip.forRequest(address), request.historical());
                    return producer.send(loop, admission.admit(request, context));
                })
                .onSuccess(v -> {
                    if ("1".equals(ctx.queryParams().get("beacon"))) {
                        ctx.response().setStatusCode(204).end();
                    } else {
                        Responses.json(ctx, 200, OK);
                    }
                })
                .onFailure(e -> ctx.fail(asApiError(e)));
    }

    /**
     * The client's clock from the query, for requests whose body has no {@code sent_at}: {@code sent_at} or, from old
     * SDKs, {@code _}, in epoch milliseconds. As in PostHog's capture, a value before 2021 is no clock (seconds, say).
     */
    private static Optional<Instant> legacySentAt(final RoutingContext ctx) {
        final String millis = Optional.ofNullable(ctx.queryParams().get("sent_at")).orElse(ctx.queryParams().get("_"));
        if (millis == null || !millis.matches("\\d{1,16}")) {
            return Optional.empty();
        }
        final Instant sent = Instant.ofEpochMilli(Long.parseLong(millis));
        return sent.isAfter(EARLIEST_CLOCK) ? Optional.of(sent) : Optional.empty();
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

    private static String siteUrl(final RoutingContext ctx) {
        return ctx.request().scheme() + "://" + ctx.request().authority();
    }
}
