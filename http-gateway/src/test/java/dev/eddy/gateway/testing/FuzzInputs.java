package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;

/**
 * Generated hostile input for the fuzz tests, all drawn from one seeded {@link SplittableRandom}: a run prints its
 * seed, and {@code -Deddy.fuzz.seed=N} replays exactly the same cases.
 */
public final class FuzzInputs {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Strings that have broken servers: injection, traversal, encodings, control and odd Unicode characters. */
    public static final List<String> HOSTILE_STRINGS = List.of(
            "../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2f", "....//....//", "/etc/passwd%00.json",
            "1 OR 1=1", "1' OR '1'='1", "'; DROP TABLE posthog_dashboard; --", "\"; DROP TABLE x; --", "1; SELECT pg_sleep(10)",
            "' UNION SELECT * FROM personal_api_keys --", "%00", "\u0000", "a\u0000b", "\\", "%", "%%", "%zz", "_", "*",
            "${jndi:ldap://127.0.0.1/x}", "{{7*7}}", "<script>alert(1)</script>", "\r\nSet-Cookie: x=1", "\u202e\u0645",
            "\ud800", "\udfff", "🎉", "ﷺ", "-1", "0", "-0", "9223372036854775808", "-9223372036854775809", "1e999", "NaN",
            "Infinity", "0x10", "1.5", " ", "", "null", "true", "[]", "{}", "@me", ".", "..", "~", "$", "$pageview",
            "+999999999-12-31T23:59:59Z", "-999999999-01-01T00:00:00Z", "2021-13-45T99:99:99Z", "00000000-0000-0000-0000-000000000000");

    private FuzzInputs() {
    }

    /**
     * The seed the suite runs with in {@code ./scripts/test}: the same cases every run, so the suite's outcome depends on
     * the code only. {@code -Deddy.fuzz.seed=random} explores new cases.
     */
    public static final long DEFAULT_SEED = 20261123L;

    /**
     * The run's seed: {@code -Deddy.fuzz.seed=N}, a fresh one for {@code random}, else {@link #DEFAULT_SEED}; printed
     * so a failure can be replayed.
     */
    public static long seed(final String suite) {
        final String asked = System.getProperty("eddy.fuzz.seed", "");
        final long seed = asked.isEmpty() ? DEFAULT_SEED : "random".equals(asked) ? System.nanoTime() : Long.parseLong(asked);
        System.out.println(suite + " fuzz seed " + seed + " (replay with -Deddy.fuzz.seed=" + seed + ")");
        return seed;
    }

    public static <T> T pick(final SplittableRandom random, final List<T> options) {
        return options.get(random.nextInt(options.size()));
    }

    /** A hostile string, a long one, or random characters from all of Unicode's planes (lone surrogates included). */
    public static String string(final SplittableRandom random) {
        return switch (random.nextInt(6)) {
            case 0, 1, 2 -> pick(random, HOSTILE_STRINGS);
            case 3 -> "x".repeat(random.nextInt(100, 5000));
            default -> {
                final StringBuilder b = new StringBuilder();
                for (int n = random.nextInt(0, 20); n > 0; n--) {
                    b.append((char) random.nextInt(0, 0x10000));
                }
                yield b.toString();
            }
        };
    }

    /** Any JSON value: scalars at their edges, hostile strings, and containers down to {@code depth}. */
    public static JsonNode value(final SplittableRandom random, final int depth) {
        final int kinds = depth > 0 ? 11 : 9;
        return switch (random.nextInt(kinds)) {
            case 0 -> NODES.nullNode();
            case 1 -> NODES.booleanNode(random.nextBoolean());
            case 2 -> NODES.numberNode(random.nextLong());
            case 3 -> NODES.numberNode(pick(random, List.of(0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE + 1)));
            case 4 -> NODES.numberNode(pick(random, List.of(0.5, -0.0, 1e308, -1e308, Double.MIN_VALUE)));
            case 5 -> NODES.numberNode(new BigInteger("9".repeat(random.nextInt(20, 90))));
            case 6, 7, 8 -> NODES.textNode(string(random));
            case 9 -> {
                final ArrayNode array = NODES.arrayNode();
                for (int n = random.nextInt(0, 5); n > 0; n--) {
                    array.add(value(random, depth - 1));
                }
                yield array;
            }
            default -> {
                final ObjectNode object = NODES.objectNode();
                for (int n = random.nextInt(0, 5); n > 0; n--) {
                    object.set(string(random), value(random, depth - 1));
                }
                yield object;
            }
        };
    }

    /**
     * An event whose every field is absent, valid, or of a wrong type: {@code event}, {@code distinct_id} (also in
     * {@code properties}), {@code properties}, {@code timestamp}, {@code sent_at}, {@code offset}, {@code uuid},
     * {@code $set}, {@code $set_once}.
     */
    public static ObjectNode event(final SplittableRandom random) {
        final ObjectNode event = NODES.objectNode();
        field(random, event, "event", NODES.textNode("fuzz"));
        field(random, event, "distinct_id", NODES.textNode("fuzz-" + random.nextInt(1000)));
        field(random, event, "timestamp", NODES.textNode("2026-11-22T10:00:00Z"));
        field(random, event, "sent_at", NODES.textNode("2026-11-22T10:00:01Z"));
        field(random, event, "offset", NODES.numberNode(1000));
        field(random, event, "uuid", NODES.textNode("0191d5a0-0000-7000-8000-000000000000"));
        field(random, event, "$set", NODES.objectNode().put("plan", "pro"));
        field(random, event, "$set_once", NODES.objectNode().put("first", "x"));
        final ObjectNode properties = NODES.objectNode();
        field(random, properties, "distinct_id", NODES.textNode("p-" + random.nextInt(1000)));
        field(random, properties, "$lib", NODES.textNode("web"));
        field(random, properties, "$ignore_sent_at", NODES.booleanNode(true));
        field(random, properties, string(random), value(random, 3));
        field(random, event, "properties", properties);
        return event;
    }

    /** Leaves {@code field} out, sets it to {@code valid}, or to a random value of any type. */
    private static void field(final SplittableRandom random, final ObjectNode object, final String field, final JsonNode valid) {
        switch (random.nextInt(3)) {
            case 0 -> {
            }
            case 1 -> object.set(field, valid);
            default -> object.set(field, value(random, 2));
        }
    }

    /** Random bytes, invalid UTF-8 sequences included (lone continuation bytes, overlongs, surrogates, 0xff). */
    public static byte[] bytes(final SplittableRandom random, final int maxLength) {
        final byte[] bytes = new byte[random.nextInt(0, maxLength + 1)];
        random.nextBytes(bytes);
        return bytes;
    }

    /** {@code text} with invalid UTF-8 bytes spliced in at random places. */
    public static byte[] withInvalidUtf8(final SplittableRandom random, final byte[] text) {
        final List<byte[]> invalid = List.of(new byte[] {(byte) 0x80}, new byte[] {(byte) 0xc0, (byte) 0xaf},
                new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, new byte[] {(byte) 0xff}, new byte[] {(byte) 0xf4, (byte) 0x90},
                new byte[] {(byte) 0xe2, (byte) 0x82});
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (final byte b : text) {
            if (random.nextInt(8) == 0) {
                out.writeBytes(pick(random, invalid));
            }
            out.write(b);
        }
        return out.toByteArray();
    }

    public static byte[] gzip(final byte[] data) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** A few kilobytes of gzip that inflate to {@code size} zero bytes. */
    public static byte[] gzipBomb(final int size) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            final byte[] zeros = new byte[64 * 1024];
            for (int written = 0; written < size; written += zeros.length) {
                gz.write(zeros);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /**
     * Valid lz-string base64 (the {@code compression=lz64} format) of {@code codes} steps that each repeat the last
     * entry plus one character: {@code codes} steps expand to about codes²/2 characters ("a", "aa", "aaa", ...), so
     * 10,000 codes (24 kB of text) decompress to 50 million characters.
     */
    public static String lz64Bomb(final int codes) {
        final StringBuilder bits = new StringBuilder();
        writeBits(bits, 0, 2);
        writeBits(bits, 'a', 8);
        int dictionarySize = 4;
        int enlargeIn = 4;
        int numBits = 3;
        for (int i = 0; i < codes; i++) {
            writeBits(bits, dictionarySize, numBits);
            // The decoder adds one entry per repeat, and widens its codes by a bit when the count runs out.
            dictionarySize++;
            enlargeIn--;
            if (enlargeIn == 0) {
                enlargeIn = 1 << numBits;
                numBits++;
            }
        }
        writeBits(bits, 2, numBits);
        while (bits.length() % 6 != 0) {
            bits.append('0');
        }
        bits.append("000000");
        final String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < bits.length(); i += 6) {
            out.append(alphabet.charAt(Integer.parseInt(bits.substring(i, i + 6), 2)));
        }
        return out.toString();
    }

    /** lz-string writes each value least significant bit first, and packs the bits most significant first. */
    private static void writeBits(final StringBuilder bits, final int value, final int count) {
        for (int n = 0; n < count; n++) {
            bits.append((value >> n & 1) == 1 ? '1' : '0');
        }
    }
}
