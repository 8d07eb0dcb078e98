package dev.eddy.gateway.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.eddy.serde.Json;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

/** Writes JSON answers with Eddy's one Jackson configuration. */
public final class Responses {
    public static final String JSON = "application/json";

    private Responses() {
    }

    public static void json(final RoutingContext ctx, final int status, final Object body) {
        final byte[] bytes;
        try {
            bytes = Json.mapper().writeValueAsBytes(body);
        } catch (final JsonProcessingException e) {
            ctx.fail(e);
            return;
        }
        ctx.response()
                .setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, JSON)
                .end(Buffer.buffer(bytes));
    }
}
