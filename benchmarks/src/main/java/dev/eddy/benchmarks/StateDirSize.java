package dev.eddy.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The bytes a streams instance keeps on disk, per state store: the RocksDB files under each task's
 * {@code rocksdb/<store>} directory of a state directory, summed over tasks. Memtables not yet flushed are not on
 * disk (Kafka Streams writes no RocksDB WAL: the changelogs are the log), so this is what the files hold.
 */
final class StateDirSize {
    private StateDirSize() {
    }

    /** Bytes per store name, for every store with files under {@code stateDir}. */
    static Map<String, Long> perStore(final Path stateDir) {
        final Map<String, Long> sizes = new TreeMap<>();
        try (Stream<Path> files = Files.walk(stateDir)) {
            files.filter(Files::isRegularFile).forEach(file -> {
                final Path relative = stateDir.relativize(file);
                for (int i = 0; i + 1 < relative.getNameCount(); i++) {
                    if ("rocksdb".equals(relative.getName(i).toString())) {
                        sizes.merge(relative.getName(i + 1).toString(), size(file), Long::sum);
                        return;
                    }
                }
            });
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return sizes;
    }

    private static long size(final Path file) {
        try {
            return Files.size(file);
        } catch (final IOException e) {
            // A file RocksDB compacted away while walking.
            return 0;
        }
    }

    /** Prints the bytes per stored event of every store and of all of them. */
    static void print(final Path stateDir, final long events) {
        final Map<String, Long> sizes = perStore(stateDir);
        final long total = sizes.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf(Locale.ROOT, "disk: %,d bytes of state for %,d events: %.1f bytes / event; per store:", total, events, (double) total / events);
        sizes.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(s -> System.out.printf(Locale.ROOT, " %s %.1f", s.getKey(), (double) s.getValue() / events));
        System.out.println();
    }
}
