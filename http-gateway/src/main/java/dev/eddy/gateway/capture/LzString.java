package dev.eddy.gateway.capture;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decoder for lz-string's {@code compressToBase64} output (format of lz-string 1.4.x), which old posthog-js
 * versions send with {@code compression=lz64}. Decode-only, and bounded: a payload that would expand past
 * {@code maxChars} is refused instead of filling the heap.
 *
 * <p>Written here because no maintained Java port of lz-string is published on Maven Central; the tests check
 * it against vectors produced by the reference JavaScript implementation.
 */
final class LzString {
    private static final String BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    private static final int[] BASE64_VALUE = new int[128];
    /** Bits per input character of the base64 form. */
    private static final int RESET_VALUE = 32;

    static {
        for (int i = 0; i < BASE64.length(); i++) {
            BASE64_VALUE[BASE64.charAt(i)] = i;
        }
    }

    /** The payload was valid lz-string but decompresses to more than the limit. */
    static final class TooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super("lz-string payload expands past the limit", null, false, false);
        }
    }

    private LzString() {
    }

    /** Decompresses; empty when the input is not valid lz-string base64. */
    static Optional<String> decompressFromBase64(final String input, final int maxChars) {
        if (input.isEmpty()) {
            return Optional.empty();
        }
        for (int i = 0; i < input.length(); i++) {
            final char c = input.charAt(i);
            if (c >= 128 || (BASE64_VALUE[c] == 0 && c != 'A')) {
                return Optional.empty();
            }
        }
        return Optional.ofNullable(new Reader(input).decompress(maxChars));
    }

    /** Reads the input's bits, most significant first within each 6-bit character. */
    private static final class Reader {
        private final String input;
        private int value;
        private int position = RESET_VALUE;
        private int index = 1;

        Reader(final String input) {
            this.input = input;
            this.value = charValue(0);
        }

        private int charValue(final int i) {
            return i < input.length() ? BASE64_VALUE[input.charAt(i)] : 0;
        }

        private int bits(final int count) {
            int result = 0;
            for (int power = 1, n = 0; n < count; n++, power <<= 1) {
                final int bit = value & position;
                position >>= 1;
                if (position == 0) {
                    position = RESET_VALUE;
                    value = charValue(index++);
                }
                if (bit != 0) {
                    result |= power;
                }
            }
            return result;
        }

        String decompress(final int maxChars) {
            final List<String> dictionary = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                dictionary.add(null);
            }
            String w;
            switch (bits(2)) {
                case 0 -> w = String.valueOf((char) bits(8));
                case 1 -> w = String.valueOf((char) bits(16));
                default -> {
                    return "";
                }
            }
            dictionary.add(w);
            final StringBuilder result = new StringBuilder(w);
            int enlargeIn = 4;
            int numBits = 3;
            while (true) {
                if (index > input.length()) {
                    return null;
                }
                int code = bits(numBits);
                if (code == 0 || code == 1) {
                    dictionary.add(String.valueOf((char) bits(code == 0 ? 8 : 16)));
                    code = dictionary.size() - 1;
                    enlargeIn--;
                } else if (code == 2) {
                    return result.toString();
                }
                if (enlargeIn == 0) {
                    enlargeIn = 1 << numBits;
                    numBits++;
                }
                final String entry;
                if (code < dictionary.size() && dictionary.get(code) != null) {
                    entry = dictionary.get(code);
                } else if (code == dictionary.size()) {
                    entry = w + w.charAt(0);
                } else {
                    return null;
                }
                if (result.length() + entry.length() > maxChars) {
                    throw new TooLarge();
                }
                result.append(entry);
                dictionary.add(w + entry.charAt(0));
                enlargeIn--;
                w = entry;
                if (enlargeIn == 0) {
                    enlargeIn = 1 << numBits;
                    numBits++;
                }
            }
        }
    }
}
