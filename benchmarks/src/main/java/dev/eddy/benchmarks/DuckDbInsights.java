package dev.eddy.benchmarks;

import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.Map;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The baseline of {@code scripts/bench-insights}: the same events in an in-memory DuckDB in this process, one typed
 * column per property (the schema one would give DuckDB, not a JSON blob), and SQL that answers what Eddy's trend and
 * funnel queries answer, in the same shapes ({@link Trend}, step counts).
 */
final class DuckDbInsights implements AutoCloseable {
    /** A trend's answer: each breakdown value (one empty key without a breakdown) to its count per day. */
    record Trend(Map<String, long[]> series) {
    }

    static final String NULL_BREAKDOWN = "$$_posthog_breakdown_null_$$";

    private final DuckDBConnection connection;
    private final LocalDate firstDay;
    private final int days;
    private final String range;

    DuckDbInsights(final InsightsEvents events) throws SQLException {
        this.connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
        this.firstDay = events.firstDay;
        this.days = events.days;
        this.range = "ts >= TIMESTAMP '" + firstDay + " 00:00:00' AND ts < TIMESTAMP '" + firstDay.plusDays(days) + " 00:00:00'";
        try (Statement s = connection.createStatement()) {
            s.execute("CREATE TABLE events (event VARCHAR, distinct_id VARCHAR, person_id INTEGER, ts TIMESTAMP, "
                    + "browser VARCHAR, os VARCHAR, current_url VARCHAR, amount DOUBLE)");
        }
        try (DuckDBAppender appender = connection.createAppender("events")) {
            for (int i = 0; i < events.count; i++) {
                appender.beginRow()
                        .append(InsightsEvents.NAMES[events.name[i]])
                        .append(events.distinctId(i))
                        .append(events.person[i])
                        .appendEpochMicros(events.millis[i] * 1000);
                optional(appender, events.browser[i], InsightsEvents.BROWSERS);
                appender.append(InsightsEvents.OSES[events.os[i]]);
                optional(appender, events.url[i], InsightsEvents.URLS);
                if (events.amountCents[i] > 0) {
                    appender.append(events.amountCents[i] / 100.0);
                } else {
                    appender.appendNull();
                }
                appender.endRow();
            }
        }
    }

    private static void optional(final DuckDBAppender appender, final byte value, final String[] names) throws SQLException {
        if (value == InsightsEvents.MISSING) {
            appender.appendNull();
        } else {
            appender.append(names[value]);
        }
    }

    /** Events of {@code event} per UTC day ({@code null}: all events). */
    Trend dailyCount(final String event) throws SQLException {
        return trend("SELECT '' AS value, CAST(ts AS DATE) AS day, count(*) FROM events WHERE " + range
                + (event == null ? "" : " AND event = '" + event + "'") + " GROUP BY day");
    }

    /**
     * {@code $pageview}s whose {@code $browser} is not Safari (a missing browser is "not Safari", as in PostHog), per
     * {@code $current_url} (missing: PostHog's null value) and day.
     */
    Trend pageviewsNotSafariByUrl() throws SQLException {
        return trend("SELECT coalesce(nullif(current_url, ''), '" + NULL_BREAKDOWN + "') AS value, CAST(ts AS DATE) AS day, count(*) "
                + "FROM events WHERE " + range + " AND event = '$pageview' AND browser IS DISTINCT FROM 'Safari' GROUP BY value, day");
    }

    /**
     * Persons reaching each step of the ordered funnel {@code $pageview → signup → purchase} within 14 days of the
     * first step: per person the furthest step any of its step-1 events leads to, each next step the earliest later
     * event within the window (the earliest signup leaves the most room for a purchase).
     */
    long[] pageviewSignupPurchaseFunnel() throws SQLException {
        final String sql = "WITH steps AS (SELECT person_id, event, ts FROM events WHERE " + range
                + " AND event IN ('$pageview', 'signup', 'purchase')), "
                + "attempts AS (SELECT a.person_id, a.ts AS t1, min(b.ts) AS t2 FROM steps a LEFT JOIN steps b "
                + "ON b.person_id = a.person_id AND b.event = 'signup' AND b.ts > a.ts AND b.ts <= a.ts + INTERVAL 14 DAY "
                + "WHERE a.event = '$pageview' GROUP BY a.person_id, a.ts), "
                + "reached AS (SELECT a.person_id, CASE WHEN a.t2 IS NULL THEN 1 WHEN count(c.ts) = 0 THEN 2 ELSE 3 END AS step "
                + "FROM attempts a LEFT JOIN steps c ON c.person_id = a.person_id AND c.event = 'purchase' AND c.ts > a.t2 "
                + "AND c.ts <= a.t1 + INTERVAL 14 DAY GROUP BY a.person_id, a.t1, a.t2), "
                + "furthest AS (SELECT person_id, max(step) AS step FROM reached GROUP BY person_id) "
                + "SELECT count(*), count(*) FILTER (WHERE step >= 2), count(*) FILTER (WHERE step >= 3) FROM furthest";
        try (Statement s = connection.createStatement(); ResultSet rows = s.executeQuery(sql)) {
            rows.next();
            return new long[] {rows.getLong(1), rows.getLong(2), rows.getLong(3)};
        }
    }

    private Trend trend(final String sql) throws SQLException {
        final Map<String, long[]> series = new LinkedHashMap<>();
        try (Statement s = connection.createStatement(); ResultSet rows = s.executeQuery(sql)) {
            while (rows.next()) {
                final int day = (int) (rows.getObject(2, LocalDate.class).toEpochDay() - firstDay.toEpochDay());
                series.computeIfAbsent(rows.getString(1), v -> new long[days])[day] = rows.getLong(3);
            }
        }
        return new Trend(series);
    }

    /** Its version and the threads it runs a query on. */
    String describe() throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet row = s.executeQuery("SELECT version(), current_setting('threads')")) {
            row.next();
            return row.getString(1) + ", " + row.getString(2) + " threads";
        }
    }

    @Override
    public void close() throws SQLException {
        connection.close();
    }
}
