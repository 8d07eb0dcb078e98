package dev.eddy.gateway.capture;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Where a public request (capture, {@code /decide}, {@code /flags}) carries its payload, as PostHog's services look for
 * it: the query's {@code data} when there is one (legacy GETs, some pixels), else a form's {@code data} field
 * ({@code application/x-www-form-urlencoded}: posthog-js's base64 and {@code sendBeacon} bodies), else the body itself
 * (JSON, gzip or base64, whatever its content type says: {@code sendBeacon} labels gzip {@code text/plain}). The
 * compression hint is the first that names one of the query's {@code compression}, the form's and
 * {@code Content-Encoding}.
 */
public final class RequestPayload {
    private static final String FORM = "application/x-www-form-urlencoded";
    private static final String DATA = "data";
    private static final String COMPRESSION = "compression";

    private RequestPayload() {
    }

    /** The payload of a request whose body {@code BodyHandler} has read. */
    public static PayloadDecoder.Raw of(final RoutingContext ctx) {
        final Optional<String> query = Optional.ofNullable(ctx.queryParams().get(COMPRESSION));
        final Optional<String> encoding = Optional.ofNullable(ctx.request().getHeader(HttpHeaders.CONTENT_ENCODING));
        final String queryData = ctx.queryParams().get(DATA);
        if (queryData != null && !queryData.isEmpty()) {
            return field(queryData, PayloadDecoder.Compression.firstKnown(query, encoding));
        }
        final String contentType = Optional.ofNullable(ctx.request().getHeader(HttpHeaders.CONTENT_TYPE)).orElse("");
        // `curl -d '{...}'` labels a raw JSON body as a form: without a `data` field the body itself is the payload.
        if (contentType.regionMatches(true, 0, FORM, 0, FORM.length()) && ctx.request().getFormAttribute(DATA) != null) {
            return field(ctx.request().getFormAttribute(DATA), PayloadDecoder.Compression.firstKnown(query,
                    Optional.ofNullable(ctx.request().getFormAttribute(COMPRESSION)), encoding));
        }
        final byte[] body = ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes();
        return new PayloadDecoder.Raw(body, PayloadDecoder.Compression.firstKnown(query, encoding), false);
    }

    private static PayloadDecoder.Raw field(final String data, final Optional<String> compression) {
        return new PayloadDecoder.Raw(data.getBytes(StandardCharsets.UTF_8), compression, true);
    }
}
