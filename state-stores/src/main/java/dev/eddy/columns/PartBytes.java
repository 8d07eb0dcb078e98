package dev.eddy.columns;

import java.util.Arrays;

/**
 * A part of a block being filled named by its bytes as stored ({@link BlockKeys#part}: written once, a block rebuilt
 * writes others), so what was worked out from a part can be kept under it. Its hash samples the bytes instead of
 * reading them all: a query compares every part of a partition at every read, and hashing each part whole cost a
 * fifth of a refreshed dashboard's CPU (Kafka's {@code Bytes.equals} hashes both sides first). Equality compares the
 * bytes whole, so a sampled hash shared by two parts costs a comparison, never a wrong answer.
 */
public final class PartBytes {
    /** How many of a part's bytes its hash reads, spread over the part (and its last ones). */
    private static final int SAMPLES = 64;

    private final int part;
    private final byte[] encoded;
    private final int hash;
    /** The part decoded, once asked for ({@link #decoded}); not part of what names it. */
    private volatile EventBlock decoded;

    /**
     * @param part    the part's place in its block
     * @param encoded the part as stored ({@link EventBlock#encode}); not changed afterwards
     */
    public PartBytes(final int part, final byte[] encoded) {
        this.part = part;
        this.encoded = encoded;
        this.hash = sampledHash(part, encoded);
    }

    private static int sampledHash(final int part, final byte[] bytes) {
        int h = 31 * part + bytes.length;
        final int step = Math.max(1, bytes.length / SAMPLES);
        for (int i = 0; i < bytes.length; i += step) {
            h = 31 * h + bytes[i];
        }
        for (int i = Math.max(0, bytes.length - 8); i < bytes.length; i++) {
            h = 31 * h + bytes[i];
        }
        return h;
    }

    /**
     * The part decoded, kept with its bytes from the first ask: a funnel's progress keeps the parts it read, and a
     * block sealed from them is checked against them row by row.
     */
    public EventBlock decoded() {
        EventBlock block = decoded;
        if (block == null) {
            block = EventBlock.decode(encoded);
            decoded = block;
        }
        return block;
    }

    /** What it holds on the heap: its bytes, and its rows once decoded. */
    public long memoryBytes() {
        final EventBlock block = decoded;
        return 48 + encoded.length + (block == null ? 0 : block.memoryBytes());
    }

    @Override
    public boolean equals(final Object other) {
        return this == other || other instanceof PartBytes p && p.hash == hash && p.part == part && Arrays.equals(p.encoded, encoded);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "part " + part + " (" + encoded.length + " bytes)";
    }
}
