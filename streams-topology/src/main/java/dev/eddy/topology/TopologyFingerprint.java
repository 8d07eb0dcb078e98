package dev.eddy.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Stream;
import org.apache.kafka.streams.TopologyDescription;

/**
 * Which topology wrote a streams instance's local state. Local state is a cache of the changelog topics, laid out by
 * task; after an upgrade that changes the topology's sub-topologies, an old layout makes Kafka Streams fail at start
 * (it opens the old task directories as the new tasks). So the state directory records the topology's fingerprint,
 * and state written by another topology (or by a version that recorded none) is wiped before start and restored from
 * the changelogs.
 */
final class TopologyFingerprint {
    static final String FILE = "eddy-topology.sha256";

    private TopologyFingerprint() {
    }

    static String of(final TopologyDescription description) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(description.toString().getBytes(StandardCharsets.UTF_8)));
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /**
     * @param appStateDir the application's state directory ({@code state.dir/application.id})
     * @return whether it holds task state written by another topology, or by one that recorded no fingerprint
     */
    static boolean stale(final Path appStateDir, final String fingerprint) {
        if (!Files.isDirectory(appStateDir) || !hasTasks(appStateDir)) {
            return false;
        }
        final Path file = appStateDir.resolve(FILE);
        try {
            return !Files.exists(file) || !Files.readString(file, StandardCharsets.UTF_8).trim().equals(fingerprint);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    static void record(final Path appStateDir, final String fingerprint) {
        try {
            Files.createDirectories(appStateDir);
            Files.writeString(appStateDir.resolve(FILE), fingerprint + "\n", StandardCharsets.UTF_8);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write the topology fingerprint into " + appStateDir, e);
        }
    }

    /** Task directories are named {@code <sub-topology>_<partition>}. */
    private static boolean hasTasks(final Path appStateDir) {
        try (Stream<Path> entries = Files.list(appStateDir)) {
            return entries.anyMatch(p -> Files.isDirectory(p) && p.getFileName().toString().matches("\\d+_\\d+"));
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot list " + appStateDir, e);
        }
    }
}
