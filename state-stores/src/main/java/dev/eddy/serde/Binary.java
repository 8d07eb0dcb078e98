package dev.eddy.serde;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Versioned binary documents written with {@link DataOutputStream}: a version byte, the body, nothing after it.
 * Reading refuses another version, a truncated body and trailing bytes alike.
 */
public final class Binary {
    private Binary() {
    }

    /** Writes a body. */
    @FunctionalInterface
    public interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** Reads a body. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    public static byte[] write(final int version, final Writer body) {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(version);
            body.write(out);
        } catch (final IOException e) {
            throw new UncheckedIOException("writing to memory", e);
        }
        return bytes.toByteArray();
    }

    /**
     * @param what names the document in errors ("a trend partial")
     * @throws IllegalArgumentException when the bytes are not such a document of {@code version}
     */
    public static <T> T read(final byte[] bytes, final int version, final String what, final Reader<T> body) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            final int given = in.read();
            if (given != version) {
                throw new IllegalArgumentException("not " + what + " of version " + version);
            }
            final T value = body.read(in);
            if (in.read() != -1) {
                throw new IllegalArgumentException("trailing bytes after " + what);
            }
            return value;
        } catch (final IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException refused) {
                throw refused;
            }
            throw new IllegalArgumentException("a truncated or corrupt " + what.replaceFirst("^an? ", ""), e);
        }
    }

    /** Writes an id: a canonical uuid in 16 bytes (tag 0), anything else as text (tag 1). */
    public static void writeId(final DataOutputStream out, final String id) throws IOException {
        final java.util.UUID uuid = canonicalUuid(id);
        if (uuid != null) {
            out.writeByte(0);
            out.writeLong(uuid.getMostSignificantBits());
            out.writeLong(uuid.getLeastSignificantBits());
        } else {
            out.writeByte(1);
            out.writeUTF(id);
        }
    }

    /** Reads an id {@link #writeId} wrote. */
    public static String readId(final DataInputStream in) throws IOException {
        return switch (in.readByte()) {
            case 0 -> new java.util.UUID(in.readLong(), in.readLong()).toString();
            case 1 -> in.readUTF();
            default -> throw new IllegalArgumentException("an id of unknown form");
        };
    }

    /** The uuid {@code id} is the canonical text of, else null. */
    private static java.util.UUID canonicalUuid(final String id) {
        if (id.length() != 36) {
            return null;
        }
        try {
            final java.util.UUID uuid = java.util.UUID.fromString(id);
            return uuid.toString().equals(id) ? uuid : null;
        } catch (final IllegalArgumentException e) {
            return null;
        }
    }
}
