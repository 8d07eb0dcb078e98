package dev.eddy.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;

/**
 * Writes {@code scripts/bench-import}'s input: the seeded events of {@link InsightsEvents} (30 days up to yesterday,
 * {@code --identify-percent} of the persons identifying on their third event) as a PostHog JSON Lines export.
 * Options: {@code --events --persons --identify-percent --out}.
 */
public final class ExportFile {
    private ExportFile() {
    }

    public static void main(final String[] args) throws IOException {
        final Map<String, String> options = BenchArgs.parse(args, "out");
        final int count = Integer.parseInt(options.getOrDefault("events", "10000000"));
        final int persons = Integer.parseInt(options.getOrDefault("persons", "500000"));
        final Path out = Path.of(options.get("out"));
        final InsightsEvents events = new InsightsEvents(count, persons, 30, LocalDate.now(ZoneOffset.UTC).minusDays(1), 42,
                Integer.parseInt(options.getOrDefault("identify-percent", "10")), 0);
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (int i = 0; i < count; i++) {
                writer.write(events.exportRecord(i));
                writer.newLine();
            }
        }
        System.out.printf("wrote %,d events of %,d persons to %s (%,d bytes)%n", count, persons, out, Files.size(out));
    }
}
