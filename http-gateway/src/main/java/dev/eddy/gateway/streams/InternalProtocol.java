package dev.eddy.gateway.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.serde.Json;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What instances say to each other on {@code /_internal}, versioned. Every request carries {@link #VERSION} in
 * {@value #HEADER} ({@link InstanceClient} adds it); an instance answers only its own version and refuses any other with
 * {@value #OTHER_VERSION} {@code protocol_version}, which the asking side takes as an instance of another release
 * (a rolling upgrade: retried until the deadline, as a rebalance is). Bodies are read strictly: a field missing or of the
 * wrong type is a 400 naming it, never a default.
 */
public final class InternalProtocol {
    /** This release's version of the messages below; raise it with any change an older instance would misread. */
    public static final int VERSION = 1;
    public static final String HEADER = "Eddy-Protocol";
    /** The status of a refusal of another version. */
    static final int OTHER_VERSION = 422;

    private InternalProtocol() {
    }

    /** {@code request} marked with this release's version. */
    static RequestOptions versioned(final RequestOptions request) {
        return request.putHeader(HEADER, Integer.toString(VERSION));
    }

    /** @throws ApiError {@value #OTHER_VERSION} unless the request speaks this release's version */
    static void require(final RoutingContext ctx) {
        final String version = ctx.request().getHeader(HEADER);
        if (!Integer.toString(VERSION).equals(version)) {
            throw ApiError.unprocessable("protocol_version", "This instance speaks version " + VERSION
                    + " of the internal protocol; the request is of version " + (version == null ? "none" : version) + ".");
        }
    }

    /**
     * A partial (the {@code partitions} an instance runs) or, with no partitions, a whole gathered by the instance asked.
     *
     * @param request   the read's own request, as its {@code PartitionRead} reads it
     * @param timeoutMs what is left of the query's time
     */
    record PartialRequest(JsonNode request, List<Integer> partitions, long timeoutMs) {
        static PartialRequest whole(final JsonNode request, final Duration remaining) {
            return new PartialRequest(request, List.of(), Math.max(1, remaining.toMillis()));
        }

        static PartialRequest of(final JsonNode request, final List<Integer> partitions, final Duration remaining) {
            return new PartialRequest(request, List.copyOf(partitions), Math.max(1, remaining.toMillis()));
        }

        String encode() {
            final ObjectNode body = Json.mapper().createObjectNode();
            body.set("request", request);
            partitions.forEach(body.putArray("partitions")::add);
            body.put("timeout_ms", timeoutMs);
            return body.toString();
        }

        Duration timeout() {
            return Duration.ofMillis(timeoutMs);
        }

        /** @param whole whether a whole is asked (no partitions) rather than a partial (at least one) */
        static PartialRequest decode(final byte[] bytes, final boolean whole) {
            final JsonNode body;
            try {
                body = Json.mapper().readTree(bytes);
            } catch (final IOException e) {
                throw invalid("request", "The body must be a partial request (JSON).");
            }
            if (body == null || !body.isObject()) {
                throw invalid("request", "The body must be a partial request (a JSON object).");
            }
            final JsonNode request = body.get("request");
            if (request == null || request.isNull()) {
                throw invalid("request", "A partial request needs its read's request.");
            }
            final JsonNode timeout = body.get("timeout_ms");
            if (timeout == null || !timeout.canConvertToLong() || !timeout.isIntegralNumber() || timeout.asLong() < 1) {
                throw invalid("timeout_ms", "A partial request needs timeout_ms, a positive number of milliseconds.");
            }
            final JsonNode given = body.get("partitions");
            final List<Integer> partitions = new ArrayList<>();
            if (given != null) {
                if (!given.isArray()) {
                    throw invalid("partitions", "partitions must be a list of partition numbers.");
                }
                for (final JsonNode p : given) {
                    if (!p.isInt() || p.asInt() < 0) {
                        throw invalid("partitions", "partitions must be a list of partition numbers.");
                    }
                    partitions.add(p.asInt());
                }
            }
            if (whole != partitions.isEmpty()) {
                throw invalid("partitions", whole ? "A gather names no partitions." : "A partial request names its partitions.");
            }
            return new PartialRequest(request, List.copyOf(partitions), timeout.asLong());
        }

        private static ApiError invalid(final String field, final String detail) {
            return ApiError.badRequest("invalid_input", detail, field);
        }
    }
}
