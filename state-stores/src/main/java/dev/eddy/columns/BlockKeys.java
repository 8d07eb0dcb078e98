package dev.eddy.columns;

import java.nio.ByteBuffer;
import java.util.BitSet;
import org.apache.kafka.common.utils.Bytes;

/**
 * Keys of the {@code event-blocks} store, where each partition keeps its events column by column.
 *
 * <p>A partition numbers the events it stores per project, 0, 1, 2, ... (the row's <em>sequence</em>); rows
 * {@code [n × ROWS, (n + 1) × ROWS)} make block {@code n}. Under a project and block number the store keeps, in this
 * key order: the sealed block ({@link Kind#BLOCK}, an {@link EventBlock}), the set of its rows that are no longer
 * stored ({@link Kind#DELETED}: moved to another person's partition by a merge, or expired), and, while the block is
 * being filled, its rows one record each ({@link Kind#TAIL}, a {@link TailRow}). When the last row of a block arrives
 * its tail becomes one sealed block; when every row of a sealed block is deleted, the block goes. So a project's
 * events are one key range, read in block order: {@code [project: 8][block: 8][kind: 1]}, plus {@code [row: 2]} for a
 * tail row, big-endian.
 */
public final class BlockKeys {
    /** Rows per block: small enough that a partition's tail (read row by row) stays cheap, large enough to compress. */
    public static final int ROWS = 4096;
    private static final int LENGTH = 8 + 8 + 1;
    /** The {@code event-block-meta} key present once every event of the partition's timelines has its row. */
    public static final String COMPLETE = "complete";
    /** The {@code event-block-meta} key prefix of a project's next row number ({@code next-row:<project id>}). */
    public static final String NEXT_ROW = "next-row:";

    /** What a key holds. */
    public enum Kind {
        BLOCK, DELETED, TAIL
    }

    private BlockKeys() {
    }

    public static Bytes block(final long projectId, final long block) {
        return key(projectId, block, Kind.BLOCK);
    }

    public static Bytes deleted(final long projectId, final long block) {
        return key(projectId, block, Kind.DELETED);
    }

    /** The key of row {@code row} (0 to {@link #ROWS} - 1) of a block being filled. */
    public static Bytes tail(final long projectId, final long block, final int row) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH + 2).putLong(projectId).putLong(block).put((byte) Kind.TAIL.ordinal())
                .putShort((short) row).array());
    }

    /** The first key of a block's tail; with {@link #tailEnd} the range of all of it. */
    public static Bytes tailStart(final long projectId, final long block) {
        return tail(projectId, block, 0);
    }

    public static Bytes tailEnd(final long projectId, final long block) {
        return tail(projectId, block, ROWS - 1);
    }

    /** The first key of a project; with {@link #projectEnd} the range of every block of it. */
    public static Bytes projectStart(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).putLong(projectId).array());
    }

    public static Bytes projectEnd(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH + 2).putLong(projectId).putLong(-1L).put((byte) 0xFF).putShort((short) -1).array());
    }

    public static long project(final Bytes key) {
        return ByteBuffer.wrap(key.get()).getLong();
    }

    public static long block(final Bytes key) {
        return ByteBuffer.wrap(key.get(), 8, 8).getLong();
    }

    public static Kind kind(final Bytes key) {
        final int kind = key.get()[16];
        if (kind < 0 || kind >= Kind.values().length) {
            throw new IllegalArgumentException("not an event-blocks key");
        }
        return Kind.values()[kind];
    }

    /** The row of a {@link Kind#TAIL} key. */
    public static int row(final Bytes key) {
        return ByteBuffer.wrap(key.get(), LENGTH, 2).getShort() & 0xFFFF;
    }

    /** The block of a row's sequence number. */
    public static long blockOf(final long sequence) {
        return Math.floorDiv(sequence, ROWS);
    }

    /** A row's place in its block. */
    public static int rowOf(final long sequence) {
        return (int) Math.floorMod(sequence, ROWS);
    }

    /** A {@link Kind#DELETED} value: the rows deleted, one bit each. */
    public static BitSet deletedRows(final byte[] value) {
        return value == null ? new BitSet(ROWS) : BitSet.valueOf(value);
    }

    public static byte[] deletedValue(final BitSet rows) {
        return rows.toByteArray();
    }

    private static Bytes key(final long projectId, final long block, final Kind kind) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).putLong(projectId).putLong(block).put((byte) kind.ordinal()).array());
    }
}
