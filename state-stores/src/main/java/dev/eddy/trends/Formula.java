package dev.eddy.trends;

import java.util.Locale;

/**
 * A trend formula such as {@code A + 2*B} or {@code (A - B) / A * 100}, evaluated per bucket over the series' values
 * as PostHog does: letters name the series in order (case-insensitive), with {@code + - * / % **}, unary signs,
 * numbers and parentheses, Python's precedence and semantics ({@code /} is true division, {@code %} takes the
 * divisor's sign, {@code **} binds right to left and tighter than a unary sign on its left), and a division by zero
 * giving 0 for that part instead of an error.
 */
public final class Formula {
    private final String text;
    private final Node root;
    private final int series;

    private Formula(final String text, final Node root, final int series) {
        this.text = text;
        this.root = root;
        this.series = series;
    }

    /**
     * @param series how many series the query has
     * @throws IllegalArgumentException naming what is not supported or where the formula is malformed
     */
    public static Formula parse(final String formula, final int series) {
        final Parser parser = new Parser(formula.toLowerCase(Locale.ROOT), series);
        final Node root = parser.expression();
        parser.skipSpaces();
        if (parser.pos < parser.src.length()) {
            throw parser.error();
        }
        return new Formula(formula, root, series);
    }

    /** The value for one bucket, given each series' value there (A first). */
    public double evaluate(final double... values) {
        if (values.length != series) {
            throw new IllegalArgumentException("expected " + series + " series values, got " + values.length);
        }
        return root.eval(values);
    }

    /** PostHog's label of a formula series without a custom name. */
    public String label() {
        return "Formula (" + text + ")";
    }

    private interface Node {
        double eval(double[] values);
    }

    private static final class Parser {
        final String src;
        final int series;
        int pos;

        Parser(final String src, final int series) {
            this.src = src;
            this.series = series;
        }

        Node expression() {
            Node left = term();
            while (true) {
                if (accept("+")) {
                    final Node l = left;
                    final Node r = term();
                    left = v -> l.eval(v) + r.eval(v);
                } else if (peek("-")) {
                    pos++;
                    final Node l = left;
                    final Node r = term();
                    left = v -> l.eval(v) - r.eval(v);
                } else {
                    return left;
                }
            }
        }

        Node term() {
            Node left = factor();
            while (true) {
                if (peek("//")) {
                    throw new IllegalArgumentException("Operator FloorDiv not supported");
                } else if (accept("*")) {
                    final Node l = left;
                    final Node r = factor();
                    left = v -> l.eval(v) * r.eval(v);
                } else if (accept("/")) {
                    final Node l = left;
                    final Node r = factor();
                    left = v -> divide(l.eval(v), r.eval(v));
                } else if (accept("%")) {
                    final Node l = left;
                    final Node r = factor();
                    left = v -> modulo(l.eval(v), r.eval(v));
                } else {
                    return left;
                }
            }
        }

        Node factor() {
            if (accept("+")) {
                return factor();
            }
            if (accept("-")) {
                final Node operand = factor();
                return v -> -operand.eval(v);
            }
            return power();
        }

        Node power() {
            final Node base = atom();
            if (accept("**")) {
                // Right-associative, and the exponent may carry its own sign: 2 ** -1.
                final Node exponent = factor();
                return v -> raise(base.eval(v), exponent.eval(v));
            }
            return base;
        }

        Node atom() {
            skipSpaces();
            if (pos >= src.length()) {
                throw error();
            }
            final char c = src.charAt(pos);
            if (c == '(') {
                pos++;
                final Node inner = expression();
                if (!accept(")")) {
                    throw error();
                }
                return inner;
            }
            if (Character.isDigit(c) || c == '.') {
                final int start = pos;
                while (pos < src.length() && (Character.isDigit(src.charAt(pos)) || src.charAt(pos) == '.')) {
                    pos++;
                }
                final double number;
                try {
                    number = Double.parseDouble(src.substring(start, pos));
                } catch (final NumberFormatException e) {
                    throw error();
                }
                return v -> number;
            }
            if (Character.isLetter(c) || c == '_') {
                final int start = pos;
                while (pos < src.length() && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
                    pos++;
                }
                final String name = src.substring(start, pos);
                if (name.length() != 1 || name.charAt(0) < 'a' || name.charAt(0) > 'z') {
                    throw new IllegalArgumentException("Constant " + name + " not supported");
                }
                final int index = name.charAt(0) - 'a';
                if (index >= series) {
                    throw new IllegalArgumentException("Formula refers to series " + name.toUpperCase(Locale.ROOT)
                            + ", but the query has " + series);
                }
                return v -> v[index];
            }
            throw error();
        }

        boolean peek(final String token) {
            skipSpaces();
            return src.startsWith(token, pos);
        }

        boolean accept(final String token) {
            if (peek(token) && !(token.equals("*") && src.startsWith("**", pos))) {
                pos += token.length();
                return true;
            }
            return false;
        }

        void skipSpaces() {
            while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
                pos++;
            }
        }

        IllegalArgumentException error() {
            return new IllegalArgumentException("Formula is malformed at position " + (pos + 1) + ": '" + src + "'");
        }
    }

    private static double divide(final double a, final double b) {
        return b == 0 ? 0 : a / b;
    }

    /** Python's modulo: the result has the divisor's sign. */
    private static double modulo(final double a, final double b) {
        if (b == 0) {
            return 0;
        }
        final double r = a % b;
        return r != 0 && (r < 0) != (b < 0) ? r + b : r;
    }

    private static double raise(final double base, final double exponent) {
        // Python raises ZeroDivisionError for 0 to a negative power; PostHog answers 0 for it.
        return base == 0 && exponent < 0 ? 0 : Math.pow(base, exponent);
    }
}
