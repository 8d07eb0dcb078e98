package dev.eddy.gateway.query;

/** A column of a list query's answer: the expression as asked, and its ClickHouse type as PostHog's response names it. */
interface QueryColumn {
    String expression();

    String type();
}
