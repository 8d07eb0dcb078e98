package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One insight query of the benchmarks on both engines: the request to Eddy, the same question to DuckDB, and each
 * answer written the same way (one line per series, or the step counts) so that equal answers are equal strings.
 *
 * @param path   {@code trend} or {@code funnel}
 * @param target the ratio Eddy/DuckDB of the p50s the issue asks for, or {@code null}
 * @param adHoc  whether each timed run asks it in a shape of its own ({@link #bodyForRun}): Eddy keeps sealed blocks'
 *               answers to a trend for the next query of the same shape, which a dashboard tile is and an ad-hoc
 *               question is not
 */
record InsightQuery(String name, String path, String body, DuckQuery duck, Double target, boolean adHoc) {

    @FunctionalInterface
    interface DuckQuery {
        Object run() throws Exception;
    }

    /** The queries over {@link InsightsEvents}' whole range: the all-events daily trend first. */
    static List<InsightQuery> standard(final InsightsEvents events, final DuckDbInsights duck) {
        final String range = "\"date_from\":\"" + events.firstDay + "\",\"date_to\":\"" + events.firstDay.plusDays(events.days - 1L) + "\"";
        return List.of(
                new InsightQuery("trend all events, daily", "trend", allEvents(events), () -> duck.dailyCount(null), null, false),
                new InsightQuery("trend $pageview, daily", "trend", "{\"events\":[{\"id\":\"$pageview\"}],\"interval\":\"day\"," + range + "}",
                        () -> duck.dailyCount("$pageview"), 0.5, false),
                new InsightQuery("trend $browser!=Safari by URL", "trend", "{\"events\":[{\"id\":\"$pageview\"}],\"properties\":[{\"key\":\"$browser\","
                        + "\"value\":\"Safari\",\"operator\":\"is_not\",\"type\":\"event\"}],\"breakdown\":\"$current_url\","
                        + "\"breakdown_type\":\"event\",\"interval\":\"day\"," + range + "}", duck::pageviewsNotSafariByUrl, 1.0, true),
                new InsightQuery("funnel view>signup>buy 14d", "funnel", "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"$pageview\",\"order\":0},"
                        + "{\"id\":\"signup\",\"order\":1},{\"id\":\"purchase\",\"order\":2}],\"funnel_window_interval\":14,"
                        + "\"funnel_window_interval_unit\":\"day\"," + range + "}", duck::pageviewSignupPurchaseFunnel, 1.0, true));
    }

    /** The body of the daily trend of all events over the events' range (which counts every one of them). */
    static String allEvents(final InsightsEvents events) {
        return "{\"events\":[{\"id\":null}],\"interval\":\"day\",\"date_from\":\"" + events.firstDay + "\",\"date_to\":\""
                + events.firstDay.plusDays(events.days - 1L) + "\"}";
    }

    /**
     * The body of timed run {@code run}: an {@link #adHoc} query gets a condition every event meets on a property no
     * event has ({@code $bench_run_<run> is_not_set}), so no run reuses what another kept; it costs Eddy a look at a
     * column no block has.
     */
    String bodyForRun(final int run) {
        return adHoc ? body.replace("{\"id\":", "{\"properties\":[{\"key\":\"$bench_run_" + (run < 0 ? "w" + -run : run)
                + "\",\"operator\":\"is_not_set\"}],\"id\":") : body;
    }

    String url() {
        return "/api/projects/1/insights/" + path + "/";
    }

    /** DuckDB's answer, written as {@link #eddyAnswer}. */
    String expected() throws Exception {
        return duckAnswer(duck.run());
    }

    /** Eddy's trend items (in its order) or funnel step counts, written as {@link #duckAnswer}. */
    String eddyAnswer(final String body) throws Exception {
        final JsonNode result = Json.mapper().readTree(body).path("result");
        if ("funnel".equals(path)) {
            final long[] counts = new long[result.size()];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = result.get(i).path("count").asLong(-1);
            }
            return Arrays.toString(counts);
        }
        final StringBuilder out = new StringBuilder();
        for (final JsonNode item : result) {
            final long[] data = new long[item.path("data").size()];
            for (int i = 0; i < data.length; i++) {
                data[i] = item.path("data").get(i).asLong();
            }
            out.append(out.length() == 0 ? "" : "\n").append(item.path("breakdown_value").asText("")).append('\t').append(Arrays.toString(data));
        }
        return out.toString();
    }

    /**
     * DuckDB's answer, trend series in PostHog's order: values by total descending then by value, the null value
     * last.
     */
    static String duckAnswer(final Object answer) {
        if (answer instanceof long[] steps) {
            return Arrays.toString(steps);
        }
        final Map<String, long[]> series = ((DuckDbInsights.Trend) answer).series();
        final StringBuilder out = new StringBuilder();
        series.entrySet().stream()
                .sorted(Comparator.<Map.Entry<String, long[]>>comparingInt(e -> DuckDbInsights.NULL_BREAKDOWN.equals(e.getKey()) ? 1 : 0)
                        .thenComparing(e -> -Arrays.stream(e.getValue()).sum())
                        .thenComparing(Map.Entry::getKey))
                .forEach(e -> out.append(out.length() == 0 ? "" : "\n").append(e.getKey()).append('\t').append(Arrays.toString(e.getValue())));
        return out.toString();
    }

    /** Eddy's answer and DuckDB's, once, side by side; prints a MISMATCH with the differing lines. */
    boolean crossCheck(final EddyHttp eddy) throws Exception {
        return crossCheck(eddy, expected());
    }

    /** {@link #crossCheck(EddyHttp)} against DuckDB's answer computed before. */
    boolean crossCheck(final EddyHttp eddy, final String expected) throws Exception {
        final String answer = eddyAnswer(eddy.post(url(), body));
        if (answer.equals(expected)) {
            System.out.printf(Locale.ROOT, "check %-30s Eddy = DuckDB: %s%n", name, summary(expected));
            return true;
        }
        printMismatch(answer, expected);
        return false;
    }

    /** A MISMATCH line and the lines of Eddy's answer (<) and of the expected one (>) that the other lacks. */
    void printMismatch(final String answer, final String expected) {
        System.out.printf(Locale.ROOT, "MISMATCH %s: Eddy (<) and DuckDB (>) differ:%n", name);
        final List<String> e = Arrays.asList(answer.split("\n"));
        final List<String> d = Arrays.asList(expected.split("\n"));
        e.stream().filter(line -> !d.contains(line)).forEach(line -> System.out.println("  < " + line));
        d.stream().filter(line -> !e.contains(line)).forEach(line -> System.out.println("  > " + line));
        if (e.size() == d.size() && e.containsAll(d)) {
            System.out.println("  (same series in a different order)");
        }
    }

    /** A short view of an answer: the steps, or the number of series and events. */
    static String summary(final String answer) {
        if (!answer.contains("\t")) {
            return "steps " + answer;
        }
        long sum = 0;
        final String[] lines = answer.split("\n");
        for (final String line : lines) {
            for (final String v : line.substring(line.indexOf('[') + 1, line.length() - 1).split(", ")) {
                sum += Long.parseLong(v);
            }
        }
        return String.format(Locale.ROOT, "%d series, %,d events", lines.length, sum);
    }
}
