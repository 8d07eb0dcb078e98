package dev.eddy.gateway.cohorts;

import dev.eddy.gateway.http.ApiError;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The ids of a static cohort's CSV, read as PostHog reads an upload. One column: its rows are distinct ids, the first
 * one too, unless it is a {@code person_id} header (then the rows are person uuids). Several columns: the
 * {@code person_id} column, else the {@code distinct_id} one. Values are trimmed; blank ones are dropped. PostHog's
 * email columns are refused: Eddy finds persons by distinct id and uuid.
 */
public final class CohortCsv {
    private static final List<String> PERSON_ID_HEADERS = List.of("person_id", "person-id", "person .id");
    private static final List<String> DISTINCT_ID_HEADERS = List.of("distinct_id", "distinct-id");
    private static final List<String> EMAIL_HEADERS = List.of("email", "e-mail");

    private CohortCsv() {
    }

    /** @param personIds whether the values are person uuids (else distinct ids) */
    public record Ids(List<String> values, boolean personIds) {
    }

    /**
     * @throws ApiError 400 ({@code attr: csv}) with PostHog's words for an empty file, a file without a usable column or
     *                  without ids
     */
    public static Ids read(final String text) {
        final List<List<String>> rows = new ArrayList<>();
        for (final String line : text.split("\\r\\n|\\r|\\n")) {
            final List<String> cells = cells(line);
            if (rows.isEmpty() && cells.stream().allMatch(String::isBlank)) {
                continue;
            }
            rows.add(cells);
        }
        if (rows.isEmpty()) {
            throw invalid("CSV file is empty. Please upload a CSV file with at least one row of ids.");
        }
        final List<String> header = rows.get(0);
        final Set<String> values = new LinkedHashSet<>();
        final boolean personIds;
        if (header.stream().filter(c -> !c.isBlank()).count() <= 1) {
            final String first = header.isEmpty() ? "" : header.get(0).strip().toLowerCase(Locale.ROOT);
            if (EMAIL_HEADERS.contains(first)) {
                throw invalid("Cohorts of email addresses are not supported by Eddy yet; upload distinct ids or person ids.");
            }
            personIds = PERSON_ID_HEADERS.contains(first);
            for (int r = personIds ? 1 : 0; r < rows.size(); r++) {
                rows.get(r).stream().findFirst().map(String::strip).filter(v -> !v.isEmpty()).ifPresent(values::add);
            }
        } else {
            final List<String> names = header.stream().map(h -> h.strip().toLowerCase(Locale.ROOT)).toList();
            int column = indexOf(names, PERSON_ID_HEADERS);
            personIds = column >= 0;
            if (column < 0) {
                column = indexOf(names, DISTINCT_ID_HEADERS);
            }
            if (column < 0) {
                if (indexOf(names, EMAIL_HEADERS) >= 0) {
                    throw invalid("Cohorts of email addresses are not supported by Eddy yet; upload distinct ids or person ids.");
                }
                throw invalid("Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' "
                        + "(PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: " + String.join(", ", header));
            }
            for (int r = 1; r < rows.size(); r++) {
                if (rows.get(r).size() > column && !rows.get(r).get(column).isBlank()) {
                    values.add(rows.get(r).get(column).strip());
                }
            }
        }
        if (values.isEmpty()) {
            throw invalid("CSV file contains no valid person IDs, distinct IDs, or email addresses. Please check your file.");
        }
        return new Ids(List.copyOf(values), personIds);
    }

    private static int indexOf(final List<String> names, final List<String> wanted) {
        for (int i = 0; i < names.size(); i++) {
            if (wanted.contains(names.get(i))) {
                return i;
            }
        }
        return -1;
    }

    /** A CSV line's cells: commas separate, double quotes quote (a doubled one inside is one). */
    static List<String> cells(final String line) {
        final List<String> cells = new ArrayList<>();
        final StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            final char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cell.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cell.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                cells.add(cell.toString());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString());
        return cells;
    }

    private static ApiError invalid(final String detail) {
        return ApiError.badRequest("invalid_input", detail, "csv");
    }
}
