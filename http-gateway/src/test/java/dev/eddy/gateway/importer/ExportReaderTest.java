package dev.eddy.gateway.importer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PostHog's export formats read as {@code /batch/} events, and records that are not events set aside with why. */
class ExportReaderTest {
    @TempDir
    Path dir;

    @Test
    void readsPostHogsJsonLinesExportOfTheEventsModel() throws IOException {
        final Path file = write("events.jsonl", """
                {"uuid":"0190b6a0-0000-7000-8000-000000000001","event":"$pageview","distinct_id":"anon-1","team_id":2,\
                "timestamp":"2024-03-01 10:00:00.123456+00:00","properties":{"$current_url":"https://x.test/","n":1},\
                "person_id":"p","person_properties":{"plan":"free"},"elements_chain":"a:nth-child=\\"1\\"","set":{"plan":"pro"},\
                "set_once":{},"ip":"1.2.3.4","site_url":""}

                {"event":"signup","distinct_id":42,"timestamp":"2024-03-01T10:00:01Z","properties":"{\\"$set_once\\":{\\"first\\":\\"/\\"}}"}
                {"event":"old","distinct_id":"d","timestamp":1709287200000,"properties":{}}
                """);
        final List<ExportReader.Entry> entries = read(file, "seed");

        assertThat(entries).hasSize(3).allMatch(e -> e.event().isPresent());
        final var first = entries.get(0).event().get();
        assertThat(first.get("uuid").asText()).isEqualTo("0190b6a0-0000-7000-8000-000000000001");
        assertThat(first.get("event").asText()).isEqualTo("$pageview");
        assertThat(first.get("distinct_id").asText()).isEqualTo("anon-1");
        assertThat(first.get("timestamp").asText()).isEqualTo("2024-03-01T10:00:00.123456Z");
        assertThat(first.get("properties").get("n").asInt()).isEqualTo(1);
        assertThat(first.get("properties").get("$set").get("plan").asText()).as("the export's set column").isEqualTo("pro");
        assertThat(first.get("properties").has("$set_once")).as("an empty set_once adds nothing").isFalse();
        assertThat(first.get("properties").get("$elements_chain").asText()).isEqualTo("a:nth-child=\"1\"");
        assertThat(first.get("properties").get("$ip").asText()).isEqualTo("1.2.3.4");
        assertThat(first.has("person_properties")).isFalse();
        assertThat(entries.get(0).line()).isEqualTo(1);

        final var second = entries.get(1).event().get();
        assertThat(entries.get(1).line()).as("the blank line is skipped, not counted as a record").isEqualTo(3);
        assertThat(second.get("distinct_id").asText()).as("a numeric distinct id as PostHog stringifies it").isEqualTo("42");
        assertThat(second.get("properties").get("$set_once").get("first").asText()).as("properties as a JSON string").isEqualTo("/");
        assertThat(entries.get(2).event().get().get("timestamp").asText()).isEqualTo("2024-03-01T10:00:00Z");
    }

    @Test
    void eventsWithoutAUuidGetOneFromTheFileAndTheirPositionTheSameEveryTime() throws IOException {
        final Path file = write("no-uuids.jsonl", "{\"event\":\"a\",\"distinct_id\":\"d\"}\n{\"event\":\"a\",\"distinct_id\":\"d\"}\n");
        final List<ExportReader.Entry> once = read(file, "file-1");
        final List<ExportReader.Entry> again = read(file, "file-1");
        final List<ExportReader.Entry> otherFile = read(file, "file-2");

        final String uuid = once.get(0).event().get().get("uuid").asText();
        assertThat(uuid).isEqualTo(again.get(0).event().get().get("uuid").asText())
                .isNotEqualTo(once.get(1).event().get().get("uuid").asText())
                .isNotEqualTo(otherFile.get(0).event().get().get("uuid").asText());
        assertThat(java.util.UUID.fromString(uuid).toString()).isEqualTo(uuid);
    }

    @Test
    void recordsThatAreNotEventsAreRejectedWithTheirLineAndReasonAndReadingGoesOn() throws IOException {
        final Path file = write("bad.jsonl", """
                {"event":"ok","distinct_id":"d"}
                not json
                ["an","array"]
                {"event":"","distinct_id":"d"}
                {"event":"x","distinct_id":"  "}
                {"event":"x","distinct_id":{"id":1}}
                {"event":"x","distinct_id":"d","timestamp":"yesterday"}
                {"event":"x","distinct_id":"d","properties":[1]}
                {"event":"last","distinct_id":"d"}
                """);
        final List<ExportReader.Entry> entries = read(file, "s");

        assertThat(entries).extracting(ExportReader.Entry::line).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(entries).extracting(e -> e.event().isPresent())
                .containsExactly(true, false, false, false, false, false, false, false, true);
        assertThat(entries.subList(1, 8)).extracting(ExportReader.Entry::rejection).satisfiesExactly(
                r -> assertThat(r).startsWith("not JSON"),
                r -> assertThat(r).isEqualTo("not a JSON object"),
                r -> assertThat(r).isEqualTo("no event name"),
                r -> assertThat(r).isEqualTo("no distinct_id"),
                r -> assertThat(r).isEqualTo("no distinct_id"),
                r -> assertThat(r).isEqualTo("unreadable timestamp \"yesterday\""),
                r -> assertThat(r).isEqualTo("properties is not an object"));
        assertThat(entries.get(1).raw()).isEqualTo("not json");
        assertThat(ExportReader.count(file)).isEqualTo(9);
    }

    @Test
    void readsPostHogsCsvExportWithItsFlattenedColumns() throws IOException {
        final Path file = write("events.csv", """
                *.uuid,*.event,*.properties.$current_url,*.properties.count,*.properties.flag,*.properties,*.distinct_id,*.timestamp,event,person
                0190b6a0-0000-7000-8000-000000000002,$pageview,"https://x.test/?a=1,2",3,true,"{""plan"":""pro"",""count"":9}",user-1,2024-03-01 10:00:00,ignored,"{""id"":1}"
                ,$autocapture,,,,,user-2,2024-03-01T11:00:00Z,,
                ,missing-distinct-id,,,,,,2024-03-01T11:00:00Z,,
                """);
        final List<ExportReader.Entry> entries = read(file, "csv");

        assertThat(entries).hasSize(3);
        final var first = entries.get(0).event().get();
        assertThat(first.get("uuid").asText()).isEqualTo("0190b6a0-0000-7000-8000-000000000002");
        assertThat(first.get("event").asText()).as("the * column's, not the later one's").isEqualTo("$pageview");
        assertThat(first.get("timestamp").asText()).isEqualTo("2024-03-01T10:00:00Z");
        assertThat(first.get("properties").get("$current_url").asText()).isEqualTo("https://x.test/?a=1,2");
        assertThat(first.get("properties").get("count").asInt()).as("the properties column wins over its flattening").isEqualTo(9);
        assertThat(first.get("properties").get("flag").isBoolean()).isTrue();
        assertThat(first.get("properties").get("plan").asText()).isEqualTo("pro");
        assertThat(entries.get(1).event().get().get("distinct_id").asText()).isEqualTo("user-2");
        assertThat(entries.get(1).event().get().get("uuid").asText()).isNotEmpty();
        assertThat(entries.get(2).rejection()).isEqualTo("no distinct_id");
        assertThat(entries.get(2).line()).isEqualTo(4);
        assertThat(ExportReader.count(file)).isEqualTo(3);
    }

    @Test
    void gzippedExportsAreReadAndCounted() throws IOException {
        final Path file = dir.resolve("events.jsonl.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            for (int i = 0; i < 1000; i++) {
                out.write(("{\"event\":\"e\",\"distinct_id\":\"d" + i + "\"}\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        assertThat(read(file, "gz")).hasSize(1000).allMatch(e -> e.event().isPresent());
        assertThat(ExportReader.count(file)).isEqualTo(1000);
    }

    @Test
    void otherFilesAreRefusedByName() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExportReader.Format.of(Path.of("events.parquet")))
                .hasMessageContaining("not a PostHog export");
    }

    private Path write(final String name, final String content) throws IOException {
        return Files.writeString(dir.resolve(name), content);
    }

    private static List<ExportReader.Entry> read(final Path file, final String seed) throws IOException {
        final List<ExportReader.Entry> entries = new ArrayList<>();
        try (ExportReader reader = ExportReader.open(file, seed)) {
            reader.forEachRemaining(entries::add);
        }
        return entries;
    }
}
