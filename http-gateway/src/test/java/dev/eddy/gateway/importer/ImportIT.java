package dev.eddy.gateway.importer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.EddyIT;
import dev.eddy.gateway.testing.TestEddy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An export imported into a running Eddy: stopped midway and resumed, then imported again from its start, the
 * project holds each valid event once, and each distinct id's events were applied in the file's order.
 */
class ImportIT extends EddyIT {
    private static final int IDS = 1000;
    private static final int PER_ID = 30;

    @TempDir
    Path dir;

    @Test
    void anImportStoppedMidwayResumesWithoutDuplicatesAndKeepsEachDistinctIdsOrder() throws Exception {
        final String prefix = "import-" + UUID.randomUUID() + "-";
        final Path file = dir.resolve("export.jsonl");
        final List<String> lines = new ArrayList<>();
        final Instant start = Instant.parse("2025-06-01T00:00:00Z");
        for (int n = 1; n <= PER_ID; n++) {
            for (int id = 0; id < IDS; id++) {
                lines.add("{\"uuid\":\"" + UUID.randomUUID() + "\",\"event\":\"imported\",\"distinct_id\":\"" + prefix + id
                        + "\",\"timestamp\":\"" + start.plusSeconds(n * 60L) + "\",\"properties\":{\"$set\":{\"n\":" + n + "}}}");
            }
            if (n % 6 == 0) {
                lines.add("{\"event\":\"no distinct id\"}");
            }
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
        final long events = (long) IDS * PER_ID;
        final long before = visible();
        final String[] args = {file.toString(), "--host", eddy.uri("/").toString(), "--token", eddy.projectToken(),
                "--personal-key", eddy.personalKey(), "--batch-size", "100", "--wait-seconds", "10"};
        final Importer.Options options = ImportCommand.options(args, Map.of());
        assertThat(options.projectId()).contains(1L);

        // Stopped (as Ctrl-C does) once a third is acknowledged.
        final Importer first = new Importer(options, quiet());
        final Thread stopper = new Thread(() -> {
            try {
                while (Checkpoint.load(options.state()).map(Checkpoint::acknowledged).orElse(0L) < events / 3) {
                    Thread.sleep(1);
                }
            } catch (final IOException | InterruptedException e) {
                return;
            }
            first.stop();
        });
        stopper.start();
        final Importer.Summary stopped = first.run();
        stopper.join();
        assertThat(stopped.interrupted()).isTrue();
        assertThat(stopped.records()).isBetween(events / 3, events - 1);

        final ByteArrayOutputStream output = new ByteArrayOutputStream();
        final Importer second = new Importer(options, new PrintStream(output, true, StandardCharsets.UTF_8));
        final Importer.Summary resumed = second.run();
        ImportCommand.print(new PrintStream(output, true, StandardCharsets.UTF_8), options, resumed, second);
        assertThat(resumed.interrupted()).isFalse();
        assertThat(resumed.resumedAfter()).isEqualTo(stopped.records());
        assertThat(resumed.records()).isEqualTo(lines.size());
        assertThat(stopped.imported() + resumed.imported()).isEqualTo(events);
        assertThat(stopped.rejected() + resumed.rejected()).isEqualTo(5);
        assertThat(resumed.visible()).as("this run's events all visible").isGreaterThanOrEqualTo(resumed.imported());
        assertThat(Files.readAllLines(second.rejectsFile())).hasSize(5)
                .allSatisfy(line -> assertThat(line).contains("\"reason\":\"no distinct_id\"").contains("\"line\":"));
        assertThat(output.toString(StandardCharsets.UTF_8)).contains("resuming after the").contains("done")
                .contains("rejected    " + resumed.rejected() + " {no distinct_id=" + resumed.rejected() + "}");

        eddy.waitUntil(() -> visible() == before + events, Duration.ofSeconds(60), () -> "visible " + (visible() - before));
        for (final int id : List.of(0, 499, 999)) {
            final JsonNode person = TestEddy.json(eddy.getAuthorized("/api/projects/1/persons/?distinct_id=" + prefix + id))
                    .path("results").path(0);
            assertThat(person.path("properties").path("n").asInt()).as("the last $set in the file's order").isEqualTo(PER_ID);
        }

        // The whole file again: every event is one Eddy has.
        final Importer.Summary again = new Importer(ImportCommand.options(concat(args, "--restart"), Map.of()), quiet()).run();
        assertThat(again.resumedAfter()).isZero();
        assertThat(again.imported()).isEqualTo(events);
        assertThat(again.visible()).isZero();
        assertThat(visible()).isEqualTo(before + events);
    }

    @Test
    void aCheckpointOfAnotherFileIsNotResumed() throws Exception {
        final Path file = Files.writeString(dir.resolve("a.jsonl"), "{\"event\":\"e\",\"distinct_id\":\"d\"}\n");
        final Path state = dir.resolve("state.json");
        new Checkpoint("1:other", eddy.projectToken(), 1, 1, 0).save(state);
        final Importer.Options options = ImportCommand.options(new String[] {file.toString(), "--host", eddy.uri("/").toString(),
                "--token", eddy.projectToken(), "--state", state.toString()}, Map.of());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Importer(options, quiet()).run())
                .isInstanceOf(Importer.ImportException.class).hasMessageContaining("--restart");
        final Importer.Options wrongKey = ImportCommand.options(new String[] {file.toString(), "--host", eddy.uri("/").toString(),
                "--token", "phc_not_a_project", "--state", dir.resolve("other.json").toString()}, Map.of());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Importer(wrongKey, quiet()).run())
                .isInstanceOf(Importer.ImportException.class).hasMessageContaining("refused the project API key");
    }

    private static long visible() {
        return TestEddy.json(eddy.getAuthorized("/api/projects/1/event_counts/")).path("total").asLong();
    }

    private static PrintStream quiet() {
        return new PrintStream(java.io.OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    }

    private static String[] concat(final String[] args, final String more) {
        final String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = more;
        return all;
    }
}
