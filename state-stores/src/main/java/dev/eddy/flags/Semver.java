package dev.eddy.flags;

import java.util.Optional;

/**
 * PostHog's semver flag operators on {@code major.minor.patch}: a leading {@code v} and anything after {@code -}
 * or {@code +} are ignored, missing parts are 0; {@code tilde} allows patch changes ({@code ~1.2.3} is
 * {@code >=1.2.3 <1.3.0}), {@code caret} changes that keep the left-most non-zero part ({@code ^1.2.3} is
 * {@code <2.0.0}, {@code ^0.2.3} is {@code <0.3.0}), {@code wildcard} a {@code *} part ({@code 1.2.*}).
 */
final class Semver {
    private Semver() {
    }

    static boolean matches(final String op, final String filter, final String actual) {
        final Optional<long[]> version = parse(actual);
        if (version.isEmpty()) {
            return false;
        }
        final long[] v = version.get();
        if ("wildcard".equals(op)) {
            return wildcard(filter, v);
        }
        final Optional<long[]> bound = parse(filter);
        if (bound.isEmpty()) {
            return false;
        }
        final long[] b = bound.get();
        final int c = compare(v, b);
        return switch (op) {
            case "eq" -> c == 0;
            case "neq" -> c != 0;
            case "gt" -> c > 0;
            case "gte" -> c >= 0;
            case "lt" -> c < 0;
            case "lte" -> c <= 0;
            case "tilde" -> c >= 0 && compare(v, new long[] {b[0], b[1] + 1, 0}) < 0;
            case "caret" -> c >= 0 && compare(v, caretCeiling(b)) < 0;
            default -> false;
        };
    }

    private static long[] caretCeiling(final long[] b) {
        if (b[0] > 0) {
            return new long[] {b[0] + 1, 0, 0};
        }
        if (b[1] > 0) {
            return new long[] {0, b[1] + 1, 0};
        }
        return new long[] {0, 0, b[2] + 1};
    }

    private static boolean wildcard(final String filter, final long[] v) {
        final String[] parts = strip(filter).split("\\.");
        for (int i = 0; i < Math.min(parts.length, 3); i++) {
            if ("*".equals(parts[i]) || "x".equalsIgnoreCase(parts[i])) {
                return true;
            }
            try {
                if (Long.parseLong(parts[i]) != v[i]) {
                    return false;
                }
            } catch (final NumberFormatException e) {
                return false;
            }
        }
        return true;
    }

    static Optional<long[]> parse(final String text) {
        final String[] parts = strip(text).split("\\.");
        if (parts.length == 0 || parts.length > 3 || parts[0].isEmpty()) {
            return Optional.empty();
        }
        final long[] v = new long[3];
        for (int i = 0; i < parts.length; i++) {
            try {
                v[i] = Long.parseLong(parts[i]);
            } catch (final NumberFormatException e) {
                return Optional.empty();
            }
            if (v[i] < 0) {
                return Optional.empty();
            }
        }
        return Optional.of(v);
    }

    private static String strip(final String text) {
        String t = text.trim();
        if (t.startsWith("v") || t.startsWith("V")) {
            t = t.substring(1);
        }
        final int cut = indexOfAny(t, '-', '+');
        return cut < 0 ? t : t.substring(0, cut);
    }

    private static int indexOfAny(final String t, final char a, final char b) {
        final int i = t.indexOf(a);
        final int j = t.indexOf(b);
        if (i < 0) {
            return j;
        }
        return j < 0 ? i : Math.min(i, j);
    }

    private static int compare(final long[] a, final long[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Long.compare(a[i], b[i]);
            }
        }
        return 0;
    }
}
