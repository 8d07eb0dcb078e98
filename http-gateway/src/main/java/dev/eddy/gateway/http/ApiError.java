package dev.eddy.gateway.http;

/**
 * An error answer, in PostHog's shape {@code {type, code, detail, attr}}. Thrown or failed from anywhere in a
 * route; {@link ErrorHandler} renders it. Every status Eddy answers with is made here.
 */
public final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;
    private final String code;
    private final String attr;
    private final Integer retryAfterSeconds;

    private ApiError(final int status, final String type, final String code, final String detail, final String attr,
                     final Integer retryAfterSeconds) {
        super(detail, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
        this.attr = attr;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static ApiError badRequest(final String code, final String detail, final String attr) {
        return new ApiError(400, "validation_error", code, detail, attr, null);
    }

    public static ApiError unauthenticated(final String code, final String detail) {
        return new ApiError(401, "authentication_error", code, detail, null, null);
    }

    public static ApiError forbidden(final String code, final String detail) {
        return new ApiError(403, "authentication_error", code, detail, null, null);
    }

    public static ApiError notFound(final String detail) {
        return new ApiError(404, "invalid_request", "not_found", detail, null, null);
    }

    /** The value, or a failed future with a 404 when there is none: the one "not found" of every route. */
    public static <T> io.vertx.core.Future<T> orNotFound(final java.util.Optional<T> found) {
        return found.map(io.vertx.core.Future::succeededFuture).orElseGet(() -> io.vertx.core.Future.failedFuture(notFound("Not found.")));
    }

    public static ApiError methodNotAllowed(final String detail) {
        return new ApiError(405, "invalid_request", "method_not_allowed", detail, null, null);
    }

    /** PostHog's answer to a DELETE of what it only soft-deletes (actions, cohorts). */
    public static ApiError hardDeleteNotAllowed() {
        return methodNotAllowed("Hard delete of this model is not allowed. Use a patch API call to set \"deleted\" to true");
    }

    /** A request understood but not taken as it stands (422). */
    public static ApiError unprocessable(final String code, final String detail) {
        return new ApiError(422, "invalid_request", code, detail, null, null);
    }

    public static ApiError payloadTooLarge() {
        return new ApiError(413, "invalid_request", "payload_too_large", "Request body is too large.", null, null);
    }

    /** PostHog's throttling answer: 429 with Retry-After. */
    public static ApiError tooManyRequests(final String detail, final int retryAfterSeconds) {
        return new ApiError(429, "throttled_error", "throttled", detail, null, retryAfterSeconds);
    }

    /** PostHog's answer of the flag routes to a token past its rate: 429 with Retry-After. */
    public static ApiError rateLimited(final String detail, final int retryAfterSeconds) {
        return new ApiError(429, "validation_error", "rate_limit_exceeded", detail, null, retryAfterSeconds);
    }

    public static ApiError internal() {
        return new ApiError(500, "server_error", "internal_error", "Internal server error.", null, null);
    }

    /** A query that ran past its time limit: 504, worth retrying with a narrower query or later. */
    public static ApiError timeout(final String detail) {
        return new ApiError(504, "server_error", "query_timeout", detail, null, null);
    }

    /** A calculation stopped on request ({@code POST .../insights/cancel}) before it finished. */
    public static ApiError cancelled(final String detail) {
        return new ApiError(409, "invalid_request", "query_cancelled", detail, null, null);
    }

    public static ApiError unavailable(final String code, final String detail, final int retryAfterSeconds) {
        return new ApiError(503, "server_error", code, detail, null, retryAfterSeconds);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String code() {
        return code;
    }

    public String detail() {
        return getMessage();
    }

    public String attr() {
        return attr;
    }

    /** Seconds a client should wait before retrying, for 429 and 503 answers. */
    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
