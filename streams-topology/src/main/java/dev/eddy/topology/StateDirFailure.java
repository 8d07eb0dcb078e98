package dev.eddy.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.apache.kafka.streams.errors.ProcessorStateException;

/**
 * Failures of the local state directory (full disk, read-only or missing mount, a path taken by a file): no thread
 * can work around them, so the instance stops processing with one clear message instead of replacing threads in a
 * loop. Nothing is lost: an unfinished transaction is aborted, and its events wait in Kafka for a restart.
 */
public final class StateDirFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private static final byte[] PROBE = "eddy state directory probe\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    private StateDirFailure(final String message, final Throwable cause) {
        super(message, cause);
    }

    /**
     * Checks that {@code dir} can be created and written, with a file written, synced and deleted.
     *
     * @throws StateDirFailure saying why it cannot
     */
    public static void requireWritable(final Path dir) {
        final Path probe = dir.resolve(".eddy-write-probe");
        try {
            Files.createDirectories(dir);
            try (FileChannel channel = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                channel.write(java.nio.ByteBuffer.wrap(PROBE));
                channel.force(true);
            }
            Files.delete(probe);
        } catch (final IOException | UncheckedIOException | SecurityException e) {
            throw new StateDirFailure("the state directory " + dir + " cannot be written: " + describe(e), e);
        }
    }

    /** What a stream thread's failure says about the state directory, if it is a storage failure. */
    public static Optional<String> reason(final Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            // RocksDB's own errors reach here wrapped in a ProcessorStateException.
            if (t instanceof StateDirFailure || t instanceof ProcessorStateException || t instanceof IOException || t instanceof UncheckedIOException) {
                return Optional.of(describe(deepest(failure)));
            }
        }
        return Optional.empty();
    }

    private static Throwable deepest(final Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static String describe(final Throwable e) {
        final String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null || message.isBlank() ? "" : ": " + message);
    }
}
