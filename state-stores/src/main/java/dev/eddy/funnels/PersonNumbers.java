package dev.eddy.funnels;

import java.util.Arrays;

/**
 * A set of person numbers ({@link KeptPersons}) packed into bytes: ascending, each as its distance from the one before
 * in 7-bit groups (a varint). A kept funnel holds, per unit of rows, the persons with rows in it, so that a unit
 * removed or thinned finds its persons without reading every person's rows: a few thousand of a partition's hundreds
 * of thousands of persons, a byte or two each instead of a reference or an int.
 */
final class PersonNumbers {
    private PersonNumbers() {
    }

    /** {@code numbers} (any order, repeats allowed; not changed), packed. */
    static byte[] pack(final int[] numbers) {
        final int[] sorted = numbers.clone();
        Arrays.sort(sorted);
        final byte[] out = new byte[5 * sorted.length];
        int at = 0;
        int previous = -1;
        for (final int number : sorted) {
            if (number < 0) {
                throw new IllegalArgumentException("person number " + number);
            }
            if (number == previous) {
                continue;
            }
            int gap = number - previous - 1;
            while ((gap & ~0x7F) != 0) {
                out[at++] = (byte) (gap & 0x7F | 0x80);
                gap >>>= 7;
            }
            out[at++] = (byte) gap;
            previous = number;
        }
        return Arrays.copyOf(out, at);
    }

    /** The numbers {@code packed} holds, ascending. */
    static int[] unpack(final byte[] packed) {
        int[] out = new int[packed.length];
        int count = 0;
        int previous = -1;
        for (int at = 0; at < packed.length; ) {
            int gap = 0;
            int shift = 0;
            byte b;
            do {
                b = packed[at++];
                gap |= (b & 0x7F) << shift;
                shift += 7;
            } while (b < 0);
            previous += gap + 1;
            out[count++] = previous;
        }
        return count == out.length ? out : Arrays.copyOf(out, count);
    }

    /** The numbers of both. */
    static byte[] union(final byte[] a, final byte[] b) {
        if (a.length == 0) {
            return b;
        }
        if (b.length == 0) {
            return a;
        }
        final int[] x = unpack(a);
        final int[] y = unpack(b);
        final int[] both = Arrays.copyOf(x, x.length + y.length);
        System.arraycopy(y, 0, both, x.length, y.length);
        return pack(both);
    }
}
