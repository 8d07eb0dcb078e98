package dev.eddy.benchmarks;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * The events of {@code scripts/bench-insights}, seeded so every run (and both engines) sees the same ones: {@code
 * count} events of {@code persons} distinct ids spread over the {@code days} whole UTC days ending on {@code lastDay},
 * kept column by column (a few bytes an event) and rendered as {@code /batch/} JSON on demand.
 *
 * <p>Event {@code i} lies in its own slice of the range ({@code i·span/count} plus less than one slice), so no two
 * events share a timestamp: an ordered funnel's answer cannot depend on how ties are broken. Each person keeps one
 * browser and one OS; 5% of events lack {@code $browser} and 1% lack {@code $current_url}, so filters and breakdowns
 * meet missing values as well.
 */
final class InsightsEvents {
    static final String[] NAMES = {"$pageview", "$autocapture", "$pageleave", "signup", "purchase", "invite_sent"};
    /** Cumulative shares of {@link #NAMES} in percent: $pageview 70, $autocapture 12, $pageleave 8, then 4, 3, 3. */
    private static final int[] NAME_SHARES = {70, 82, 90, 94, 97, 100};
    static final String[] BROWSERS = {"Chrome", "Safari", "Firefox", "Edge", "Opera"};
    private static final int[] BROWSER_SHARES = {50, 72, 86, 97, 100};
    static final String[] OSES = {"Windows", "Mac OS X", "iOS", "Android", "Linux"};
    /** Twenty pages: fewer than PostHog's 25 breakdown values, so a breakdown by URL has no "other" item. */
    static final String[] URLS = new String[20];
    /** A missing property in the byte columns. */
    static final byte MISSING = -1;

    static {
        final String[] pages = {"", "pricing", "docs", "blog", "signup", "login", "checkout", "cart", "about", "careers",
                "contact", "features", "integrations", "changelog", "status", "security", "terms", "privacy", "partners", "search"};
        for (int i = 0; i < URLS.length; i++) {
            URLS[i] = "https://shop.example/" + pages[i];
        }
    }

    final int count;
    final int persons;
    final LocalDate firstDay;
    final int days;
    final long startMillis;
    final int[] person;
    final byte[] name;
    final long[] millis;
    final byte[] browser;
    final byte[] os;
    final byte[] url;
    /** The purchase amount in cents; 0 on other events (which carry no {@code amount}). */
    final int[] amountCents;

    InsightsEvents(final int count, final int persons, final int days, final LocalDate lastDay, final long seed) {
        this.count = count;
        this.persons = persons;
        this.days = days;
        this.firstDay = lastDay.minusDays(days - 1L);
        this.startMillis = firstDay.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        final long span = days * 86_400_000L;
        if (span / count < 1) {
            throw new IllegalArgumentException("at most " + span + " events fit in " + days + " days with distinct milliseconds");
        }
        person = new int[count];
        name = new byte[count];
        millis = new long[count];
        browser = new byte[count];
        os = new byte[count];
        url = new byte[count];
        amountCents = new int[count];
        final SplittableRandom random = new SplittableRandom(seed);
        final byte[] personBrowser = new byte[persons];
        final byte[] personOs = new byte[persons];
        for (int p = 0; p < persons; p++) {
            personBrowser[p] = (byte) pick(BROWSER_SHARES, random.nextInt(100));
            personOs[p] = (byte) random.nextInt(OSES.length);
        }
        for (int i = 0; i < count; i++) {
            final long from = i * span / count;
            final long to = (i + 1L) * span / count;
            millis[i] = startMillis + from + random.nextLong(to - from);
            final int p = random.nextInt(persons);
            person[i] = p;
            name[i] = (byte) pick(NAME_SHARES, random.nextInt(100));
            browser[i] = random.nextInt(100) < 5 ? MISSING : personBrowser[p];
            os[i] = personOs[p];
            url[i] = random.nextInt(100) < 1 ? MISSING : (byte) random.nextInt(URLS.length);
            amountCents[i] = "purchase".equals(NAMES[name[i]]) ? random.nextInt(100, 50_000) : 0;
        }
    }

    private static int pick(final int[] cumulativeShares, final int roll) {
        int k = 0;
        while (roll >= cumulativeShares[k]) {
            k++;
        }
        return k;
    }

    static String distinctId(final int person) {
        return "person-" + person;
    }

    /** Distinct per event and the same every run: the run's Eddy is new, so its dedup store has not seen them. */
    static UUID uuid(final int i) {
        return new UUID(0x6ed5a11c_0000_4000L, 0x8000_0000_0000_0000L | i);
    }

    /** Events {@code from} (inclusive) to {@code to} as a historical {@code /batch/} body. */
    String batch(final String token, final int from, final int to) {
        final StringBuilder json = new StringBuilder(300 * (to - from) + 80);
        json.append("{\"api_key\":\"").append(token).append("\",\"historical_migration\":true,\"batch\":[");
        for (int i = from; i < to; i++) {
            if (i > from) {
                json.append(',');
            }
            json.append("{\"event\":\"").append(NAMES[name[i]]).append("\",\"distinct_id\":\"").append(distinctId(person[i]))
                    .append("\",\"timestamp\":\"").append(Instant.ofEpochMilli(millis[i])).append("\",\"uuid\":\"").append(uuid(i))
                    .append("\",\"properties\":{\"$os\":\"").append(OSES[os[i]]).append('"');
            if (browser[i] != MISSING) {
                json.append(",\"$browser\":\"").append(BROWSERS[browser[i]]).append('"');
            }
            if (url[i] != MISSING) {
                json.append(",\"$current_url\":\"").append(URLS[url[i]]).append('"');
            }
            if (amountCents[i] > 0) {
                json.append(",\"amount\":").append(amountCents[i] / 100).append(amountCents[i] % 100 < 10 ? ".0" : ".").append(amountCents[i] % 100);
            }
            json.append("}}");
        }
        return json.append("]}").toString();
    }
}
