package dev.eddy.gateway.importer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.eddy.gateway.capture.EventTimestamps;
import dev.eddy.serde.Json;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.GZIPInputStream;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;

/**
 * Reads events exported from PostHog, one record at a time, as the events {@code /batch/} takes.
 *
 * <ul>
 *   <li><b>JSON Lines</b> ({@code .jsonl}, {@code .ndjson}, {@code .json}): PostHog's batch and file-download exports of
 *   the events model, one event per line: {@code uuid}, {@code event}, {@code distinct_id}, {@code timestamp},
 *   {@code properties} (an object, or the JSON-encoded string Parquet-minded exports write), and {@code set},
 *   {@code set_once}, {@code elements_chain}, {@code ip} when present. Other fields ({@code person_id},
 *   {@code person_properties}, {@code team_id}, ...) are ignored: persons are rebuilt from the events.</li>
 *   <li><b>CSV</b> ({@code .csv}): PostHog's CSV export of an events table, whose {@code *} column is flattened into
 *   {@code *.uuid}, {@code *.event}, {@code *.properties.$browser}, ...: a leading {@code *.} is dropped, then
 *   {@code properties} (JSON) and {@code properties.KEY} columns make the properties, a cell that is JSON (a number,
 *   {@code true}, an object) read as such and any other as text.</li>
 * </ul>
 * Either may be gzipped ({@code .gz}). An event without a uuid gets one derived from the file and its position, so
 * importing the same file again is de-duplicated like a retry. A record that is not an event (no event name or
 * distinct id, an unreadable timestamp or line) is returned as rejected with its reason, and reading goes on.
 */
final class ExportReader implements Iterator<ExportReader.Entry>, Closeable {
    /**
     * One record of the file: an event ready for {@code /batch/} (with its JSON, written once, as the batch sends it),
     * or why it cannot be one.
     */
    record Entry(long number, long line, Optional<ObjectNode> event, byte[] json, String rejection, String raw) {
        static Entry ok(final long number, final long line, final ObjectNode event) {
            try {
                return new Entry(number, line, Optional.of(event), Json.mapper().writeValueAsBytes(event), null, null);
            } catch (final JsonProcessingException e) {
                throw new IllegalStateException("an event read from the file writes as JSON", e);
            }
        }

        static Entry rejected(final long number, final long line, final String reason, final String raw) {
            return new Entry(number, line, Optional.empty(), null, reason, raw);
        }
    }

    enum Format {
        JSONL, CSV;

        static Format of(final Path file) {
            String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
            if (name.endsWith(".gz")) {
                name = name.substring(0, name.length() - 3);
            }
            if (name.endsWith(".csv")) {
                return CSV;
            }
            if (name.endsWith(".jsonl") || name.endsWith(".ndjson") || name.endsWith(".json")) {
                return JSONL;
            }
            throw new IllegalArgumentException(file + ": not a PostHog export (.jsonl, .ndjson, .json or .csv, optionally .gz)");
        }
    }

    private final Iterator<Entry> entries;
    private final Closeable source;

    private ExportReader(final Iterator<Entry> entries, final Closeable source) {
        this.entries = entries;
        this.source = source;
    }

    /**
     * @param uuidSeed what the uuids of events without one are derived from (the file's identity), with their number
     */
    static ExportReader open(final Path file, final String uuidSeed) throws IOException {
        final BufferedReader reader = new BufferedReader(new InputStreamReader(input(file), StandardCharsets.UTF_8), 1 << 16);
        return switch (Format.of(file)) {
            case JSONL -> new ExportReader(new JsonLines(reader, uuidSeed), reader);
            case CSV -> {
                final CSVParser parser = CSVFormat.DEFAULT.builder().setHeader().setSkipHeaderRecord(true).get().parse(reader);
                yield new ExportReader(new CsvRows(parser, uuidSeed), parser);
            }
        };
    }

    static InputStream input(final Path file) throws IOException {
        final InputStream in = Files.newInputStream(file);
        return file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".gz") ? new GZIPInputStream(in, 1 << 16) : in;
    }

    @Override
    public boolean hasNext() {
        return entries.hasNext();
    }

    @Override
    public Entry next() {
        return entries.next();
    }

    @Override
    public void close() throws IOException {
        source.close();
    }

    /** One event per non-blank line. */
    private static final class JsonLines implements Iterator<Entry> {
        private final BufferedReader reader;
        private final String uuidSeed;
        private String pending;
        private long line;
        private long number;

        JsonLines(final BufferedReader reader, final String uuidSeed) {
            this.reader = reader;
            this.uuidSeed = uuidSeed;
        }

        @Override
        public boolean hasNext() {
            try {
                while (pending == null) {
                    final String next = reader.readLine();
                    if (next == null) {
                        return false;
                    }
                    line++;
                    if (!next.isBlank()) {
                        pending = next;
                    }
                }
                return true;
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public Entry next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            final String text = pending;
            pending = null;
            final long n = number++;
            final JsonNode parsed;
            try {
                parsed = Json.mapper().readTree(text);
            } catch (final JsonProcessingException e) {
                return Entry.rejected(n, line, "not JSON: " + e.getOriginalMessage(), text);
            }
            if (!(parsed instanceof ObjectNode record)) {
                return Entry.rejected(n, line, "not a JSON object", text);
            }
            return event(n, line, record.path("uuid"), record.path("event"), record.path("distinct_id"),
                    record.path("timestamp"), properties(record.get("properties")), record, uuidSeed, text);
        }

        private static JsonNode properties(final JsonNode value) {
            if (value != null && value.isTextual()) {
                try {
                    return Json.mapper().readTree(value.asText());
                } catch (final JsonProcessingException e) {
                    return value;
                }
            }
            return value;
        }
    }

    /** One event per CSV record, its properties gathered from the flattened columns. */
    private static final class CsvRows implements Iterator<Entry> {
        private final Iterator<CSVRecord> records;
        private final List<String> columns;
        private final String uuidSeed;
        private long number;

        CsvRows(final CSVParser parser, final String uuidSeed) {
            this.records = parser.iterator();
            this.columns = parser.getHeaderNames().stream().map(c -> c.startsWith("*.") ? c.substring(2) : c).toList();
            this.uuidSeed = uuidSeed;
        }

        @Override
        public boolean hasNext() {
            return records.hasNext();
        }

        @Override
        public Entry next() {
            final CSVRecord row = records.next();
            final long n = number++;
            final ObjectNode fields = Json.mapper().createObjectNode();
            final ObjectNode flattened = Json.mapper().createObjectNode();
            for (int i = 0; i < columns.size() && i < row.size(); i++) {
                final String cell = row.get(i);
                if (cell == null || cell.isEmpty()) {
                    continue;
                }
                final String column = columns.get(i);
                if (column.startsWith("properties.")) {
                    flattened.set(column.substring("properties.".length()), cell(cell));
                } else if (!fields.has(column)) {
                    fields.set(column, "properties".equals(column) || "set".equals(column) || "set_once".equals(column)
                            ? cell(cell) : TextNode.valueOf(cell));
                }
            }
            JsonNode properties = fields.get("properties");
            if (properties == null || properties.isObject()) {
                final ObjectNode merged = properties == null ? Json.mapper().createObjectNode() : (ObjectNode) properties;
                flattened.properties().forEach(e -> {
                    if (!merged.has(e.getKey())) {
                        merged.set(e.getKey(), e.getValue());
                    }
                });
                properties = merged;
            }
            return event(n, row.getRecordNumber() + 1, fields.path("uuid"), fields.path("event"), fields.path("distinct_id"),
                    fields.path("timestamp"), properties, fields, uuidSeed, String.join(",", row.values()));
        }

        private static JsonNode cell(final String cell) {
            final char first = cell.charAt(0);
            if (first == '{' || first == '[' || first == '-' || Character.isDigit(first)
                    || "true".equals(cell) || "false".equals(cell) || "null".equals(cell)) {
                try {
                    return Json.mapper().readTree(cell);
                } catch (final JsonProcessingException e) {
                    return TextNode.valueOf(cell);
                }
            }
            return TextNode.valueOf(cell);
        }
    }

    /** The {@code /batch/} event of an export record, or why it is not one. */
    private static Entry event(final long number, final long line, final JsonNode uuid, final JsonNode name,
                               final JsonNode distinctId, final JsonNode timestamp, final JsonNode properties,
                               final ObjectNode record, final String uuidSeed, final String raw) {
        if (!name.isTextual() || name.asText().isEmpty()) {
            return Entry.rejected(number, line, "no event name", raw);
        }
        if (distinctId.isMissingNode() || distinctId.isNull() || distinctId.isContainerNode()
                || distinctId.asText().isBlank()) {
            return Entry.rejected(number, line, "no distinct_id", raw);
        }
        if (properties != null && !properties.isNull() && !properties.isObject()) {
            return Entry.rejected(number, line, "properties is not an object", raw);
        }
        final ObjectNode event = Json.mapper().createObjectNode();
        event.put("event", name.asText());
        event.put("distinct_id", distinctId.asText());
        event.put("uuid", uuid.isTextual() && isUuid(uuid.asText()) ? uuid.asText()
                : UUID.nameUUIDFromBytes((uuidSeed + ":" + number).getBytes(StandardCharsets.UTF_8)).toString());
        if (!timestamp.isMissingNode() && !timestamp.isNull()) {
            final Optional<Instant> at = timestamp(timestamp);
            if (at.isEmpty()) {
                return Entry.rejected(number, line, "unreadable timestamp " + timestamp, raw);
            }
            event.put("timestamp", at.get().toString());
        }
        final ObjectNode props = properties instanceof ObjectNode o ? o : Json.mapper().createObjectNode();
        for (final Map.Entry<String, String> column : Map.of("set", "$set", "set_once", "$set_once").entrySet()) {
            final JsonNode value = record.get(column.getKey());
            if (value != null && value.isObject() && !value.isEmpty() && !props.has(column.getValue())) {
                props.set(column.getValue(), value);
            }
        }
        final JsonNode elements = record.get("elements_chain");
        if (elements != null && elements.isTextual() && !elements.asText().isEmpty() && !props.has("$elements_chain")) {
            props.set("$elements_chain", elements);
        }
        final JsonNode ip = record.get("ip");
        if (ip != null && ip.isTextual() && !ip.asText().isEmpty() && !props.has("$ip")) {
            props.set("$ip", ip);
        }
        event.set("properties", props);
        return Entry.ok(number, line, event);
    }

    /** PostHog's export forms: ISO 8601 with {@code T} or a space, with or without an offset, or epoch milliseconds. */
    static Optional<Instant> timestamp(final JsonNode value) {
        if (value.isIntegralNumber()) {
            return Optional.of(Instant.ofEpochMilli(value.asLong()));
        }
        if (!value.isTextual()) {
            return Optional.empty();
        }
        final String text = value.asText().trim();
        final int space = text.indexOf(' ');
        return EventTimestamps.parse(TextNode.valueOf(space == 10 ? text.substring(0, 10) + 'T' + text.substring(11) : text));
    }

    private static boolean isUuid(final String text) {
        try {
            return UUID.fromString(text).toString().equalsIgnoreCase(text);
        } catch (final IllegalArgumentException e) {
            return false;
        }
    }

    /** How many records the file holds (a second, cheaper pass over it, for the progress bar's total). */
    static long count(final Path file) throws IOException {
        if (Format.of(file) == Format.CSV) {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(input(file), StandardCharsets.UTF_8), 1 << 16);
                 CSVParser parser = CSVFormat.DEFAULT.builder().setHeader().setSkipHeaderRecord(true).get().parse(reader)) {
                long n = 0;
                for (final Iterator<CSVRecord> it = parser.iterator(); it.hasNext(); it.next()) {
                    n++;
                }
                return n;
            }
        }
        try (InputStream in = input(file)) {
            final byte[] buffer = new byte[1 << 16];
            long lines = 0;
            boolean blank = true;
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                for (int i = 0; i < read; i++) {
                    final byte b = buffer[i];
                    if (b == '\n') {
                        if (!blank) {
                            lines++;
                        }
                        blank = true;
                    } else if (b != ' ' && b != '\r' && b != '\t') {
                        blank = false;
                    }
                }
            }
            return blank ? lines : lines + 1;
        }
    }
}
