package dev.eddy.gateway.cohorts;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.http.Body;
import dev.eddy.serde.Json;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.FileUpload;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A cohort's fields as PostHog's app sends them when a CSV is uploaded: a {@code multipart/form-data} form whose
 * {@code csv} part is the file, {@code is_static} a form's boolean ({@code true}, {@code True}, {@code 1}, ...),
 * {@code filters} and {@code groups} JSON text, every other field text. A JSON body is read as it is.
 */
final class CohortForm {
    /** The most a cohort request may send: a CSV of the most members a static cohort holds, with room to spare. */
    static final long MAX_BYTES = 16L * 1024 * 1024;
    private static final Set<String> JSON_FIELDS = Set.of("filters", "groups", "_create_static_person_ids", "query");
    private static final Set<String> BOOLEAN_FIELDS = Set.of("is_static", "deleted");

    private CohortForm() {
    }

    /**
     * The body handler of the cohort routes: an upload is streamed to a file under {@code uploads} (deleted when the
     * request ends), never held whole in memory while it arrives; at most {@link #MAX_BYTES}.
     */
    static Handler<RoutingContext> bodyHandler(final Path uploads) {
        return BodyHandler.create(true).setUploadsDirectory(uploads.toString()).setDeleteUploadedFilesOnEnd(true).setMergeFormAttributes(false)
                .setBodyLimit(MAX_BYTES);
    }

    /** The request's fields: its form's with the files' text, or its JSON body's. */
    static Future<Body> read(final RoutingContext ctx) {
        final String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
        if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
            try {
                return Future.succeededFuture(Body.of(ctx));
            } catch (final ApiError e) {
                return Future.failedFuture(e);
            }
        }
        final ObjectNode fields = Json.mapper().createObjectNode();
        try {
            for (final Map.Entry<String, String> attribute : ctx.request().formAttributes()) {
                put(fields, attribute.getKey(), attribute.getValue());
            }
        } catch (final ApiError e) {
            return Future.failedFuture(e);
        }
        final List<Future<Void>> files = new ArrayList<>();
        for (final FileUpload upload : ctx.fileUploads()) {
            files.add(ctx.vertx().fileSystem().readFile(upload.uploadedFileName())
                    .map(content -> {
                        fields.put(upload.name(), content.toString(StandardCharsets.UTF_8));
                        return null;
                    }));
        }
        return Future.all(files).map(done -> Body.of(fields));
    }

    private static void put(final ObjectNode fields, final String name, final String value) {
        if (BOOLEAN_FIELDS.contains(name)) {
            switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "true", "1", "on", "yes" -> fields.put(name, true);
                case "false", "0", "off", "no", "" -> fields.put(name, false);
                default -> throw ApiError.badRequest("invalid", "'" + name + "' must be a boolean.", name);
            }
        } else if (JSON_FIELDS.contains(name) && !value.isBlank()) {
            try {
                fields.set(name, Json.mapper().readTree(value));
            } catch (final JacksonException e) {
                throw ApiError.badRequest("parse_error", "'" + name + "' is not valid JSON.", name);
            }
        } else {
            fields.put(name, value);
        }
    }
}
