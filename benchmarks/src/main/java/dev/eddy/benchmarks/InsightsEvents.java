package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.CapturedEvent;
import dev.eddy.serde.Json;
import java.math.BigDecimal;
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
 *
 * <p>With {@code identifyPercent} above 0, that share of the persons (those whose index is below it modulo 100) start
 * anonymous: their first {@value #IDENTIFY_AT} events carry the distinct id {@code anon-<person>}, the next one is an
 * {@code $identify} from {@code person-<person>} naming the anonymous id, and the rest carry {@code person-<person>}.
 * Eddy must fold both ids into one person, as the columns already are; no random draw depends on it, so the other
 * columns are the same as without.
 */
final class InsightsEvents {
    static final String[] NAMES = {"$pageview", "$autocapture", "$pageleave", "signup", "purchase", "invite_sent", "$identify"};
    /** {@code $identify} in {@link #NAMES}: never drawn, only given to an anonymous person's identifying event. */
    static final byte IDENTIFY = 6;
    /** How many events an identifying person sends anonymously before its {@code $identify}. */
    static final int IDENTIFY_AT = 2;
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
    /** Whether the event was sent under its person's anonymous distinct id (before the person's {@code $identify}). */
    final boolean[] anonymous;
    private final int idSpace;

    InsightsEvents(final int count, final int persons, final int days, final LocalDate lastDay, final long seed) {
        this(count, persons, days, lastDay, seed, 0, 0);
    }

    /**
     * @param identifyPercent the share of persons who start anonymous and identify on their third event
     * @param idSpace         0, or another number for events whose distinct ids and uuids must differ from those
     *                        of space 0 (say, a warm-up before them)
     */
    InsightsEvents(final int count, final int persons, final int days, final LocalDate lastDay, final long seed,
                   final int identifyPercent, final int idSpace) {
        if (idSpace < 0 || idSpace > 0xffff) {
            throw new IllegalArgumentException("idSpace must be 0 to 65535");
        }
        this.idSpace = idSpace;
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
        anonymous = new boolean[count];
        final int[] sent = new int[identifyPercent > 0 ? persons : 0];
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
            if (p % 100 < identifyPercent) {
                anonymous[i] = sent[p] < IDENTIFY_AT;
                if (sent[p]++ == IDENTIFY_AT) {
                    name[i] = IDENTIFY;
                    amountCents[i] = 0;
                }
            }
        }
    }

    private static int pick(final int[] cumulativeShares, final int roll) {
        int k = 0;
        while (roll >= cumulativeShares[k]) {
            k++;
        }
        return k;
    }

    /** The distinct id event {@code i} is sent with. */
    String distinctId(final int i) {
        return (anonymous[i] ? anonymousId(person[i]) : idPrefix() + "person-" + person[i]);
    }

    private String anonymousId(final int person) {
        return idPrefix() + "anon-" + person;
    }

    private String idPrefix() {
        return idSpace == 0 ? "" : "s" + idSpace + "-";
    }

    /** Distinct per event and id space, and the same every run: the run's Eddy is new, so its dedup store has not seen them. */
    UUID uuid(final int i) {
        return new UUID(0x6ed5a11c_0000_4000L | (long) idSpace << 16, 0x8000_0000_0000_0000L | i);
    }

    /**
     * Events {@code from} (inclusive) to {@code to} as a {@code /batch/} body: a historical migration (to {@code
     * events.historical}) or live events (to {@code events.ingest}).
     */
    String batch(final String token, final int from, final int to, final boolean historical) {
        final StringBuilder json = new StringBuilder(300 * (to - from) + 80);
        json.append("{\"api_key\":\"").append(token).append(historical ? "\",\"historical_migration\":true" : "\"").append(",\"batch\":[");
        for (int i = from; i < to; i++) {
            if (i > from) {
                json.append(',');
            }
            json.append("{\"event\":\"").append(NAMES[name[i]]).append("\",\"distinct_id\":\"").append(distinctId(i))
                    .append("\",\"timestamp\":\"").append(Instant.ofEpochMilli(millis[i])).append("\",\"uuid\":\"").append(uuid(i))
                    .append("\",\"properties\":").append(properties(i)).append('}');
        }
        return json.append("]}").toString();
    }

    /**
     * {@code n} live events (no timestamp: received now) of persons drawn from this set's persons, with its shares of
     * names, as a {@code /batch/} body: what a site keeps sending after its history was loaded. The browser, OS and URL
     * are drawn afresh (a person's own browser is not kept per person here).
     */
    String liveBatch(final String token, final SplittableRandom random, final int n) {
        final StringBuilder json = new StringBuilder(200 * n + 40).append("{\"api_key\":\"").append(token).append("\",\"batch\":[");
        for (int k = 0; k < n; k++) {
            final String event = NAMES[pick(NAME_SHARES, random.nextInt(100))];
            json.append(k == 0 ? "" : ",").append("{\"event\":\"").append(event).append("\",\"distinct_id\":\"").append(idPrefix())
                    .append("person-").append(random.nextInt(persons)).append("\",\"properties\":{\"$os\":\"")
                    .append(OSES[random.nextInt(OSES.length)]).append("\",\"$browser\":\"").append(BROWSERS[pick(BROWSER_SHARES, random.nextInt(100))])
                    .append("\",\"$current_url\":\"").append(URLS[random.nextInt(URLS.length)]).append("\"}}");
        }
        return json.append("]}").toString();
    }

    /**
     * Event {@code i} as PostHog's batch export of the events model writes it to a JSON Lines file (the fields Eddy's
     * importer reads, and some it ignores).
     */
    String exportRecord(final int i) {
        return "{\"uuid\":\"" + uuid(i) + "\",\"event\":\"" + NAMES[name[i]] + "\",\"distinct_id\":\"" + distinctId(i)
                + "\",\"team_id\":1,\"timestamp\":\"" + Instant.ofEpochMilli(millis[i]) + "\",\"properties\":" + properties(i)
                + ",\"elements_chain\":\"\",\"person_id\":null}";
    }

    /** Event {@code i} as the gateway would write it to Kafka, received {@code now}, for producing it directly. */
    CapturedEvent envelope(final int i, final String token, final Instant now) {
        return new CapturedEvent(CapturedEvent.VERSION, uuid(i).toString(), 1, token, distinctId(i), NAMES[name[i]], properties(i),
                Instant.ofEpochMilli(millis[i]), now, null, "127.0.0.1", null, "benchmark");
    }

    private ObjectNode properties(final int i) {
        final ObjectNode p = Json.mapper().createObjectNode().put("$os", OSES[os[i]]);
        if (browser[i] != MISSING) {
            p.put("$browser", BROWSERS[browser[i]]);
        }
        if (url[i] != MISSING) {
            p.put("$current_url", URLS[url[i]]);
        }
        if (amountCents[i] > 0) {
            p.put("amount", BigDecimal.valueOf(amountCents[i], 2));
        }
        if (name[i] == IDENTIFY) {
            p.put("$anon_distinct_id", anonymousId(person[i]));
        }
        return p;
    }
}
