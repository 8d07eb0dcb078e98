package dev.eddy.gateway.flags;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.flags.FlagDefinition;
import dev.eddy.flags.FlagEvaluator;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.capture.PayloadDecoder;
import dev.eddy.gateway.capture.ProjectTokens;
import dev.eddy.gateway.capture.RequestPayload;
import dev.eddy.gateway.geoip.GeoIp;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.ClientAddress;
import dev.eddy.gateway.http.PublicCors;
import dev.eddy.gateway.http.Responses;
import dev.eddy.gateway.sdk.RemoteConfig;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The public flag endpoints SDKs call, authenticated by the project API key in the body ({@code token},
 * {@code $token} or {@code api_key}): {@code POST /decide/?v=2|3} (v4 and later answer like {@code /flags?v=2}) and
 * {@code POST /flags/?v=1|2}, with PostHog's configuration keys ({@link RemoteConfig}) in every {@code /decide} answer
 * and in {@code /flags} answers asked with {@code config=true} (or with neither {@code v} nor {@code config}, which
 * PostHog reads as {@code v=2&config=true}). Bodies are read like capture's ({@link RequestPayload}): JSON, gzip,
 * base64, or a form's base64 {@code data=} as posthog-js sends when it has not learnt that gzip is accepted. The
 * request may restrict the flags evaluated ({@code flag_keys}, {@code flag_keys_to_evaluate}) or ask for none
 * ({@code disable_flags}, for the configuration alone). A {@code GET} evaluates nothing and answers the empty shape,
 * a {@code HEAD} 200, as PostHog's flags service.
 */
public final class DecideRoutes {
    private static final int MAX_BODY_BYTES = 1024 * 1024;
    private static final int RETRY_AFTER_SECONDS = 5;

    private final ProjectTokens tokens;
    private final AuthFailureLimiter failures;
    private final FlagsRateLimiter limiter;
    private final FlagsService flags;
    private final GeoIp geoIp;
    private final PayloadDecoder decoder = new PayloadDecoder(MAX_BODY_BYTES * 4);

    /**
     * @param failures the per-address limiter of failed authentications (unknown tokens)
     * @param limiter  the per-token rate limit
     * @param geoIp    derives {@code $geoip_*} person properties from the client's address
     */
    public DecideRoutes(final ProjectTokens tokens, final AuthFailureLimiter failures, final FlagsRateLimiter limiter,
                        final FlagsService flags, final GeoIp geoIp) {
        this.tokens = tokens;
        this.failures = failures;
        this.limiter = limiter;
        this.flags = flags;
        this.geoIp = geoIp;
    }

    public void mount(final Router router) {
        for (final String path : List.of("/decide", "/flags")) {
            final boolean flagsEndpoint = "/flags".equals(path);
            router.route(path).method(HttpMethod.POST).method(HttpMethod.GET).method(HttpMethod.HEAD).method(HttpMethod.OPTIONS)
                    .handler(PublicCors.handler())
                    .handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES))
                    .handler(ctx -> {
                        final Shape shape = Shape.of(ctx, flagsEndpoint);
                        switch (ctx.request().method().name()) {
                            case "HEAD" -> ctx.response().end();
                            case "GET" -> send(ctx, shape, FlagsService.Evaluation.NONE);
                            default -> answer(ctx, shape);
                        }
                    });
        }
    }

    /**
     * How the answer is written.
     *
     * @param flagsV2 the flags-v2 shape ({@code flags: {key: {...}}}), else the legacy one ({@code featureFlags})
     * @param everyFlag in the legacy shape, every flag with its value (v3 and later), else only enabled ones (v2)
     * @param config whether the configuration keys are added
     */
    record Shape(boolean flagsV2, boolean everyFlag, boolean config) {
        static Shape of(final RoutingContext ctx, final boolean flagsEndpoint) {
            final String v = Optional.ofNullable(ctx.queryParams().get("v")).orElse(ctx.queryParams().get("version"));
            final String config = ctx.queryParams().get("config");
            if (!flagsEndpoint) {
                final int version = version(v);
                return new Shape(version >= 4, version >= 3, true);
            }
            if (v == null && config == null) {
                return new Shape(true, true, true);
            }
            return new Shape(version(v) >= 2, true, config != null && !FALSE.contains(config.trim().toLowerCase(Locale.ROOT)));
        }

        private static int version(final String v) {
            try {
                return v == null ? 1 : Integer.parseInt(v.trim());
            } catch (final NumberFormatException e) {
                return 1;
            }
        }
    }

    /** What PostHog's flags service reads as {@code config=false}; a bare {@code config} or any other value is true. */
    private static final Set<String> FALSE = Set.of("false", "0", "no", "off");

    private void answer(final RoutingContext ctx, final Shape shape) {
        final ObjectNode body = body(ctx);
        final String token = text(body, "token", "$token", "api_key").orElseThrow(() -> ApiError.unauthenticated("missing_api_key",
                "API key not provided. You can find your project API key in your project settings."));
        final String distinctId = text(body, "distinct_id", "$distinct_id").orElseThrow(() ->
                ApiError.badRequest("missing_distinct_id", "Decide requires a distinct_id.", "distinct_id"));
        limiter.check(token).ifPresent(limited -> {
            throw limited;
        });
        final boolean disabled = body.path("disable_flags").asBoolean(false);
        tokens.authenticate(token, AuthFailureLimiter.address(ctx), failures, Vertx.currentContext())
                .recover(e -> Future.failedFuture(e instanceof ApiError refused ? refused : ApiError.unavailable("database_unavailable",
                        "Cannot check the project API key right now; retry.", RETRY_AFTER_SECONDS)))
                .compose(project -> project.isEmpty()
                        ? Future.failedFuture(ApiError.unauthenticated("invalid_api_key",
                                "Project API key invalid. You can find your project API key in your project settings."))
                        : disabled ? Future.succeededFuture(FlagsService.Evaluation.NONE)
                        : flags.evaluate(new FlagsService.Request(project.get(), token, distinctId, anonDistinctId(body),
                                groups(body), personProperties(ctx, body), groupProperties(body), flagKeys(body))))
                .onSuccess(evaluation -> send(ctx, shape, evaluation))
                .onFailure(ctx::fail);
    }

    private static void send(final RoutingContext ctx, final Shape shape, final FlagsService.Evaluation evaluation) {
        if (shape.flagsV2()) {
            ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, Responses.JSON).end(flagsShape(evaluation, shape.config()));
        } else {
            Responses.json(ctx, 200, decideShape(evaluation, shape.everyFlag(), shape.config()));
        }
    }

    /**
     * The legacy shape: {@code /decide} v2 (enabled flags only) and v3, {@code /flags} v1 (every flag, payloads of the
     * enabled ones).
     */
    private static ObjectNode decideShape(final FlagsService.Evaluation evaluation, final boolean everyFlag, final boolean config) {
        final ObjectNode body = Json.mapper().createObjectNode();
        body.put("errorsWhileComputingFlags", evaluation.errors());
        final ObjectNode featureFlags = body.putObject("featureFlags");
        final ObjectNode payloads = body.putObject("featureFlagPayloads");
        for (final FlagEvaluator.Result r : evaluation.results()) {
            if (everyFlag || r.enabled()) {
                featureFlags.set(r.key(), Json.mapper().valueToTree(r.value()));
            }
            if (r.enabled()) {
                r.payload().ifPresent(p -> payloads.set(r.key(), p));
            }
        }
        body.put("requestId", UUID.randomUUID().toString());
        // When the flags were evaluated, in epoch milliseconds, as PostHog's flags service answers in every shape.
        body.put("evaluatedAt", System.currentTimeMillis());
        if (config) {
            RemoteConfig.addToFlagsAnswer(body);
        }
        return body;
    }

    /** The configuration keys as JSON object members, the same for every project: written once. */
    private static final byte[] CONFIG_MEMBERS = configMembers();

    private static byte[] configMembers() {
        final ObjectNode config = Json.mapper().createObjectNode();
        RemoteConfig.addToFlagsAnswer(config);
        final byte[] object = config.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return Arrays.copyOfRange(object, 1, object.length - 1);
    }

    /**
     * {@code /flags?v=2} and {@code /decide?v=4}: each flag with its value, reason and metadata, then {@code requestId}
     * and {@code evaluatedAt}. This is the hottest answer Eddy gives: each flag's entry is the same bytes for every user
     * who gets the same outcome, so entries are written once per (flag version, outcome) and the answer is their
     * concatenation.
     */
    static Buffer flagsShape(final FlagsService.Evaluation evaluation, final boolean config) {
        final byte[][] entries = new byte[evaluation.results().size()][];
        int size = 128 + (config ? CONFIG_MEMBERS.length : 0);
        for (int i = 0; i < entries.length; i++) {
            final FlagEvaluator.Result r = evaluation.results().get(i);
            final FlagDefinition definition = evaluation.definitions().get(r.key());
            entries[i] = ENTRIES.get(new Outcome(definition.id(), definition.version(), r), DecideRoutes::entry);
            size += entries[i].length + 1;
        }
        final Buffer out = Buffer.buffer(size);
        out.appendString(evaluation.errors() ? "{\"errorsWhileComputingFlags\":true,\"flags\":{"
                : "{\"errorsWhileComputingFlags\":false,\"flags\":{");
        for (int i = 0; i < entries.length; i++) {
            if (i > 0) {
                out.appendByte((byte) ',');
            }
            out.appendBytes(entries[i]);
        }
        out.appendString("},\"requestId\":\"").appendString(UUID.randomUUID().toString())
                .appendString("\",\"evaluatedAt\":").appendString(Long.toString(System.currentTimeMillis()));
        if (config) {
            out.appendByte((byte) ',').appendBytes(CONFIG_MEMBERS);
        }
        return out.appendByte((byte) '}');
    }

    /**
     * One flag's outcome for a user. The payload follows from the flag's version and the value, so it takes no part
     * in equality (comparing JSON trees would cost more than writing them).
     */
    private static final class Outcome {
        private final long flagId;
        private final long version;
        private final FlagEvaluator.Result result;
        private final int hash;

        Outcome(final long flagId, final long version, final FlagEvaluator.Result result) {
            this.flagId = flagId;
            this.version = version;
            this.result = result;
            int h = Long.hashCode(flagId) * 31 + Long.hashCode(version);
            h = h * 31 + result.key().hashCode();
            h = h * 31 + (result.enabled() ? 1 : 0);
            h = h * 31 + result.variant().hashCode();
            h = h * 31 + result.reason().hashCode();
            this.hash = h * 31 + result.conditionIndex().hashCode();
        }

        @Override
        public boolean equals(final Object o) {
            return o instanceof Outcome other && hash == other.hash && flagId == other.flagId && version == other.version
                    && result.enabled() == other.result.enabled() && result.key().equals(other.result.key())
                    && result.variant().equals(other.result.variant()) && result.reason().equals(other.result.reason())
                    && result.conditionIndex().equals(other.result.conditionIndex());
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Written entries; a few per flag version (conditions times variants), so this bound is generous. */
    private static final com.github.benmanes.caffeine.cache.Cache<Outcome, byte[]> ENTRIES =
            com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(100_000).build();

    /** {@code "key": {key, enabled, variant, reason: {code, condition_index, description}, metadata: {...}}}. */
    private static byte[] entry(final Outcome outcome) {
        final FlagEvaluator.Result r = outcome.result;
        final ByteArrayBuilder out = new ByteArrayBuilder(Json.mapper().getFactory()._getBufferRecycler(), 512);
        try (JsonGenerator gen = Json.mapper().getFactory().createGenerator(out)) {
            gen.writeStartObject();
            gen.writeObjectFieldStart(r.key());
            gen.writeStringField("key", r.key());
            gen.writeBooleanField("enabled", r.enabled());
            gen.writeFieldName("variant");
            if (r.variant().isPresent()) {
                gen.writeString(r.variant().get());
            } else {
                gen.writeNull();
            }
            gen.writeObjectFieldStart("reason");
            gen.writeStringField("code", r.reason());
            gen.writeFieldName("condition_index");
            if (r.conditionIndex().isPresent()) {
                gen.writeNumber(r.conditionIndex().get());
            } else {
                gen.writeNull();
            }
            gen.writeStringField("description", r.description());
            gen.writeEndObject();
            gen.writeObjectFieldStart("metadata");
            gen.writeNumberField("id", outcome.flagId);
            gen.writeNumberField("version", outcome.version);
            gen.writeNullField("description");
            gen.writeFieldName("payload");
            if (r.payload().isPresent()) {
                Json.mapper().writeTree(gen, r.payload().get());
            } else {
                gen.writeNull();
            }
            gen.writeEndObject();
            gen.writeEndObject();
            gen.writeEndObject();
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException("cannot write a flags answer", e);
        }
        final byte[] object = out.toByteArray();
        out.release();
        // The entry without the wrapping object's braces: "key":{...}
        return Arrays.copyOfRange(object, 1, object.length - 1);
    }

    private ObjectNode body(final RoutingContext ctx) {
        final byte[] json = decoder.decode(RequestPayload.of(ctx));
        try {
            final JsonNode node = Json.mapper().readTree(json);
            if (node == null || !node.isObject()) {
                throw ApiError.badRequest("invalid_payload", "The body must be a JSON object.", null);
            }
            return (ObjectNode) node;
        } catch (final JacksonException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data: " + e.getOriginalMessage(), null);
        } catch (final IOException e) {
            throw ApiError.badRequest("invalid_payload", "Malformed request data.", null);
        }
    }

    /** The first of {@code fields} holding a non-blank string or number, trimmed (PostHog's aliases of a field). */
    private static Optional<String> text(final ObjectNode body, final String... fields) {
        for (final String field : fields) {
            final JsonNode value = body.get(field);
            if (value != null && (value.isTextual() || value.isNumber()) && !value.asText().isBlank()) {
                return Optional.of(value.asText().trim());
            }
        }
        return Optional.empty();
    }

    /**
     * The flags the request restricts the answer to, if it does: {@code flag_keys} (posthog-js) or
     * {@code flag_keys_to_evaluate} (the server SDKs).
     */
    private static Optional<Set<String>> flagKeys(final ObjectNode body) {
        final JsonNode keys = body.has("flag_keys") ? body.get("flag_keys") : body.get("flag_keys_to_evaluate");
        if (keys == null || !keys.isArray()) {
            return Optional.empty();
        }
        final Set<String> wanted = new HashSet<>();
        keys.forEach(key -> {
            if (key.isTextual()) {
                wanted.add(key.asText());
            }
        });
        return Optional.of(wanted);
    }

    private static Optional<String> anonDistinctId(final ObjectNode body) {
        final JsonNode anon = body.get("$anon_distinct_id");
        return anon != null && anon.isValueNode() && !anon.isNull() && !anon.asText().isBlank()
                ? Optional.of(anon.asText()) : Optional.empty();
    }

    /**
     * The request's person property overrides over PostHog's {@code $geoip_*} properties of the client's address
     * (unless the request sets {@code geoip_disable}).
     */
    private ObjectNode personProperties(final RoutingContext ctx, final ObjectNode body) {
        final ObjectNode properties = body.path("geoip_disable").asBoolean(false)
                ? Json.mapper().createObjectNode()
                : geoIp.flagProperties(ClientAddress.of(ctx));
        properties.setAll(object(body.has("person_properties") ? body.get("person_properties") : body.get("$properties")));
        return properties;
    }

    private static Map<String, String> groups(final ObjectNode body) {
        final Map<String, String> groups = new HashMap<>();
        final JsonNode given = body.has("groups") ? body.path("groups") : body.path("$groups");
        for (final Iterator<Map.Entry<String, JsonNode>> it = given.fields(); it.hasNext();) {
            final Map.Entry<String, JsonNode> group = it.next();
            if (group.getValue().isValueNode() && !group.getValue().isNull()) {
                groups.put(group.getKey(), group.getValue().asText());
            }
        }
        return groups;
    }

    private static Map<String, ObjectNode> groupProperties(final ObjectNode body) {
        final Map<String, ObjectNode> result = new HashMap<>();
        final JsonNode given = body.path("group_properties");
        for (final Iterator<Map.Entry<String, JsonNode>> it = given.fields(); it.hasNext();) {
            final Map.Entry<String, JsonNode> group = it.next();
            if (group.getValue().isObject()) {
                result.put(group.getKey(), (ObjectNode) group.getValue());
            }
        }
        return result;
    }

    private static ObjectNode object(final JsonNode node) {
        return node != null && node.isObject() ? (ObjectNode) node : Json.mapper().createObjectNode();
    }
}
