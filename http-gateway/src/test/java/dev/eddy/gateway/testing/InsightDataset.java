package dev.eddy.gateway.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * The small dataset the saved-insight and Query API tests compute PostHog's numbers over, as capture's event JSON:
 * twelve pageviews of five persons in January 2020 ({@link #DAILY} a day from the 9th to the 19th; p2 on Firefox, the
 * others on Chrome; each person's {@code email} and {@code plan}, {@code pro} for p1 and p3, set on its events) and a
 * signup funnel on the 1st of May 2021 (f1, f2 and f4 paid within an hour of signing up, f3 did not).
 */
public final class InsightDataset {
    /** Pageviews per day from the 9th to the 19th of January 2020 (nobody came twice a day). */
    public static final String DAILY = "[1,1,2,3,1,0,2,0,1,0,1]";

    private InsightDataset() {
    }

    public static List<String> events() {
        final List<String> events = new ArrayList<>();
        final String[][] views = {{"p1", "11"}, {"p1", "12"}, {"p1", "13"}, {"p1", "15"}, {"p1", "17"}, {"p1", "19"},
                {"p2", "09"}, {"p2", "12"}, {"p3", "12"}, {"p4", "15"}, {"p5", "10"}, {"p5", "11"}};
        for (final String[] v : views) {
            final String plan = v[0].equals("p1") || v[0].equals("p3") ? "pro" : "free";
            events.add("{\"event\":\"$pageview\",\"timestamp\":\"2020-01-" + v[1] + "T12:00:00Z\",\"properties\":{\"distinct_id\":\""
                    + v[0] + "\",\"$browser\":\"" + (v[0].equals("p2") ? "Firefox" : "Chrome") + "\",\"$set\":{\"email\":\"" + v[0]
                    + "@example.com\",\"plan\":\"" + plan + "\"}}}");
        }
        for (final String[] f : new String[][] {{"f1", "signed up", "01"}, {"f1", "paid", "02"}, {"f2", "signed up", "03"},
                {"f2", "paid", "04"}, {"f3", "signed up", "05"}, {"f4", "signed up", "06"}, {"f4", "paid", "07"}}) {
            events.add("{\"event\":\"" + f[1] + "\",\"timestamp\":\"2021-05-01T" + f[2] + ":00:00Z\",\"properties\":{\"distinct_id\":\""
                    + f[0] + "\"}}");
        }
        return events;
    }
}
