package dev.eddy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * Bytes a process caused to be written to storage so far ({@code write_bytes} of {@code /proc/PID/io}): what its
 * RocksDB flushes and compactions, or a broker's log segments, cost the disk. On a machine whose disk is shared and
 * slow, a topology's rate follows these bytes more closely than its CPU, and the bytes do not vary from run to run.
 */
final class DiskWrites {
    private DiskWrites() {
    }

    /** The process's bytes written so far; empty without {@code /proc} (not Linux) or for a process not ours to read. */
    static OptionalLong of(final long pid) {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "io"))) {
                if (line.startsWith("write_bytes:")) {
                    return OptionalLong.of(Long.parseLong(line.substring("write_bytes:".length()).trim()));
                }
            }
            return OptionalLong.empty();
        } catch (final IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }
}
