package dev.eddy.flags;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * Compiles the user's pattern of a {@code regex}/{@code not_regex} filter (flags and queries) with the bounds RE2
 * has and RE2/J lacks. RE2/J matches in time linear in the text, but it expands counted repetitions into its
 * program: {@code ((a{1000}){1000}){1000}} fills any heap, and {@code (a{1000}){1000}} takes minutes per 100 kB
 * property. RE2 (ClickHouse's, behind PostHog's queries) refuses a pattern whose nested repetition counts multiply
 * past 1000; so does this, and it also refuses one whose expanded program would exceed {@link #MAX_PROGRAM_SIZE}
 * instructions. A refused pattern is an invalid one: it matches nothing, as every invalid pattern.
 */
public final class BoundedRegex {
    /** RE2's bound on the product of nested {@code {n,m}} counts. */
    static final int MAX_REPEAT_PRODUCT = 1000;
    /** Instructions (about one per literal, class or operator) of the expanded pattern. */
    static final int MAX_PROGRAM_SIZE = 10_000;
    private static final java.util.regex.Pattern REPEAT = java.util.regex.Pattern.compile("\\{(\\d{1,7})(,(\\d{0,7}))?}");

    private BoundedRegex() {
    }

    /** The compiled pattern; empty when it is invalid or past the bounds. */
    public static Optional<Pattern> compile(final String regex) {
        if (regex.length() > MAX_PROGRAM_SIZE || !withinBounds(regex)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Pattern.compile(regex));
        } catch (final PatternSyntaxException e) {
            return Optional.empty();
        }
    }

    /** Whether {@code regex} (found in {@code text}, unanchored) matches; empty when the pattern is refused. */
    public static Optional<Boolean> find(final String regex, final String text) {
        return compile(regex).map(p -> p.matcher(text).find());
    }

    /**
     * An estimate from the pattern's text alone, without parsing it fully: groups and atoms are sized, a counted
     * repetition multiplies the size and the nested count of the atom before it. Escapes, classes and
     * {@code \Q..\E} are skipped as single atoms so their braces are not taken for repetitions.
     */
    static boolean withinBounds(final String regex) {
        final Deque<long[]> groups = new ArrayDeque<>();
        long[] group = new long[] {0, 1};   // {size, largest nested repetition product}
        long atomSize = 0;
        long atomProduct = 1;
        int i = 0;
        while (i < regex.length()) {
            final char c = regex.charAt(i);
            int next = i + 1;
            boolean atom = true;
            long size = 1;
            long product = 1;
            switch (c) {
                case '\\' -> next = escapeEnd(regex, i);
                case '[' -> next = classEnd(regex, i);
                case '(' -> {
                    groups.push(group);
                    group = new long[] {0, 1};
                    atom = false;
                }
                case ')' -> {
                    size = group[0] + 1;
                    product = group[1];
                    group = groups.isEmpty() ? new long[] {0, 1} : groups.pop();
                }
                case '*', '+', '?' -> {
                    // A loop or a branch around the atom: one instruction more, not a copy.
                    group[0]++;
                    atom = false;
                }
                case '|' -> {
                    group[0]++;
                    atomSize = 0;
                    atomProduct = 1;
                    atom = false;
                }
                case '{' -> {
                    final java.util.regex.Matcher repeat = REPEAT.matcher(regex).region(i, regex.length());
                    if (repeat.lookingAt()) {
                        final long n = Long.parseLong(repeat.group(1));
                        final String m = repeat.group(3);
                        final long count = Math.max(1, m == null || m.isEmpty() ? n : Math.max(n, Long.parseLong(m)));
                        group[0] += atomSize * (count - 1);
                        atomSize *= count;
                        atomProduct *= count;
                        group[1] = Math.max(group[1], atomProduct);
                        next = repeat.end();
                        atom = false;
                    }
                }
                default -> {
                }
            }
            if (atom) {
                atomSize = size;
                atomProduct = product;
                group[0] += size;
                group[1] = Math.max(group[1], product);
            } else if (c == '(') {
                atomSize = 0;
                atomProduct = 1;
            }
            if (group[0] > MAX_PROGRAM_SIZE || group[1] > MAX_REPEAT_PRODUCT) {
                return false;
            }
            i = next;
        }
        return true;
    }

    /** The index after the escape at {@code i}: {@code \p{Greek}}, {@code \x{10FFFF}} and {@code \Q...\E} whole. */
    private static int escapeEnd(final String regex, final int i) {
        if (i + 1 >= regex.length()) {
            return regex.length();
        }
        final char kind = regex.charAt(i + 1);
        if ((kind == 'p' || kind == 'P' || kind == 'x') && i + 2 < regex.length() && regex.charAt(i + 2) == '{') {
            final int close = regex.indexOf('}', i + 3);
            return close < 0 ? regex.length() : close + 1;
        }
        if (kind == 'Q') {
            final int end = regex.indexOf("\\E", i + 2);
            return end < 0 ? regex.length() : end + 2;
        }
        return i + 2;
    }

    /** The index after the character class opening at {@code i} (a leading {@code ]} or {@code ^]} is literal). */
    private static int classEnd(final String regex, final int i) {
        int j = i + 1;
        if (j < regex.length() && regex.charAt(j) == '^') {
            j++;
        }
        if (j < regex.length() && regex.charAt(j) == ']') {
            j++;
        }
        while (j < regex.length()) {
            final char c = regex.charAt(j);
            if (c == '\\') {
                j += 2;
            } else if (c == '[' && j + 1 < regex.length() && regex.charAt(j + 1) == ':') {
                final int close = regex.indexOf(":]", j + 2);
                j = close < 0 ? j + 1 : close + 2;
            } else if (c == ']') {
                return j + 1;
            } else {
                j++;
            }
        }
        return regex.length();
    }
}
