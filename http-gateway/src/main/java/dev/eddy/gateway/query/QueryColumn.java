package dev.eddy.gateway.query;

/** A column of a list query's answer: the expression as asked, and its ClickHouse type as PostHog's response names it. */
interface QueryColumn {
    String expression();

    String type();

    /** A property key as written after {@code properties.}: bare, or quoted with {@code "} or a backtick. */
    static String unquoted(final String written) {
        final boolean quoted = written.length() > 1
                && (written.startsWith("\"") && written.endsWith("\"") || written.startsWith("`") && written.endsWith("`"));
        return quoted ? written.substring(1, written.length() - 1) : written;
    }
}
