package dev.eddy.columns;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A block of events stored column by column, the unit of Eddy's event-major analytics storage: a query reads a block's
 * times, persons and the few property columns it uses, never the others, and never parses JSON per event.
 *
 * <p>Every column but the times and uuids is dictionary-encoded: a block keeps each distinct value once (a person's
 * uuid, an event name, a property's JSON value) and a small code per row. A property filter or breakdown is decided
 * once per distinct value and then read per row from its code ({@link Column#code}); code 0 of a property column is
 * "absent". Property values are kept as the JSON they arrived as (PostHog's filters compare strings, numbers and
 * booleans each their own way), so the existing filter semantics apply to dictionary entries unchanged.
 *
 * <p>Encoding (version 1), integers big-endian, {@code varint} unsigned LEB128, a string {@code [length: varint][UTF-8]}:
 * {@code [version][rows: varint][section count: varint]([name: string][length: varint])*} then the sections' bytes in
 * that order, so a reader finds a column without reading the others. Sections: {@code span} (the earliest and latest
 * time, 8 bytes each, so a query skips a block outside its range unread), {@code time} ({@code [first: 8]} then a
 * zigzag varint delta per row), {@code uuid} (16 bytes per row), {@code person} (a dictionary of 16-byte uuids, then
 * codes), {@code distinct_id} and {@code event} (dictionaries of strings, then codes), {@code g:<type index>} per group
 * type some event has ({@code $groups}: a dictionary of the keys as JSON texts) and {@code p:<key>} per property (a
 * dictionary of JSON texts), each of the last two without the "absent" entry, then codes. A dictionary is {@code [size: varint][entries]},
 * codes {@code [width: 1, 2 or 4][rows × width]}. The table and the sections may also be stored apart
 * ({@link #encodeSections}, {@link #ofSections}), so that a reader fetches only the columns it uses. A decoded block
 * reads a section when it is first asked for, from any thread (a cached block is shared by queries). Rows keep the
 * order they were added in.
 */
public final class EventBlock {
    private static final byte VERSION = 1;

    private final int rows;
    /** Each section's length, for a decoded block; empty for one built in memory. */
    private final Map<String, Integer> sections;
    /** Reads a section of a decoded block; null for one built in memory. */
    private final java.util.function.Function<String, ByteBuffer> source;
    /** What the block keeps of its encoding: all of it, or its table of sections when they are read one by one. */
    private final int encodedBytes;
    // Sections decoded so far: each read when first asked for, by whichever thread asks (two may both decode one; either
    // result is the same), and published through volatile fields and concurrent maps.
    private volatile long[] timeMicros;
    /** Each row's uuid as two longs, most significant first. */
    private volatile long[] uuids;
    private volatile Persons persons;
    private volatile Column distinctIds;
    private volatile Column events;
    private final Map<String, Column> properties;
    private final Map<String, Column> groups;
    private volatile long[] span;
    /** The column of every key no row has, shared: decoded blocks grow with the columns asked of them, not the keys. */
    private final java.util.concurrent.atomic.AtomicReference<Column> absent = new java.util.concurrent.atomic.AtomicReference<>();
    /** Roughly what the decoded sections take in memory, in bytes. */
    private final java.util.concurrent.atomic.AtomicLong decodedBytes = new java.util.concurrent.atomic.AtomicLong();

    private EventBlock(final long[] timeMicros, final long[] uuids, final Persons persons,
                       final Column distinctIds, final Column events, final Map<String, Column> groups,
                       final Map<String, Column> properties) {
        this.rows = timeMicros.length;
        this.sections = Map.of();
        this.source = null;
        this.encodedBytes = 0;
        this.timeMicros = timeMicros;
        this.uuids = uuids;
        this.persons = persons;
        this.distinctIds = distinctIds;
        this.events = events;
        this.groups = groups;
        this.properties = properties;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (final long t : timeMicros) {
            first = Math.min(first, t);
            last = Math.max(last, t);
        }
        this.span = new long[] {first, last};
    }

    private EventBlock(final int rows, final Map<String, Integer> sections, final java.util.function.Function<String, ByteBuffer> source,
                       final int encodedBytes) {
        this.rows = rows;
        this.sections = sections;
        this.source = source;
        this.encodedBytes = encodedBytes;
        this.properties = new java.util.concurrent.ConcurrentHashMap<>();
        this.groups = new java.util.concurrent.ConcurrentHashMap<>();
    }

    /** One event as a block takes it. */
    public record Row(long timeMicros, UUID uuid, UUID person, String distinctId, String event, Map<Integer, String> groups,
                      ObjectNode properties) {
        public Row {
            Objects.requireNonNull(uuid, "uuid");
            Objects.requireNonNull(person, "person");
            Objects.requireNonNull(distinctId, "distinctId");
            Objects.requireNonNull(event, "event");
            groups = Map.copyOf(groups);
            Objects.requireNonNull(properties, "properties");
        }

        /** A row without groups. */
        public Row(final long timeMicros, final UUID uuid, final UUID person, final String distinctId, final String event,
                   final ObjectNode properties) {
            this(timeMicros, uuid, person, distinctId, event, Map.of(), properties);
        }
    }

    public int rows() {
        return rows;
    }

    public long timeMicros(final int row) {
        long[] times = timeMicros;
        if (times == null) {
            times = readTimes(section(TIME), rows);
            timeMicros = decoded(times, (long) rows * Long.BYTES);
        }
        return times[row];
    }

    public UUID uuid(final int row) {
        final long[] all = uuids();
        return new UUID(all[row * 2], all[row * 2 + 1]);
    }

    /** The most significant half of row {@code row}'s uuid. */
    public long uuidHigh(final int row) {
        return uuids()[row * 2];
    }

    /** The least significant half of row {@code row}'s uuid. */
    public long uuidLow(final int row) {
        return uuids()[row * 2 + 1];
    }

    private long[] uuids() {
        long[] all = uuids;
        if (all == null) {
            final ByteBuffer in = section(UUIDS);
            all = new long[rows * 2];
            for (int i = 0; i < all.length; i++) {
                all[i] = in.getLong();
            }
            uuids = decoded(all, (long) rows * 2 * Long.BYTES);
        }
        return all;
    }

    /**
     * Roughly how many bytes the block takes in memory: its encoding and what has been decoded of it so far (a cache
     * weighs blocks by it).
     */
    public long memoryBytes() {
        return encodedBytes + decodedBytes.get();
    }

    private <T> T decoded(final T section, final long size) {
        decodedBytes.addAndGet(size);
        return section;
    }

    /** What a column's codes and dictionary take in memory, roughly: JSON texts as Jackson's nodes hold them. */
    private static long size(final Column column, final int rows) {
        long size = column.codesBytes() + 16;
        for (final JsonNode entry : column.dictionary) {
            size += entry == null ? 8 : 56 + 2L * (entry.isTextual() ? entry.textValue().length() : 8);
        }
        return size;
    }

    /** The person of code {@code code} of {@link #persons()}, as the uuid it is stored as. */
    public UUID person(final int code) {
        return persons().uuid(code);
    }

    /** The rows' persons. */
    public Persons persons() {
        Persons column = persons;
        if (column == null) {
            try {
                final ByteBuffer in = section(PERSONS);
                final long[] halves = new long[2 * length(in)];
                for (int i = 0; i < halves.length; i++) {
                    halves[i] = in.getLong();
                }
                column = new Persons(halves, Codes.read(in, rows, halves.length / 2), decodedBytes);
                persons = decoded(column, column.memoryBytes());
            } catch (final BufferUnderflowException e) {
                throw new IllegalArgumentException("a truncated or corrupt event block", e);
            }
        }
        return column;
    }

    public Column distinctIds() {
        Column column = distinctIds;
        if (column == null) {
            column = texts(section(DISTINCT_IDS), rows);
            distinctIds = decoded(column, size(column, rows));
        }
        return column;
    }

    /** The rows' event names. */
    public Column events() {
        Column column = events;
        if (column == null) {
            column = texts(section(EVENTS), rows);
            events = decoded(column, size(column, rows));
        }
        return column;
    }

    /** The column of property {@code key}: every row absent when no event of the block has it. */
    public Column property(final String key) {
        return column(properties, key, PROPERTY + key);
    }

    /** The rows' keys of the group of type {@code typeIndex} ({@code $groups}): absent where an event has none. */
    public Column group(final int typeIndex) {
        return column(groups, GROUP + typeIndex, GROUP + typeIndex);
    }

    private Column column(final Map<String, Column> decodedColumns, final String key, final String section) {
        final Column column = decodedColumns.get(key);
        if (column != null) {
            return column;
        }
        if (source == null) {
            // A block built in memory keeps only the columns it was built with (they are what it encodes).
            return Column.absent(rows);
        }
        if (!sections.containsKey(section)) {
            if (absent.get() == null && absent.compareAndSet(null, Column.absent(rows))) {
                decodedBytes.addAndGet((long) rows * Integer.BYTES);
            }
            return absent.get();
        }
        final Column read = readProperty(section(section), rows);
        return decodedColumns.computeIfAbsent(key, k -> decoded(read, size(read, rows)));
    }

    /** The earliest and the latest time of the block's rows (microseconds), read without reading the times. */
    public long firstMicros() {
        return span()[0];
    }

    public long lastMicros() {
        return span()[1];
    }

    private long[] span() {
        long[] both = span;
        if (both == null) {
            final ByteBuffer in = section(SPAN);
            both = new long[] {in.getLong(), in.getLong()};
            span = both;
        }
        return both;
    }

    /** The keys of the block's property columns. */
    public java.util.Set<String> propertyKeys() {
        if (source == null) {
            return Collections.unmodifiableSet(properties.keySet());
        }
        final java.util.Set<String> keys = new java.util.LinkedHashSet<>();
        sections.keySet().stream().filter(name -> name.startsWith(PROPERTY)).forEach(name -> keys.add(name.substring(PROPERTY.length())));
        return Collections.unmodifiableSet(keys);
    }

    /** The row as it was added (its properties rebuilt from the columns). */
    public Row row(final int row) {
        final ObjectNode props = Json.mapper().createObjectNode();
        for (final String key : propertyKeys()) {
            final JsonNode value = property(key).value(row);
            if (value != null) {
                props.set(key, value);
            }
        }
        final Map<Integer, String> groupKeys = new HashMap<>();
        for (int index = 0; index < GROUP_TYPES; index++) {
            final JsonNode key = group(index).value(row);
            if (key != null) {
                groupKeys.put(index, key.asText());
            }
        }
        return new Row(timeMicros(row), uuid(row), person(persons().code(row)), distinctIds().value(row).asText(),
                events().value(row).asText(), groupKeys, props);
    }

    /**
     * A code per row: two bytes each while the dictionary has at most 65,536 entries (every sealed block's, whose rows
     * are fewer), four past that.
     */
    private static final class Codes {
        private final char[] small;
        private final int[] large;

        private Codes(final char[] small, final int[] large) {
            this.small = small;
            this.large = large;
        }

        /** {@code codes} as kept for a dictionary of {@code dictionarySize} entries. */
        static Codes of(final int[] codes, final int dictionarySize) {
            if (dictionarySize > 0x10000) {
                return new Codes(null, codes);
            }
            final char[] small = new char[codes.length];
            for (int r = 0; r < codes.length; r++) {
                small[r] = (char) codes[r];
            }
            return new Codes(small, null);
        }

        /** Reads {@code rows} codes of a dictionary of {@code size} entries, each checked to be one of them. */
        static Codes read(final ByteBuffer in, final int rows, final int size) {
            final int width = in.get();
            final char[] small = size <= 0x10000 ? new char[rows] : null;
            final int[] large = small == null ? new int[rows] : null;
            for (int r = 0; r < rows; r++) {
                final int code = switch (width) {
                    case 1 -> in.get() & 0xff;
                    case 2 -> in.getShort() & 0xffff;
                    case 4 -> in.getInt();
                    default -> throw new IllegalArgumentException("codes of width " + width);
                };
                if (code < 0 || code >= size) {
                    throw new IllegalArgumentException("a code outside its dictionary");
                }
                if (small != null) {
                    small[r] = (char) code;
                } else {
                    large[r] = code;
                }
            }
            return new Codes(small, large);
        }

        int code(final int row) {
            return small != null ? small[row] : large[row];
        }

        int rows() {
            return small != null ? small.length : large.length;
        }

        long bytes() {
            return small != null ? 2L * small.length : 4L * large.length;
        }
    }

    /**
     * One dictionary-encoded column: the distinct values and a code per row.
     */
    public static final class Column {
        private final JsonNode[] dictionary;
        private final Codes codes;

        Column(final JsonNode[] dictionary, final int[] codes) {
            this(dictionary, Codes.of(codes, dictionary.length));
        }

        private Column(final JsonNode[] dictionary, final Codes codes) {
            this.dictionary = dictionary;
            this.codes = codes;
        }

        static Column absent(final int rows) {
            return new Column(new JsonNode[] {null}, new Codes(new char[rows], null));
        }

        /** How many codes there are: code {@code c} stands for {@link #entry(int) entry(c)}. */
        public int size() {
            return dictionary.length;
        }

        /** The value code {@code code} stands for; null for "absent" (code 0 of a property column). */
        public JsonNode entry(final int code) {
            return dictionary[code];
        }

        public int code(final int row) {
            return codes.code(row);
        }

        public JsonNode value(final int row) {
            return dictionary[codes.code(row)];
        }

        /** The code of {@code value}, or -1 when no row has it. */
        public int codeOf(final String value) {
            for (int c = 0; c < dictionary.length; c++) {
                if (dictionary[c] != null && dictionary[c].isTextual() && dictionary[c].asText().equals(value)) {
                    return c;
                }
            }
            return -1;
        }

        long codesBytes() {
            return codes.bytes();
        }
    }

    /**
     * The rows' persons: a dictionary of uuids kept as their two halves (16 bytes an entry, where uuid objects and
     * their texts took about eight times that: a block's persons are nearly as many as its rows, and a cache of blocks held
     * little else) and a code per row. A person's uuid text is made when first asked for and kept.
     */
    public static final class Persons {
        /** Per code, the uuid's most then least significant half. */
        private final long[] halves;
        private final Codes codes;
        /**
         * Texts made so far, by code (made when a text is first asked for: a funnel asks for none); written by whichever
         * reader makes one first (a String is safely published, and two readers making the array keep either's).
         */
        private volatile String[] texts;
        /** The block's tally of decoded bytes, which a text made adds to; null for a block built in memory. */
        private final java.util.concurrent.atomic.AtomicLong decodedBytes;

        private Persons(final long[] halves, final Codes codes, final java.util.concurrent.atomic.AtomicLong decodedBytes) {
            this.halves = halves;
            this.codes = codes;
            this.decodedBytes = decodedBytes;
        }

        /** How many distinct persons the rows have: codes run from 0 to one less. */
        public int size() {
            return halves.length / 2;
        }

        public int code(final int row) {
            return codes.code(row);
        }

        public UUID uuid(final int code) {
            return new UUID(halves[2 * code], halves[2 * code + 1]);
        }

        /** The uuid's most significant half. */
        public long high(final int code) {
            return halves[2 * code];
        }

        /** The uuid's least significant half. */
        public long low(final int code) {
            return halves[2 * code + 1];
        }

        /** The uuid's text (as a person's properties are looked up and unique persons counted). */
        public String text(final int code) {
            String[] made = texts;
            if (made == null) {
                made = new String[size()];
                texts = made;
                added(8L * made.length);
            }
            String text = made[code];
            if (text == null) {
                text = uuid(code).toString();
                made[code] = text;
                added(TEXT_BYTES);
            }
            return text;
        }

        private void added(final long bytes) {
            if (decodedBytes != null) {
                decodedBytes.addAndGet(bytes);
            }
        }

        /** The text of row {@code row}'s person. */
        public String textAt(final int row) {
            return text(codes.code(row));
        }

        long memoryBytes() {
            return 8L * halves.length + codes.bytes() + 48;
        }

        /** What a uuid's text takes: the String, its 36 Latin-1 bytes in an array. */
        private static final long TEXT_BYTES = 24 + 16 + 40;
    }

    /**
     * Collects rows into a block, column by column as they are added; {@link #build} answers the rows added so far and
     * the builder takes more rows after it (a tail growing a few rows at a time is not built again from its first row).
     * Not thread-safe.
     */
    public static final class Builder {
        private int size;
        private long[] times = new long[16];
        private long[] uuids = new long[32];
        private final Map<UUID, Integer> personCodes = new HashMap<>();
        private long[] personHalves = new long[32];
        private int[] personRows = new int[16];
        private final Dictionary distinctIds = new Dictionary(false);
        private final Dictionary events = new Dictionary(false);
        private final Map<String, Dictionary> columns = new LinkedHashMap<>();
        private final Map<String, Dictionary> groupColumns = new LinkedHashMap<>();

        public Builder add(final Row row) {
            for (final Map.Entry<Integer, String> group : row.groups().entrySet()) {
                if (group.getKey() < 0 || group.getKey() >= GROUP_TYPES) {
                    throw new IllegalArgumentException("group type index " + group.getKey() + " is not from 0 to " + (GROUP_TYPES - 1));
                }
            }
            final int r = size++;
            if (r == times.length) {
                times = Arrays.copyOf(times, r * 2);
                uuids = Arrays.copyOf(uuids, r * 4);
                personRows = Arrays.copyOf(personRows, r * 2);
            }
            times[r] = row.timeMicros();
            uuids[r * 2] = row.uuid().getMostSignificantBits();
            uuids[r * 2 + 1] = row.uuid().getLeastSignificantBits();
            personRows[r] = personCodes.computeIfAbsent(row.person(), person -> {
                final int code = personCodes.size();
                if (2 * code + 2 > personHalves.length) {
                    personHalves = Arrays.copyOf(personHalves, personHalves.length * 2);
                }
                personHalves[2 * code] = person.getMostSignificantBits();
                personHalves[2 * code + 1] = person.getLeastSignificantBits();
                return code;
            });
            distinctIds.add(r, Json.mapper().getNodeFactory().textNode(row.distinctId()));
            events.add(r, Json.mapper().getNodeFactory().textNode(row.event()));
            for (final Iterator<Map.Entry<String, JsonNode>> it = row.properties().fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> property = it.next();
                columns.computeIfAbsent(property.getKey(), k -> new Dictionary(true)).add(r, property.getValue());
            }
            for (final Map.Entry<Integer, String> group : row.groups().entrySet()) {
                groupColumns.computeIfAbsent(GROUP + group.getKey(), k -> new Dictionary(true))
                        .add(r, Json.mapper().getNodeFactory().textNode(group.getValue()));
            }
            return this;
        }

        public int size() {
            return size;
        }

        /** The rows added so far as a block (its own copy: rows added later are not in it). */
        public EventBlock build() {
            final Map<String, Column> properties = new LinkedHashMap<>();
            columns.forEach((key, dictionary) -> properties.put(key, dictionary.column(size)));
            final Map<String, Column> groups = new LinkedHashMap<>();
            groupColumns.forEach((name, dictionary) -> groups.put(name, dictionary.column(size)));
            final Persons people = new Persons(Arrays.copyOf(personHalves, 2 * personCodes.size()),
                    Codes.of(Arrays.copyOf(personRows, size), personCodes.size()), null);
            return new EventBlock(Arrays.copyOf(times, size), Arrays.copyOf(uuids, size * 2), people, distinctIds.column(size),
                    events.column(size), groups, properties);
        }
    }

    /**
     * Builds one column: distinct values in order of first appearance; with {@code absent}, code 0 is kept for "none"
     * (the code of rows added before the column's first value, and of rows without it).
     */
    private static final class Dictionary {
        private final Map<JsonNode, Integer> codes = new HashMap<>();
        private final List<JsonNode> entries = new ArrayList<>();
        private int[] rows = new int[16];

        Dictionary(final boolean absent) {
            if (absent) {
                entries.add(null);
            }
        }

        void add(final int row, final JsonNode value) {
            if (row >= rows.length) {
                rows = Arrays.copyOf(rows, Math.max(rows.length * 2, row + 1));
            }
            rows[row] = codes.computeIfAbsent(value, v -> {
                entries.add(v);
                return entries.size() - 1;
            });
        }

        /** The first {@code count} rows' column. */
        Column column(final int count) {
            return new Column(entries.toArray(new JsonNode[0]), Arrays.copyOf(rows, count));
        }
    }

    private static final String TIME = "time";
    private static final String UUIDS = "uuid";
    private static final String PERSONS = "person";
    private static final String DISTINCT_IDS = "distinct_id";
    private static final String EVENTS = "event";
    private static final String PROPERTY = "p:";
    private static final String GROUP = "g:";
    private static final String SPAN = "span";
    /** Group type indexes run from 0 to 4, as PostHog's five group types. */
    public static final int GROUP_TYPES = 5;

    /** The block's encoding: its table of sections, then the sections. */
    public byte[] encode() {
        final Stored stored = encodeSections();
        final ByteArrayOutputStream block = new ByteArrayOutputStream(stored.header().length + rows * 32);
        block.writeBytes(stored.header());
        stored.sections().values().forEach(block::writeBytes);
        return block.toByteArray();
    }

    /**
     * A block stored section by section, so that a reader fetches only the columns it uses.
     *
     * @param header   {@link #encode}'s table of sections (version, rows, each section's name and length)
     * @param sections each section's bytes, by name, in the table's order
     */
    public record Stored(byte[] header, Map<String, byte[]> sections) {
    }

    /** The block's table of sections and the sections, apart ({@link #ofSections} reads them back). */
    public Stored encodeSections() {
        final Map<String, byte[]> parts = new LinkedHashMap<>();
        if (source != null) {
            sections.keySet().forEach(name -> {
                final ByteBuffer section = section(name);
                final byte[] copy = new byte[section.remaining()];
                section.get(copy);
                parts.put(name, copy);
            });
        } else {
            built().forEach((name, out) -> parts.put(name, out.buffer.toByteArray()));
        }
        final Out header = new Out(64);
        header.buffer.write(VERSION);
        header.varint(rows);
        header.varint(parts.size());
        parts.forEach((name, part) -> {
            header.string(name);
            header.varint(part.length);
        });
        return new Stored(header.buffer.toByteArray(), parts);
    }

    private Map<String, Out> built() {
        final Map<String, Out> parts = new LinkedHashMap<>();
        final Out spanned = parts.computeIfAbsent(SPAN, k -> new Out(16));
        spanned.fixed(rows == 0 ? 0 : span[0]);
        spanned.fixed(rows == 0 ? 0 : span[1]);
        final Out time = parts.computeIfAbsent(TIME, k -> new Out(8 + rows * 2));
        final long first = rows == 0 ? 0 : timeMicros[0];
        time.fixed(first);
        long previous = first;
        for (final long t : timeMicros) {
            time.varint((t - previous) << 1 ^ (t - previous) >> 63);
            previous = t;
        }
        final Out ids = parts.computeIfAbsent(UUIDS, k -> new Out(rows * 16));
        for (final long half : uuids) {
            ids.fixed(half);
        }
        final Out people = parts.computeIfAbsent(PERSONS, k -> new Out(rows));
        people.varint(persons.size());
        for (final long half : persons.halves) {
            people.fixed(half);
        }
        people.codes(persons.codes, persons.size());
        parts.computeIfAbsent(DISTINCT_IDS, k -> new Out(rows)).texts(distinctIds);
        parts.computeIfAbsent(EVENTS, k -> new Out(rows)).texts(events);
        groups.forEach((name, column) -> parts.computeIfAbsent(name, k -> new Out(rows)).values(column));
        properties.forEach((key, column) -> parts.computeIfAbsent(PROPERTY + key, k -> new Out(rows)).values(column));
        return parts;
    }

    /**
     * Reads a block's table of sections; the sections themselves are read when asked for.
     *
     * @throws IllegalArgumentException on bytes that are not a version-1 block (a corrupt section is refused when read)
     */
    public static EventBlock decode(final byte[] bytes) {
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        final Header header = header(in);
        final Map<String, Integer> offsets = new HashMap<>();
        int offset = in.position();
        for (final Map.Entry<String, Integer> section : header.lengths().entrySet()) {
            offsets.put(section.getKey(), offset);
            offset += section.getValue();
        }
        if (offset != bytes.length) {
            throw new IllegalArgumentException("an event block whose sections do not add up to its length");
        }
        return new EventBlock(header.rows(), header.lengths(),
                name -> ByteBuffer.wrap(bytes, offsets.get(name), header.lengths().get(name)).slice(), bytes.length);
    }

    /**
     * A block stored section by section ({@link #encodeSections}): its table of sections now, each section read from
     * {@code sections} when first asked for (by whichever thread asks; a cached block may be read long after).
     *
     * @param sections a section's bytes by name; null when it is not stored any more (the block was removed), which
     *                 the read that asked for it meets as {@link Gone}
     */
    public static EventBlock ofSections(final byte[] header, final java.util.function.Function<String, byte[]> sections) {
        final ByteBuffer in = ByteBuffer.wrap(header);
        final Header table = header(in);
        if (in.hasRemaining()) {
            throw new IllegalArgumentException("an event block's table of sections followed by " + in.remaining() + " bytes");
        }
        return new EventBlock(table.rows(), table.lengths(), name -> {
            final byte[] bytes = sections.apply(name);
            if (bytes == null) {
                throw new Gone("section " + name + " of an event block is no longer stored");
            }
            if (bytes.length != table.lengths().get(name)) {
                throw new IllegalArgumentException("section " + name + " of an event block is " + bytes.length + " bytes, not "
                        + table.lengths().get(name));
            }
            return ByteBuffer.wrap(bytes);
        }, header.length);
    }

    /** A section of a block read section by section that was removed from its store while the block was read. */
    public static final class Gone extends RuntimeException {
        public Gone(final String message) {
            super(message);
        }
    }

    private record Header(int rows, Map<String, Integer> lengths) {
    }

    /** Reads a table of sections, leaving {@code in} after it. */
    private static Header header(final ByteBuffer in) {
        try {
            if (in.get() != VERSION) {
                throw new IllegalArgumentException("not an event block of version " + VERSION);
            }
            // Checked against what the table can stand for, not against its own bytes: the sections may lie elsewhere.
            final int rows = bounded(in, MAX_ROWS);
            final int count = length(in);
            final Map<String, Integer> lengths = new LinkedHashMap<>();
            for (int s = 0; s < count; s++) {
                lengths.put(string(in), bounded(in, Integer.MAX_VALUE));
            }
            for (final String required : List.of(SPAN, TIME, UUIDS, PERSONS, DISTINCT_IDS, EVENTS)) {
                if (!lengths.containsKey(required)) {
                    throw new IllegalArgumentException("an event block without its " + required + " section");
                }
            }
            return new Header(rows, Collections.unmodifiableMap(lengths));
        } catch (final BufferUnderflowException e) {
            throw new IllegalArgumentException("a truncated or corrupt event block", e);
        }
    }

    private ByteBuffer section(final String name) {
        return source.apply(name);
    }

    private static long[] readTimes(final ByteBuffer in, final int rows) {
        try {
            final long[] times = new long[rows];
            long time = in.getLong();
            for (int r = 0; r < rows; r++) {
                final long zigzag = varint(in);
                time += zigzag >>> 1 ^ -(zigzag & 1);
                times[r] = time;
            }
            return times;
        } catch (final BufferUnderflowException e) {
            throw new IllegalArgumentException("a truncated or corrupt event block", e);
        }
    }

    private static Column readProperty(final ByteBuffer in, final int rows) {
        try {
            final JsonNode[] entries = new JsonNode[length(in) + 1];
            for (int c = 1; c < entries.length; c++) {
                entries[c] = Json.mapper().readTree(string(in));
            }
            return new Column(entries, Codes.read(in, rows, entries.length));
        } catch (final BufferUnderflowException | JsonProcessingException e) {
            throw new IllegalArgumentException("a truncated or corrupt event block", e);
        }
    }

    private static String json(final JsonNode value) {
        return value.toString();
    }

    private static Column texts(final ByteBuffer in, final int rows) {
        try {
            final JsonNode[] entries = new JsonNode[length(in)];
            for (int c = 0; c < entries.length; c++) {
                entries[c] = Json.mapper().getNodeFactory().textNode(string(in));
            }
            return new Column(entries, Codes.read(in, rows, entries.length));
        } catch (final BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("a truncated or corrupt event block", e);
        }
    }

    private static String string(final ByteBuffer in) {
        final int length = length(in);
        final String text = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return text;
    }

    /** The most rows a block may have: far more than a sealed block holds, far fewer than would exhaust memory. */
    private static final int MAX_ROWS = 1 << 24;

    private static int bounded(final ByteBuffer in, final int max) {
        final long value = varint(in);
        if (value < 0 || value > max) {
            throw new IllegalArgumentException("a count of " + value + " in an event block's table, more than " + max);
        }
        return (int) value;
    }

    /** A varint that is a count or a length: never more than what is left to read. */
    private static int length(final ByteBuffer in) {
        final long value = varint(in);
        if (value > Integer.MAX_VALUE || value > (long) in.remaining() * 8 + 64) {
            throw new IllegalArgumentException("a count past the end of the block");
        }
        return (int) value;
    }

    private static long varint(final ByteBuffer in) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            final byte b = in.get();
            value |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return value;
            }
        }
        throw new IllegalArgumentException("a varint longer than 10 bytes");
    }

    /** Where {@link #encode} writes. */
    private static final class Out {
        final ByteArrayOutputStream buffer;

        Out(final int size) {
            this.buffer = new ByteArrayOutputStream(size);
        }

        void varint(final long value) {
            long v = value;
            while ((v & ~0x7fL) != 0) {
                buffer.write((int) (v & 0x7f) | 0x80);
                v >>>= 7;
            }
            buffer.write((int) v);
        }

        void fixed(final long value) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                buffer.write((int) (value >>> shift));
            }
        }

        void string(final String text) {
            final byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
            varint(utf8.length);
            buffer.writeBytes(utf8);
        }

        /** A column with an "absent" code 0: its other entries as JSON texts, then the codes. */
        void values(final Column column) {
            varint(column.size() - 1);
            for (int c = 1; c < column.size(); c++) {
                string(json(column.entry(c)));
            }
            codes(column);
        }

        void texts(final Column column) {
            varint(column.size());
            for (final JsonNode entry : column.dictionary) {
                string(entry.asText());
            }
            codes(column);
        }

        void codes(final Column column) {
            codes(column.codes, column.size());
        }

        void codes(final Codes codes, final int dictionarySize) {
            final int width = dictionarySize <= 0x100 ? 1 : dictionarySize <= 0x10000 ? 2 : 4;
            buffer.write(width);
            for (int r = 0; r < codes.rows(); r++) {
                final int code = codes.code(r);
                for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
                    buffer.write(code >>> shift);
                }
            }
        }
    }
}
