package dev.eddy.gateway.http;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;
import io.vertx.openapi.contract.MediaType;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The management API's OpenAPI 3 document ({@code openapi/eddy.yaml}): served at {@code /api/schema/} (YAML, or
 * JSON with {@code ?format=json}), and the contract every JSON request body is checked against before its route
 * runs. A body that does not match answers 400 with the offending field in {@code attr}.
 */
public final class ApiContract {
    public static final String RESOURCE = "openapi/eddy.yaml";
    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PATCH, HttpMethod.PUT);
    private static final Pattern QUOTED = Pattern.compile("\"([^\"]+)\"");

    private final OpenAPIContract contract;
    private final Buffer yaml;
    private final Map<String, Validator> validators = new ConcurrentHashMap<>();

    private ApiContract(final OpenAPIContract contract, final Buffer yaml) {
        this.contract = contract;
        this.yaml = yaml;
    }

    public static Future<ApiContract> load(final Vertx vertx) {
        return OpenAPIContract.from(vertx, RESOURCE)
                .compose(contract -> vertx.fileSystem().readFile(RESOURCE).map(yaml -> new ApiContract(contract, yaml)));
    }

    /** The public {@code /api/schema/} route; mount before authentication. */
    public void mountSchema(final Router router) {
        router.get("/api/schema").handler(ctx -> {
            if ("json".equalsIgnoreCase(ctx.queryParams().get("format"))) {
                ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/vnd.oai.openapi+json; charset=utf-8")
                        .end(contract.getRawContract().encodePrettily());
            } else {
                ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/vnd.oai.openapi; charset=utf-8").end(yaml);
            }
        });
    }

    /** Checks the JSON body of every request that has a documented body; mount after authentication. */
    public void mountValidation(final Router router) {
        router.route("/api/*").handler(this::validate);
    }

    private void validate(final RoutingContext ctx) {
        if (!WITH_BODY.contains(ctx.request().method())) {
            ctx.next();
            return;
        }
        final String path = ctx.request().path().length() > 1 && ctx.request().path().endsWith("/")
                ? ctx.request().path().substring(0, ctx.request().path().length() - 1) : ctx.request().path();
        final Operation operation = contract.findOperation(path, ctx.request().method());
        if (operation == null || operation.getRequestBody() == null) {
            ctx.next();
            return;
        }
        final String text = ctx.body() == null ? null : ctx.body().asString();
        if (text == null || text.isBlank()) {
            if (operation.getRequestBody().isRequired()) {
                ctx.fail(ApiError.badRequest("required", "This request needs a JSON body.", null));
            } else {
                ctx.next();
            }
            return;
        }
        final Object body;
        try {
            body = Json.decodeValue(text);
            if (!(body instanceof JsonObject)) {
                throw new DecodeException("not an object");
            }
        } catch (final DecodeException e) {
            // Not JSON, or not an object: the answer every JSON route gives, whether or not the contract describes it.
            ctx.fail(Body.refusal(text));
            return;
        }
        final MediaType json = operation.getRequestBody().getContent().get(MediaType.APPLICATION_JSON);
        if (json == null) {
            ctx.next();
            return;
        }
        final Validator validator = validators.computeIfAbsent(operation.getOperationId(),
                id -> contract.getSchemaRepository().validator(json.getSchema()));
        final OutputUnit result = validator.validate(body);
        if (Boolean.TRUE.equals(result.getValid())) {
            ctx.next();
        } else {
            ctx.fail(invalid(result));
        }
    }

    /** A 400 naming the first offending top-level field, with the validator's reason. */
    static ApiError invalid(final OutputUnit result) {
        final Deque<OutputUnit> pending = new ArrayDeque<>();
        pending.add(result);
        OutputUnit first = null;
        while (!pending.isEmpty()) {
            final OutputUnit unit = pending.poll();
            if (unit.getError() != null && (first == null || depth(unit) > depth(first))) {
                first = unit;
            }
            if (unit.getErrors() != null) {
                pending.addAll(unit.getErrors());
            }
        }
        final String location = first == null || first.getInstanceLocation() == null ? "" : first.getInstanceLocation();
        final String reason = first == null ? "The body does not match the API contract." : first.getError();
        String attr = null;
        final String[] parts = location.split("/");
        if (parts.length > 1 && !parts[1].isEmpty()) {
            attr = parts[1];
        } else {
            final Matcher quoted = QUOTED.matcher(reason);
            if (quoted.find()) {
                attr = quoted.group(1);
            }
        }
        return ApiError.badRequest("invalid_input", attr == null ? reason : "'" + attr + "': " + reason, attr);
    }

    private static int depth(final OutputUnit unit) {
        return unit.getInstanceLocation() == null ? 0 : unit.getInstanceLocation().split("/").length;
    }
}
