package dev.eddy.gateway.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Json;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Seeded random journeys (persons browsing under several distinct ids, signing up, buying), sent in two rounds, and
 * what PostHog answers about them worked out the plain way: every event kept in a list, persons as the union of the
 * distinct ids their {@code $identify} and {@code $create_alias} events joined, each answer a loop over the list. The
 * second round joins distinct ids that already have events (merges) and adds events dated in the first days (late
 * events), so stored answers must change where their events moved or arrived.
 *
 * <p>Event names carry the run, so other tests' events in the same project never count. Every event of a person has
 * its own second: funnels then need no rule for ties.
 */
public final class ReferenceAnalytics {
    /** The funnel's conversion window. */
    private static final int WINDOW_DAYS = 14;
    private static final List<String> BROWSERS = List.of("Chrome", "Firefox", "Safari", "Edge");
    private static final int URLS = 6;

    /** An event as sent. */
    private record Sent(String event, String distinctId, Instant at, String browser, String url) {
    }

    /**
     * The answers compared.
     *
     * @param views  {@code view} events per day
     * @param dau    distinct persons with a {@code view} per day
     * @param byUrl  per URL, {@code view} events not on Safari per day
     * @param funnel persons reaching each step of view → signup → buy in {@link #WINDOW_DAYS} days
     * @param sticky persons with a {@code view} on exactly 1, 2, ... of the range's days (stickiness)
     * @param retention per day of the range, its persons with a {@code view}, then how many of them had one 1, 2, ...
     *                  days later, up to the range's end (daily recurring retention)
     */
    public record Answers(Map<LocalDate, Long> views, Map<LocalDate, Long> dau, Map<String, Map<LocalDate, Long>> byUrl,
                          List<Integer> funnel, List<Long> sticky, List<List<Long>> retention) {
    }

    private final String run;
    private final Random random;
    private final LocalDate firstDay;
    private final LocalDate lastDay;
    private final Instant latest;
    private final List<Sent> sent = new ArrayList<>();
    /** Distinct ids joined so far: each id's representative (union-find). */
    private final Map<String, String> joined = new HashMap<>();
    /** Seconds taken, per person (by its first distinct id). */
    private final Map<Integer, Set<Long>> taken = new HashMap<>();
    private final int persons;

    /**
     * @param run     what makes this run's event names and distinct ids its own
     * @param persons how many persons browse
     * @param days    over how many days up to today (UTC) their events lie
     */
    public ReferenceAnalytics(final String run, final long seed, final int persons, final int days, final Instant now) {
        this.run = run;
        this.random = new Random(seed);
        this.persons = persons;
        this.lastDay = LocalDate.ofInstant(now, ZoneOffset.UTC);
        this.firstDay = lastDay.minusDays(days - 1L);
        this.latest = now.minus(Duration.ofHours(1));
    }

    public String view() {
        return "view_" + run;
    }

    public String signup() {
        return "signup_" + run;
    }

    public String buy() {
        return "buy_" + run;
    }

    /**
     * The first round: each person's events under its anonymous id, its user id (for three in five) and an alias
     * (one in seven), none joined yet.
     */
    public List<ArrayNode> firstRound(final int batchSize) {
        final List<Sent> round = new ArrayList<>();
        for (int p = 0; p < persons; p++) {
            final List<String> ids = ids(p);
            final int views = 30 + random.nextInt(100);
            for (int v = 0; v < views; v++) {
                round.add(event(view(), p, ids, start(), latest));
            }
            if (random.nextInt(10) < 6) {
                round.add(event(signup(), p, ids, start(), latest));
            }
            if (random.nextInt(10) < 4) {
                round.add(event(buy(), p, ids, start(), latest));
            }
        }
        java.util.Collections.shuffle(round, random);
        return batches(round.stream().map(ReferenceAnalytics::json).toList(), batchSize);
    }

    /**
     * The second round: the ids of each person joined ({@code $identify} of the anonymous id, {@code $create_alias}
     * of the alias), and late events of some persons dated in the first three days, in one shuffled order.
     */
    public List<ArrayNode> secondRound(final int batchSize) {
        final List<Sent> round = new ArrayList<>();
        final List<ObjectNode> joins = new ArrayList<>();
        for (int p = 0; p < persons; p++) {
            final List<String> ids = ids(p);
            if (ids.size() > 1) {
                final ObjectNode identify = json(new Sent("$identify", ids.get(1), latest, "Chrome", url(0)));
                ((ObjectNode) identify.get("properties")).put("$anon_distinct_id", ids.get(0));
                joins.add(identify);
                join(ids.get(1), ids.get(0));
            }
            if (ids.size() > 2) {
                final ObjectNode alias = json(new Sent("$create_alias", ids.get(1), latest, "Chrome", url(0)));
                ((ObjectNode) alias.get("properties")).put("alias", ids.get(2));
                joins.add(alias);
                join(ids.get(1), ids.get(2));
            }
            if (random.nextInt(10) < 4) {
                final Instant early = firstDay.plusDays(3).atStartOfDay(ZoneOffset.UTC).toInstant();
                for (int v = 1 + random.nextInt(10); v > 0; v--) {
                    round.add(event(view(), p, ids, start(), early));
                }
                if (random.nextBoolean()) {
                    round.add(event(signup(), p, ids, start(), early));
                }
            }
        }
        final List<ObjectNode> all = new ArrayList<>(joins);
        round.forEach(e -> all.add(json(e)));
        java.util.Collections.shuffle(all, random);
        return batches(all, batchSize);
    }

    /** How many of this run's events were sent (those the trends count: views, signups, buys). */
    public int sentEvents() {
        return sent.size();
    }

    /** What PostHog answers about every event sent so far, persons joined as sent so far. */
    public Answers expected() {
        final Map<LocalDate, Long> views = new TreeMap<>();
        final Map<LocalDate, Set<String>> daily = new TreeMap<>();
        final Map<String, Map<LocalDate, Long>> byUrl = new TreeMap<>();
        final Map<String, List<Sent>> byPerson = new HashMap<>();
        for (final Sent e : sent) {
            final LocalDate day = LocalDate.ofInstant(e.at(), ZoneOffset.UTC);
            byPerson.computeIfAbsent(person(e.distinctId()), p -> new ArrayList<>()).add(e);
            if (!e.event().equals(view())) {
                continue;
            }
            views.merge(day, 1L, Long::sum);
            daily.computeIfAbsent(day, d -> new HashSet<>()).add(person(e.distinctId()));
            if (!"Safari".equals(e.browser())) {
                byUrl.computeIfAbsent(e.url(), u -> new TreeMap<>()).merge(day, 1L, Long::sum);
            }
        }
        final Map<LocalDate, Long> dau = new TreeMap<>();
        daily.forEach((day, who) -> dau.put(day, (long) who.size()));
        final Map<String, Integer> daysActive = new HashMap<>();
        daily.forEach((day, who) -> {
            if (!day.isBefore(firstDay) && !day.isAfter(lastDay)) {
                who.forEach(p -> daysActive.merge(p, 1, Integer::sum));
            }
        });
        final Long[] sticky = new Long[(int) java.time.temporal.ChronoUnit.DAYS.between(firstDay, lastDay) + 1];
        java.util.Arrays.fill(sticky, 0L);
        daysActive.values().forEach(n -> sticky[n - 1]++);
        final int days = sticky.length;
        final List<List<Long>> retention = new ArrayList<>();
        for (int i = 0; i < days; i++) {
            final Set<String> cohort = daily.getOrDefault(firstDay.plusDays(i), Set.of());
            final List<Long> row = new ArrayList<>(List.of((long) cohort.size()));
            for (int k = 1; i + k < days; k++) {
                row.add(cohort.stream().filter(daily.getOrDefault(firstDay.plusDays(i + k), Set.of())::contains).count());
            }
            retention.add(row);
        }
        final int[] reached = new int[3];
        for (final List<Sent> events : byPerson.values()) {
            final int steps = funnelSteps(events);
            for (int s = 0; s < steps; s++) {
                reached[s]++;
            }
        }
        return new Answers(views, dau, byUrl, List.of(reached[0], reached[1], reached[2]), List.of(sticky), retention);
    }

    /**
     * The furthest step of view → signup → buy one person reached: from each view, each next step's earliest event
     * after the step before, all within the window of the view.
     */
    private int funnelSteps(final List<Sent> events) {
        final List<Sent> ordered = new ArrayList<>(events);
        ordered.sort(Comparator.comparing(Sent::at));
        final List<String> steps = List.of(view(), signup(), buy());
        int best = 0;
        for (int start = 0; start < ordered.size() && best < steps.size(); start++) {
            if (!ordered.get(start).event().equals(steps.get(0))) {
                continue;
            }
            final Instant end = ordered.get(start).at().plus(Duration.ofDays(WINDOW_DAYS));
            int step = 1;
            for (int i = start + 1; i < ordered.size() && step < steps.size() && !ordered.get(i).at().isAfter(end); i++) {
                if (ordered.get(i).event().equals(steps.get(step))) {
                    step++;
                }
            }
            best = Math.max(best, step);
        }
        return best;
    }

    /** The trend, funnel, stickiness and retention queries whose answers {@link #parse} reads, in that order. */
    public List<String> queries() {
        final String range = "\"date_from\":\"" + firstDay + "\",\"date_to\":\"" + lastDay + "\"";
        return List.of(
                "{\"events\":[{\"id\":\"" + view() + "\"},{\"id\":\"" + view() + "\",\"math\":\"dau\"}],\"interval\":\"day\"," + range + "}",
                "{\"events\":[{\"id\":\"" + view() + "\"}],\"properties\":[{\"key\":\"$browser\",\"value\":\"Safari\",\"operator\":\"is_not\","
                        + "\"type\":\"event\"}],\"breakdown\":\"$current_url\",\"breakdown_type\":\"event\",\"interval\":\"day\"," + range + "}",
                "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"" + view() + "\",\"order\":0},{\"id\":\"" + signup() + "\",\"order\":1},"
                        + "{\"id\":\"" + buy() + "\",\"order\":2}],\"funnel_window_interval\":" + WINDOW_DAYS
                        + ",\"funnel_window_interval_unit\":\"day\"," + range + "}",
                "{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"" + view() + "\"}],\"interval\":\"day\"," + range + "}",
                "{\"target_entity\":{\"id\":\"" + view() + "\",\"type\":\"events\"},\"period\":\"Day\",\"date_to\":\"" + lastDay
                        + "\",\"total_intervals\":" + (java.time.temporal.ChronoUnit.DAYS.between(firstDay, lastDay) + 1) + "}");
    }

    /** Eddy's answers to {@link #queries}: the two trends', the funnel's, the stickiness and retention results, as {@link Answers}. */
    public static Answers parse(final JsonNode totals, final JsonNode byUrl, final JsonNode funnel, final JsonNode sticky,
                                final JsonNode retention) {
        final Map<String, Map<LocalDate, Long>> urls = new TreeMap<>();
        byUrl.forEach(series -> {
            final Map<LocalDate, Long> days = days(series);
            if (!days.isEmpty()) {
                urls.put(series.path("breakdown_value").asText(), days);
            }
        });
        final List<Integer> steps = new ArrayList<>();
        funnel.forEach(step -> steps.add(step.path("count").asInt()));
        final List<Long> actors = new ArrayList<>();
        sticky.path(0).path("data").forEach(n -> actors.add(n.asLong()));
        final List<List<Long>> cohorts = new ArrayList<>();
        retention.forEach(cohort -> cohorts.add(cohort.path("values").findValues("count").stream().map(JsonNode::asLong).toList()));
        return new Answers(days(totals.path(0)), days(totals.path(1)), urls, steps, actors, cohorts);
    }

    /** A series' days with a value other than 0. */
    private static Map<LocalDate, Long> days(final JsonNode series) {
        final Map<LocalDate, Long> days = new TreeMap<>();
        for (int i = 0; i < series.path("days").size(); i++) {
            final long value = series.path("data").path(i).asLong();
            if (value != 0) {
                days.put(LocalDate.parse(series.path("days").path(i).asText().substring(0, 10)), value);
            }
        }
        return days;
    }

    /** Person {@code p}'s distinct ids: anonymous first, then user (three in five), then alias (one in seven). */
    private List<String> ids(final int p) {
        final List<String> ids = new ArrayList<>(List.of(run + "-anon-" + p));
        if (p % 5 < 3) {
            ids.add(run + "-user-" + p);
            if (p % 7 == 0) {
                ids.add(run + "-alias-" + p);
            }
        }
        return ids;
    }

    private Instant start() {
        return firstDay.atStartOfDay(ZoneOffset.UTC).toInstant();
    }

    /** An event of person {@code p} under one of its ids, at a second of {@code [from, to)} none of its events has. */
    private Sent event(final String name, final int p, final List<String> ids, final Instant from, final Instant to) {
        final long span = Duration.between(from, to).toSeconds();
        final Set<Long> seconds = taken.computeIfAbsent(p, k -> new HashSet<>());
        long second;
        do {
            second = from.getEpochSecond() + (long) (random.nextDouble() * span);
        } while (!seconds.add(second));
        final Sent event = new Sent(name, ids.get(random.nextInt(ids.size())), Instant.ofEpochSecond(second),
                BROWSERS.get(random.nextInt(BROWSERS.size())), url(random.nextInt(URLS)));
        sent.add(event);
        return event;
    }

    private static String url(final int i) {
        return "https://example.com/page-" + i;
    }

    private static ObjectNode json(final Sent e) {
        final ObjectNode event = Json.mapper().createObjectNode().put("event", e.event()).put("distinct_id", e.distinctId())
                .put("timestamp", e.at().toString())
                .put("uuid", UUID.nameUUIDFromBytes((e.event() + e.distinctId() + e.at()).getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString());
        event.putObject("properties").put("$browser", e.browser()).put("$current_url", e.url());
        return event;
    }

    private static List<ArrayNode> batches(final List<ObjectNode> events, final int batchSize) {
        final List<ArrayNode> batches = new ArrayList<>();
        for (int i = 0; i < events.size(); i += batchSize) {
            final ArrayNode batch = Json.mapper().createArrayNode();
            events.subList(i, Math.min(events.size(), i + batchSize)).forEach(batch::add);
            batches.add(batch);
        }
        return batches;
    }

    private String person(final String distinctId) {
        String id = distinctId;
        while (joined.containsKey(id)) {
            id = joined.get(id);
        }
        return id;
    }

    private void join(final String into, final String other) {
        final String a = person(into);
        final String b = person(other);
        if (!a.equals(b)) {
            joined.put(b, a);
        }
    }
}
