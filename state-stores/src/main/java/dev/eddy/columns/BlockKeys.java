package dev.eddy.columns;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import org.apache.kafka.common.utils.Bytes;

/**
 * Keys of the {@code event-blocks} store, where each partition keeps its events column by column.
 *
 * <p>A partition numbers the events it stores per project, 0, 1, 2, ... (the row's <em>sequence</em>); rows
 * {@code [n × ROWS, (n + 1) × ROWS)} make block {@code n}. Under a project and block number the store keeps, in this
 * key order: a sealed block's entry ({@link Kind#SEALED}: its {@link Sealed} id and time span; the block itself, an
 * {@link EventBlock}, lies apart under {@link #sealedBlock}), the set of its rows that are no longer
 * stored ({@link Kind#DELETED}: moved to another person's partition by a merge, or expired), and, while the block is
 * being filled, its parts ({@link Kind#PART}: each {@link #PART_ROWS} rows as a small {@link EventBlock}). A
 * project's newest rows, its <em>tail</em>, lie apart from its blocks, one record each (a {@link TailRow}: where its
 * event's timeline keeps it) under {@code [4][project: 8][sequence: 8]} ({@link #tail}), with the newest row's
 * sequence under {@code [5][project: 8]} ({@link #newest}), a count of its range's changes under {@code [6][project: 8]}
 * ({@link #entriesChanged}), and a key that is never deleted after the project's tail
 * ({@link #tailEnd}): every {@link #PART_ROWS} rows the tail's rows become a part and are deleted, and the last row of
 * a block turns its parts and tail into one sealed block. RocksDB walks past every deleted key, and every older
 * version of a key written over, in a range until compaction drops them; so the tail's deleted rows lie before every
 * range read (a read seeks to the tail's first row: {@link #tailFrom}) and the range every query walks holds only a
 * few keys per block. Queries read at most {@link #PART_ROWS} - 1 rows per project and partition one by one. When
 * every row of a sealed block is deleted, the block goes. A project's blocks are one key range, read in block order:
 * {@code [0][project: 8][block: 8][kind: 1]}, plus {@code [part: 1]} for a part, big-endian. That range holds small
 * values only, so a query walks it cheaply and reads by key only the sealed blocks whose span meets its date range,
 * and of those only the columns it uses: a sealed block is stored section by section ({@link EventBlock#encodeSections}),
 * its table of sections under {@code [3][project: 8][block: 8]} and each section under the same key followed by the
 * section's name. A query that holds a block decoded already reads none of it: a
 * sealed block never changes, and its id, new each time a block is sealed, names its content.
 *
 * <p>The same store keeps the bookkeeping, in key spaces no project's range reaches (one store, not three: each
 * store is a RocksDB instance per partition, with its own memtables to flush): which row holds each stored event
 * ({@code [1][timeline key]} → the row's sequence number, 8 bytes: {@link #rowOfEvent}) and named numbers
 * ({@code [2][name]} → 8 bytes: {@link #meta}), such as {@link #COMPLETE}, present once every event of the
 * partition's timelines has its row. A project's next row number follows its newest tail row.
 */
public final class BlockKeys {
    /** The layout's version, kept under {@link #FORMAT}: blocks of another are rebuilt. */
    public static final long VERSION = 4;
    /** The {@link #meta} name of the layout's version. */
    public static final String FORMAT = "format";
    /** Rows per sealed block. */
    public static final int ROWS = 4096;
    /** Rows per part of a block being filled: the most rows a query reads one by one per project and partition. */
    public static final int PART_ROWS = 256;
    private static final byte BLOCKS = 0;
    private static final byte ROW_OF_EVENT = 1;
    private static final byte META = 2;
    private static final byte SEALED_BLOCKS = 3;
    private static final byte TAIL_ROWS = 4;
    private static final byte NEWEST_ROW = 5;
    private static final byte ENTRIES_CHANGED = 6;
    private static final int LENGTH = 1 + 8 + 8 + 1;
    /** The {@link #meta} name present once every event of the partition's timelines has its row. */
    public static final String COMPLETE = "complete";

    /** What a key of a project's range holds. */
    public enum Kind {
        SEALED, DELETED, PART
    }

    /**
     * A sealed block's entry in its project's range.
     *
     * @param id          chosen at random when the block was sealed: the same id is the same content
     * @param firstMicros the earliest time of its rows
     * @param lastMicros  the latest
     */
    public record Sealed(long id, long firstMicros, long lastMicros) {
        public byte[] encode() {
            return ByteBuffer.allocate(3 * Long.BYTES).putLong(id).putLong(firstMicros).putLong(lastMicros).array();
        }

        public static Sealed decode(final byte[] value) {
            if (value.length != 3 * Long.BYTES) {
                throw new IllegalArgumentException("a sealed block's entry of " + value.length + " bytes");
            }
            final ByteBuffer in = ByteBuffer.wrap(value);
            return new Sealed(in.getLong(), in.getLong(), in.getLong());
        }
    }

    private BlockKeys() {
    }

    /** The key of a sealed block's entry ({@link Sealed}) in its project's range. */
    public static Bytes sealed(final long projectId, final long block) {
        return Bytes.wrap(key(projectId, block, Kind.SEALED).array());
    }

    /**
     * The key of a sealed block's table of sections ({@link EventBlock.Stored#header}), outside every project's range;
     * each section follows it under {@link #sealedSection}.
     */
    public static Bytes sealedBlock(final long projectId, final long block) {
        return Bytes.wrap(ByteBuffer.allocate(1 + 8 + 8).put(SEALED_BLOCKS).putLong(projectId).putLong(block).array());
    }

    /** The key of a section (a column) of a sealed block: the block's key, then the section's name in UTF-8. */
    public static Bytes sealedSection(final long projectId, final long block, final String section) {
        final byte[] name = section.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(1 + 8 + 8 + name.length).put(SEALED_BLOCKS).putLong(projectId).putLong(block).put(name).array());
    }

    /** The last key a sealed block's sections can have (UTF-8 never has a 0xFF byte): with {@link #sealedBlock}, all of them. */
    public static Bytes sealedSectionsEnd(final long projectId, final long block) {
        return Bytes.wrap(ByteBuffer.allocate(1 + 8 + 8 + 1).put(SEALED_BLOCKS).putLong(projectId).putLong(block).put((byte) 0xFF).array());
    }

    public static Bytes deleted(final long projectId, final long block) {
        return Bytes.wrap(key(projectId, block, Kind.DELETED).array());
    }

    /** The key of part {@code part} (rows {@code part × PART_ROWS} on) of a block being filled. */
    public static Bytes part(final long projectId, final long block, final int part) {
        return Bytes.wrap(key(projectId, block, Kind.PART, 1).put((byte) part).array());
    }

    /** The part of a {@link Kind#PART} key. */
    public static int part(final Bytes key) {
        return key.get()[LENGTH] & 0xFF;
    }

    /** The first key of a block's parts; with {@link #partsEnd} the range of all of them. */
    public static Bytes partsStart(final long projectId, final long block) {
        return part(projectId, block, 0);
    }

    public static Bytes partsEnd(final long projectId, final long block) {
        return part(projectId, block, ROWS / PART_ROWS - 1);
    }

    /** The key of the row numbered {@code sequence} while it is in its project's tail ({@link TailRow}). */
    public static Bytes tail(final long projectId, final long sequence) {
        return Bytes.wrap(ByteBuffer.allocate(1 + 8 + 8).put(TAIL_ROWS).putLong(projectId).putLong(sequence).array());
    }

    /**
     * The key after every tail row of a project, written with its first row and never deleted: a range of the tail
     * ends on it (RocksDB's iterator steps to the next live key after the last one read), not on the next project's
     * deleted rows.
     */
    public static Bytes tailEnd(final long projectId) {
        return tail(projectId, Long.MAX_VALUE);
    }

    /** The sequence of a {@link #tail} key. */
    public static long tailSequence(final Bytes key) {
        return ByteBuffer.wrap(key.get(), 1 + 8, 8).getLong();
    }

    /** The key of the sequence of the project's newest row ({@link #number}), absent before its first. */
    public static Bytes newest(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(1 + 8).put(NEWEST_ROW).putLong(projectId).array());
    }

    /**
     * The key of a number that moves on whenever the project's range ({@link #projectStart}) changes: a part made, a
     * block sealed or removed, rows marked deleted. Written after the change and before the tail rows a change takes
     * over are deleted, so a read that opens the tail, then finds this number as a walk of the range it kept found it,
     * may take that walk's entries as they are (rows moved from the tail to a part since would have moved the number
     * on). Absent until the first change; never repeated within a store: it is the writer's count of changes, which
     * only grows.
     */
    public static Bytes entriesChanged(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(1 + 8).put(ENTRIES_CHANGED).putLong(projectId).array());
    }

    /**
     * The first row of a project's tail, given its newest row: the rows of the newest row's part, unless that part is
     * complete (and made: then none).
     */
    public static long tailFrom(final long newest) {
        final long next = newest + 1;
        return next - Math.floorMod(next, PART_ROWS);
    }

    /** The first key of a project; with {@link #projectEnd} the range of every block of it. */
    public static Bytes projectStart(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH).put(BLOCKS).putLong(projectId).array());
    }

    public static Bytes projectEnd(final long projectId) {
        return Bytes.wrap(ByteBuffer.allocate(LENGTH + 2).put(BLOCKS).putLong(projectId).putLong(-1L).put((byte) 0xFF).putShort((short) -1)
                .array());
    }

    public static long project(final Bytes key) {
        return ByteBuffer.wrap(key.get(), 1, 8).getLong();
    }

    public static long block(final Bytes key) {
        return ByteBuffer.wrap(key.get(), 9, 8).getLong();
    }

    public static Kind kind(final Bytes key) {
        final byte[] bytes = key.get();
        final int kind = bytes.length < LENGTH || bytes[0] != BLOCKS ? -1 : bytes[LENGTH - 1];
        if (kind < 0 || kind >= Kind.values().length) {
            throw new IllegalArgumentException("not a key of a project's blocks");
        }
        return Kind.values()[kind];
    }

    /** The block of a row's sequence number. */
    public static long blockOf(final long sequence) {
        return Math.floorDiv(sequence, ROWS);
    }

    /** A row's place in its block. */
    public static int rowOf(final long sequence) {
        return (int) Math.floorMod(sequence, ROWS);
    }

    /** The key under which the row of the event stored under {@code timelineKey} is kept. */
    public static Bytes rowOfEvent(final Bytes timelineKey) {
        return Bytes.wrap(ByteBuffer.allocate(1 + timelineKey.get().length).put(ROW_OF_EVENT).put(timelineKey.get()).array());
    }

    /** The key of a named number of the partition's bookkeeping. */
    public static Bytes meta(final String name) {
        final byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(1 + utf8.length).put(META).put(utf8).array());
    }

    /** An 8-byte value (a sequence number, a counter). */
    public static byte[] number(final long value) {
        return ByteBuffer.allocate(Long.BYTES).putLong(value).array();
    }

    /** The number of an 8-byte value; {@code otherwise} for none. */
    public static long number(final byte[] value, final long otherwise) {
        return value == null ? otherwise : ByteBuffer.wrap(value).getLong();
    }

    /** A {@link Kind#DELETED} value: the rows deleted, one bit each. */
    public static BitSet deletedRows(final byte[] value) {
        return value == null ? new BitSet(ROWS) : BitSet.valueOf(value);
    }

    public static byte[] deletedValue(final BitSet rows) {
        return rows.toByteArray();
    }

    private static ByteBuffer key(final long projectId, final long block, final Kind kind) {
        return key(projectId, block, kind, 0);
    }

    private static ByteBuffer key(final long projectId, final long block, final Kind kind, final int extra) {
        return ByteBuffer.allocate(LENGTH + extra).put(BLOCKS).putLong(projectId).putLong(block).put((byte) kind.ordinal());
    }
}
