package dev.eddy.gateway.insights;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;

/**
 * Saved insights as {@code format=csv} lists them: one row each, RFC 4180 quoting, lists comma-joined in their cell,
 * users by e-mail, filters and query as JSON.
 */
final class InsightCsv {
    static final List<String> COLUMNS = List.of("id", "short_id", "name", "derived_name", "description", "saved",
            "favorited", "tags", "dashboards", "created_at", "created_by", "last_modified_at", "last_modified_by", "filters", "query");

    private InsightCsv() {
    }

    static String of(final List<Insight> rows) {
        final StringWriter out = new StringWriter();
        try (CSVPrinter printer = new CSVPrinter(out, CSVFormat.DEFAULT.builder().setHeader(COLUMNS.toArray(String[]::new)).get())) {
            for (final Insight i : rows) {
                printer.printRecord(i.id(), i.shortId(), i.name(), i.derivedName(), i.description(), i.saved(), i.favorited(),
                        String.join(",", i.tags()), i.dashboards().stream().map(String::valueOf).collect(Collectors.joining(",")),
                        i.createdAt(), i.createdBy() == null ? "" : i.createdBy().email(), i.lastModifiedAt(),
                        i.lastModifiedBy() == null ? "" : i.lastModifiedBy().email(), i.filters().toString(),
                        i.query() == null ? "" : i.query().toString());
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("writing to a string", e);
        }
        return out.toString();
    }
}
