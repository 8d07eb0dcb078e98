package dev.eddy.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The settings table of {@code docs/configuration.md} against the shipped defaults: every key documented, no key
 * documented that Eddy does not read, each with its environment variable and its default as shipped.
 */
class ConfigDocsTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");
    /** How the table writes an empty default. */
    private static final List<String> EMPTY = List.of("empty", "generated", "none");

    /** One row of the table: its keys (a row may name several), their variables, the default column. */
    private record Row(List<String> keys, List<String> variables, String defaultValue) {
    }

    @Test
    void everyShippedSettingIsDocumentedWithItsVariableAndDefault() throws IOException {
        final Config defaults = ConfigFactory.parseResources("eddy-defaults.conf");
        final Map<String, Row> documented = documented();
        final List<String> shipped = defaults.entrySet().stream().map(Map.Entry::getKey).sorted().toList();

        assertThat(documented.keySet()).as("documented keys (kafka.client.* is the user's own)")
                .containsExactlyInAnyOrderElementsOf(concat(shipped, "kafka.client.*"));
        for (final String key : shipped) {
            final Row row = documented.get(key);
            assertThat(row.variables()).as(key + "'s variable").contains(ConfigLoader.environmentName(key));
            final String value = defaults.getValue(key).unwrapped().toString();
            final List<String> written = codes(row.defaultValue());
            if (value.isEmpty()) {
                assertThat(row.defaultValue()).as(key + "'s default").isIn(EMPTY);
            } else if (written.size() == row.keys().size()) {
                assertThat(written.get(row.keys().indexOf(key))).as(key + "'s default").isEqualTo(value);
            } else {
                assertThat(row.defaultValue()).as(key + "'s default").isEqualTo("`" + value + "`");
            }
        }
    }

    private static Map<String, Row> documented() throws IOException {
        final Map<String, Row> rows = new TreeMap<>();
        for (final String line : Files.readAllLines(DOC)) {
            if (!line.startsWith("| `")) {
                continue;
            }
            final String[] cells = line.split(" \\| ");
            final Row row = new Row(siblings(codes(cells[0]), '.'), siblings(codes(cells[1]), '_'), cells[2].trim());
            row.keys().forEach(key -> rows.put(key, row));
        }
        assertThat(rows).as("rows read from " + DOC).hasSizeGreaterThan(40);
        return rows;
    }

    private static List<String> codes(final String cell) {
        final List<String> codes = new ArrayList<>();
        final Matcher m = CODE.matcher(cell);
        while (m.find()) {
            codes.add(m.group(1));
        }
        return codes;
    }

    /**
     * A row naming several keys writes the later ones as the first one's siblings: {@code `a.b.minute`, `.hour`} are
     * {@code a.b.minute} and {@code a.b.hour}; {@code `EDDY_A_B_MINUTE`, `_HOUR`} their variables.
     */
    private static List<String> siblings(final List<String> names, final char separator) {
        final List<String> full = new ArrayList<>();
        for (final String name : names) {
            if (!full.isEmpty() && name.charAt(0) == separator) {
                final String first = full.get(0);
                full.add(first.substring(0, first.lastIndexOf(separator)) + name);
            } else {
                full.add(name);
            }
        }
        return full;
    }

    private static List<String> concat(final List<String> keys, final String more) {
        final List<String> all = new ArrayList<>(keys);
        all.add(more);
        return all;
    }
}
