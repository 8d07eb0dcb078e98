package dev.eddy.gateway.importer;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * How far an import got: the records of the file that Eddy acknowledged, from the first on without a gap (batches are
 * sent one after another, so every acknowledged record is in that prefix). An import that stops, however it stops,
 * resumes after them; records sent but not yet acknowledged are sent again, and Eddy drops those it already has by
 * their uuid.
 *
 * @param file         the file's identity: its size and a digest of its first mebibyte (a different file refuses to resume)
 * @param token        the project it went to
 * @param acknowledged records acknowledged, counted from the file's first
 * @param imported     of those, events sent (the rest were rejected)
 * @param rejected     of those, records that are not events
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
record Checkpoint(String file, String token, long acknowledged, long imported, long rejected) {
    private static final int DIGESTED = 1 << 20;

    static Checkpoint start(final String file, final String token) {
        return new Checkpoint(file, token, 0, 0, 0);
    }

    Checkpoint advanced(final long records, final long events, final long refused) {
        return new Checkpoint(file, token, acknowledged + records, imported + events, rejected + refused);
    }

    static Optional<Checkpoint> load(final Path path) throws IOException {
        if (!Files.exists(path)) {
            return Optional.empty();
        }
        return Optional.of(Json.mapper().readValue(path.toFile(), Checkpoint.class));
    }

    /** Written to a temporary file, then moved over the old one: a crash leaves one or the other, never half. */
    void save(final Path path) throws IOException {
        final Path temporary = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(temporary, Json.mapper().writeValueAsBytes(this));
        try {
            Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (final AtomicMoveNotSupportedException e) {
            Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** {@code size:sha-256 of the first MiB}: cheap for a file of any size, and different for any other export. */
    static String identity(final Path file) throws IOException {
        final MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream in = Files.newInputStream(file)) {
            sha.update(in.readNBytes(DIGESTED));
        }
        return Files.size(file) + ":" + HexFormat.of().formatHex(sha.digest());
    }
}
