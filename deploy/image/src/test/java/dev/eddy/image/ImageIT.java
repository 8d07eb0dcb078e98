package dev.eddy.image;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

/**
 * The image the package phase made ({@code target/eddy-image.tar}, as {@code docker load} and {@code podman load}
 * take it): its configuration (entrypoint, non-root user, port, volume, environment, labels) and its files (the jar,
 * a Java runtime, the C and C++ runtimes, the non-root user), read from the tarball itself.
 */
class ImageIT {
    private static final Path TAR = Path.of("target", "eddy-image.tar");
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theImageRunsEddyAsANonRootUserOnItsOwnJavaRuntime() throws IOException {
        final Map<String, byte[]> entries = tar(Files.newInputStream(TAR), false);
        final JsonNode manifest = JSON.readTree(entries.get("manifest.json")).get(0);
        assertThat(manifest.get("RepoTags").get(0).asText()).startsWith("eddy:");
        final JsonNode config = JSON.readTree(entries.get(manifest.get("Config").asText())).get("config");
        assertThat(config.get("Entrypoint")).extracting(JsonNode::asText).containsExactly("/opt/java/bin/java", "-jar", "/app/eddy.jar");
        assertThat(config.get("Cmd")).extracting(JsonNode::asText).containsExactly("all");
        assertThat(config.get("User").asText()).isEqualTo("65532:65532");
        assertThat(config.get("ExposedPorts").has("8000/tcp")).isTrue();
        assertThat(config.get("ExposedPorts").has("8001/tcp")).as("the admin port of the manifests").isTrue();
        assertThat(config.get("Volumes").has("/var/lib/eddy")).isTrue();
        assertThat(config.get("Env")).extracting(JsonNode::asText).contains("MALLOC_ARENA_MAX=2", "EDDY_STATE_DIR=/var/lib/eddy/state")
                .anyMatch(e -> e.startsWith("JAVA_TOOL_OPTIONS=") && e.contains("-XX:MaxRAMPercentage=") && e.contains("-XX:+ExitOnOutOfMemoryError"));
        assertThat(config.get("Labels").get("org.opencontainers.image.title").asText()).isEqualTo("Eddy");
        assertThat(config.get("Labels").get("org.opencontainers.image.licenses").asText()).isEqualTo("Apache-2.0");

        // Every layer's files, as the container sees them.
        final Set<String> files = new HashSet<>();
        final Map<String, Integer> modes = new HashMap<>();
        long bytes = 0;
        for (final JsonNode layer : manifest.get("Layers")) {
            final byte[] blob = entries.get(layer.asText());
            bytes += blob.length;
            for (final Map.Entry<String, byte[]> file : tar(new GZIPInputStream(new java.io.ByteArrayInputStream(blob)), true).entrySet()) {
                final String[] nameAndMode = file.getKey().split("\u0000");
                files.add(nameAndMode[0]);
                modes.put(nameAndMode[0], Integer.parseInt(nameAndMode[1]));
            }
        }
        assertThat(files).contains("app/eddy.jar", "opt/java/bin/java", "opt/java/lib/libjli.so", "lib64/ld-linux-x86-64.so.2", "etc/passwd")
                .anyMatch(f -> f.matches("(usr/)?lib/x86_64-linux-gnu/libstdc\\+\\+\\.so\\.6.*"))
                .anyMatch(f -> f.matches("(usr/)?lib/x86_64-linux-gnu/libc\\.so\\.6"));
        assertThat(modes.get("opt/java/bin/java") & 0111).as("java is executable").isNotZero();
        assertThat(modes.get("lib64/ld-linux-x86-64.so.2") & 0111).as("the dynamic loader is executable").isNotZero();
        assertThat(modes.get("tmp") & 0777).as("/tmp is world-writable (Jib sets no sticky bit)").isEqualTo(0777);
        assertThat(new String(passwd(manifest, entries), StandardCharsets.UTF_8)).contains("nonroot:x:65532:65532");
        assertThat(bytes).as("the image's compressed layers").isLessThan(180L * 1024 * 1024);
    }

    private static byte[] passwd(final JsonNode manifest, final Map<String, byte[]> entries) throws IOException {
        for (final JsonNode layer : manifest.get("Layers")) {
            final Map<String, byte[]> contents = tar(new GZIPInputStream(new java.io.ByteArrayInputStream(entries.get(layer.asText()))), false);
            if (contents.containsKey("etc/passwd")) {
                return contents.get("etc/passwd");
            }
        }
        throw new AssertionError("no etc/passwd in the image");
    }

    /** A tar's regular files by name (with {@code withModes}: names suffixed with NUL and the octal mode, contents empty). */
    private static Map<String, byte[]> tar(final InputStream raw, final boolean withModes) throws IOException {
        final Map<String, byte[]> files = new HashMap<>();
        try (InputStream in = new BufferedInputStream(raw)) {
            final byte[] header = new byte[512];
            while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
                final String name = field(header, 0, 100).replaceFirst("^\\./", "").replaceFirst("^/", "").replaceFirst("/$", "");
                final int mode = Integer.parseInt(field(header, 100, 8).trim(), 8);
                final long size = Long.parseLong(field(header, 124, 12).trim(), 8);
                final byte[] content = in.readNBytes((int) size);
                in.skipNBytes((512 - size % 512) % 512);
                files.put(withModes ? name + "\u0000" + mode : name, withModes ? new byte[0] : content);
            }
        }
        return files;
    }

    private static String field(final byte[] header, final int from, final int length) {
        int end = from;
        while (end < from + length && header[end] != 0) {
            end++;
        }
        return new String(header, from, end - from, StandardCharsets.US_ASCII);
    }
}
