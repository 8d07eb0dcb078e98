package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.ReferenceAnalytics;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.StreamsProcess;
import dev.eddy.gateway.testing.TestEddy;
import dev.eddy.serde.Json;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Eddy as operators scale it: a gateway-only process (this JVM) in front of {@code streams} instances in their own
 * processes, started from the packaged jar. The gateway finds them on the instances topic and hands them its reads.
 *
 * <ol>
 *   <li>With two streams processes, {@code /flags}, the persons list, trends and a funnel answer exactly what a
 *       single all-in-one instance answers on the same events.</li>
 *   <li>Over seeded random journeys sent in two rounds (the second joining distinct ids that have events, and adding
 *       events dated weeks back), trends and a funnel answer what a plain reference model of PostHog's rules
 *       answers ({@link ReferenceAnalytics}), once the events are processed and asked again.</li>
 *   <li>While events are captured and {@code /flags} is asked without pause, a third process joins and one of the
 *       first two is stopped: every acknowledged event is counted exactly once (per person and in total) and no
 *       {@code /flags} request fails.</li>
 * </ol>
 */
@ExtendWith(SharedInfrastructure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ScaleOutIT {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final String SECRET = "scale-out-test-secret";
    private static final int USERS = 24;
    private static final int IDENTIFIED = 8;
    private static final String FLAGS = """
            [{"key":"pro","filters":{"groups":[{"properties":[{"key":"plan","value":"pro","type":"person"}],"rollout_percentage":100}]}},
             {"key":"half","filters":{"groups":[{"properties":[],"rollout_percentage":50}]}},
             {"key":"colour","filters":{"groups":[{"properties":[],"rollout_percentage":100}],"multivariate":{"variants":[
               {"key":"red","rollout_percentage":50},{"key":"blue","rollout_percentage":50}]}}}]""";

    @TempDir
    static Path gatewayDir;
    @TempDir
    static Path singleDir;
    @TempDir
    static Path firstDir;
    @TempDir
    static Path secondDir;
    @TempDir
    static Path thirdDir;

    private static Infrastructure infra;
    private static TestEddy gateway;
    private static TestEddy single;
    private static StreamsProcess first;
    private static StreamsProcess second;
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void start(final Infrastructure shared) throws Exception {
        infra = shared;
        gateway = TestEddy.start(infra, gatewayDir, Map.of("EDDY_ROLE", "gateway", "EDDY_HTTP_INTERNAL_SECRET", SECRET));
        first = StreamsProcess.launch("scale-out-first", infra, gateway.topicPrefix(), SECRET, firstDir);
        second = StreamsProcess.launch("scale-out-second", infra, gateway.topicPrefix(), SECRET, secondDir);
        // The single-instance reference starts while the two processes do.
        single = TestEddy.start(infra, singleDir, Map.of());
        first.awaitReady();
        second.awaitReady();
        gateway.waitUntil(() -> instances().size() == 2, WAIT, "the gateway sees both streams processes");
        for (final JsonNode flag : Json.mapper().readTree(FLAGS)) {
            for (final TestEddy eddy : List.of(gateway, single)) {
                final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", flag.toString());
                assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            }
        }
    }

    @AfterAll
    static void stop() {
        for (final AutoCloseable c : new AutoCloseable[] {second, first, single, gateway}) {
            if (c != null) {
                try {
                    c.close();
                } catch (final Exception e) {
                    // keep closing the others
                }
            }
        }
    }

    private static List<String> instances() {
        final List<String> found = new ArrayList<>();
        TestEddy.json(gateway.get("/_health/ready", Map.of())).path("checks").path("streams_instances").forEach(a -> found.add(a.asText()));
        return found;
    }

    @Test
    @Order(1)
    void twoStreamsProcessesAnswerAsOneInstanceDoes() throws Exception {
        final Instant start = Instant.now().minus(Duration.ofHours(2));
        int pageviews = 0;
        for (final TestEddy eddy : List.of(gateway, single)) {
            final ArrayNode batch = Json.mapper().createArrayNode();
            pageviews = journeys(batch, start);
            final ObjectNode body = Json.mapper().createObjectNode().put("api_key", eddy.projectToken());
            body.set("batch", batch);
            final HttpResponse<String> sent = eddy.post("/batch/", body.toString());
            assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        }
        // A fixed range: both deployments are asked for the same buckets even across an hour's turn.
        final String range = "\"date_from\":\"" + start.minus(Duration.ofDays(1)).toString().substring(0, 10)
                + "\",\"date_to\":\"" + start.plus(Duration.ofDays(1)).toString().substring(0, 10) + "\"";
        // The rollups count an event as soon as it is stored; the person timelines only once an anonymous id's events
        // have moved to the identified person, so both kinds of store are waited for.
        final String totals = "{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"$pageview\",\"math\":\"dau\"}]," + range
                + ",\"display\":\"BoldNumber\"}";
        final int expected = pageviews;
        for (final TestEddy eddy : List.of(gateway, single)) {
            eddy.waitUntil(() -> {
                final JsonNode result = trend(eddy, totals);
                return result != null && result.path(0).path("aggregated_value").asInt() == expected
                        && result.path(1).path("aggregated_value").asInt() == USERS && persons(eddy).size() == USERS;
            }, WAIT, "every event and person in " + eddy.topicPrefix());
        }

        final List<String> queries = List.of(
                "{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"$pageview\",\"math\":\"dau\"}]," + range + ",\"interval\":\"hour\"}",
                "{\"events\":[{\"id\":\"$pageview\"}]," + range + ",\"breakdown\":\"$browser\"}",
                "{\"events\":[{\"id\":\"signup\",\"math\":\"dau\"}]," + range + ",\"properties\":[{\"key\":\"plan\",\"value\":\"pro\","
                        + "\"type\":\"person\"}],\"display\":\"BoldNumber\"}");
        for (final String query : queries) {
            assertThat(series(trend(gateway, query))).as(query).isEqualTo(series(trend(single, query))).isNotEmpty();
        }
        final String funnel = "{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"signup\",\"order\":1},"
                + "{\"id\":\"purchase\",\"order\":2}],\"date_from\":\"-1d\",\"funnel_window_days\":1}";
        final List<Integer> steps = funnelCounts(gateway, funnel);
        assertThat(steps).isEqualTo(funnelCounts(single, funnel)).containsExactly(USERS, USERS / 2, USERS / 4);

        final String counts = "/api/projects/1/event_counts/?event=%24pageview";
        final JsonNode hourly = TestEddy.json(gateway.getAuthorized(counts));
        assertThat(hourly).isEqualTo(TestEddy.json(single.getAuthorized(counts)));
        assertThat(hourly.path("total").asInt()).isEqualTo(expected);

        assertThat(persons(gateway)).isEqualTo(persons(single)).hasSize(USERS);
        for (int i = 0; i < USERS; i++) {
            for (final String distinctId : i < IDENTIFIED ? List.of(user(i), anon(i)) : List.of(user(i))) {
                assertThat(flags(gateway, distinctId)).as(distinctId).isEqualTo(flags(single, distinctId))
                        .containsEntry("pro", i % 3 == 0 ? "true" : "false");
            }
        }

        // Group flags read the group types and the group from global stores, on a streams instance for the gateway.
        final String groupFlag = "{\"key\":\"big-co\",\"filters\":{\"aggregation_group_type_index\":0,\"groups\":[{\"properties\":"
                + "[{\"key\":\"size\",\"value\":\"big\",\"type\":\"group\",\"group_type_index\":0}],\"rollout_percentage\":100}]}}";
        for (final TestEddy eddy : List.of(gateway, single)) {
            final HttpResponse<String> created = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/feature_flags/", groupFlag);
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            eddy.waitUntil(() -> "true".equals(groupFlag(eddy, "acme-" + RUN)), WAIT, "the big company's flag in " + eddy.topicPrefix());
            assertThat(groupFlag(eddy, "tiny-" + RUN)).isEqualTo("false");
        }
    }

    private static String groupFlag(final TestEddy eddy, final String company) {
        final HttpResponse<String> answer = eddy.post("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\""
                + user(1) + "\",\"groups\":{\"company\":\"" + company + "\"}}");
        return answer.statusCode() == 200 ? TestEddy.json(answer).path("flags").path("big-co").path("enabled").asText() : null;
    }

    @Test
    @Order(2)
    void twoStreamsProcessesAnswerAsAPlainReferenceDoes() throws Exception {
        final ReferenceAnalytics reference = new ReferenceAnalytics(RUN + "-ref", 18, 260, 21, Instant.now());
        sendAll(reference.firstRound(1000));
        assertThat(reference.sentEvents()).as("enough events for each partition's first sealed block").isGreaterThan(4 * 4096);
        expectAnswers(reference, "the first round");
        sendAll(reference.secondRound(1000));
        expectAnswers(reference, "the second round's merges and late events");
    }

    private static void sendAll(final List<ArrayNode> batches) {
        for (final ArrayNode batch : batches) {
            final ObjectNode body = Json.mapper().createObjectNode().put("api_key", gateway.projectToken());
            body.set("batch", batch);
            final HttpResponse<String> sent = gateway.post("/batch/", body.toString());
            assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        }
    }

    /**
     * Waits until the two streams processes answer what the reference does; then asks again, so answers kept from the
     * asks before (a shape's block answers are kept from its second ask on) are checked too.
     */
    private static void expectAnswers(final ReferenceAnalytics reference, final String what) throws InterruptedException {
        final ReferenceAnalytics.Answers expected = reference.expected();
        assertThat(expected.funnel()).as("a funnel every step of which someone reaches").allMatch(n -> n > 0);
        assertThat(expected.byUrl()).hasSize(6);
        final ReferenceAnalytics.Answers[] last = new ReferenceAnalytics.Answers[1];
        gateway.waitUntil(() -> expected.equals(last[0] = answers(reference)), WAIT,
                () -> what + ": Eddy answered " + last[0] + " where the reference answers " + expected);
        for (int ask = 0; ask < 2; ask++) {
            assertThat(answers(reference)).as(what + ", asked again").isEqualTo(expected);
        }
    }

    /** The two streams processes' answers to the reference's queries, or null while they rebalance. */
    private static ReferenceAnalytics.Answers answers(final ReferenceAnalytics reference) {
        final List<String> queries = reference.queries();
        final JsonNode totals = trend(gateway, queries.get(0));
        final JsonNode byUrl = totals == null ? null : trend(gateway, queries.get(1));
        if (byUrl == null) {
            return null;
        }
        final HttpResponse<String> funnel = gateway.request(gateway.personalKey(), "POST", "/api/projects/1/insights/funnel/", queries.get(2));
        if (funnel.statusCode() == 503) {
            return null;
        }
        assertThat(funnel.statusCode()).as(funnel.body()).isEqualTo(200);
        final JsonNode sticky = trend(gateway, queries.get(3));
        final JsonNode retention = sticky == null ? null : insight(gateway, "retention", queries.get(4));
        return retention == null ? null : ReferenceAnalytics.parse(totals, byUrl, TestEddy.json(funnel).path("result"), sticky, retention);
    }

    @Test
    @Order(3)
    void aJoiningAndALeavingProcessLoseAndDoubleNothing() throws Exception {
        final String run = RUN + "-load";
        final Map<String, AtomicLong> acked = new ConcurrentHashMap<>();
        final AtomicBoolean loading = new AtomicBoolean(true);
        final AtomicInteger decides = new AtomicInteger();
        final AtomicInteger failedDecides = new AtomicInteger();
        final AtomicInteger refusedCaptures = new AtomicInteger();
        final AtomicInteger partialDecides = new AtomicInteger();
        final Thread capture = new Thread(() -> {
            while (loading.get()) {
                final String user = run + "-" + ThreadLocalRandom.current().nextInt(40);
                final HttpResponse<String> sent = gateway.post("/capture/", "{\"api_key\":\"" + gateway.projectToken()
                        + "\",\"event\":\"scale_" + run + "\",\"distinct_id\":\"" + user + "\",\"uuid\":\"" + UUID.randomUUID()
                        + "\",\"properties\":{\"user\":\"" + user + "\",\"$set\":{\"plan\":\"pro\"}}}");
                if (sent.statusCode() == 200) {
                    acked.computeIfAbsent(user, u -> new AtomicLong()).incrementAndGet();
                } else {
                    // Never a 200 for an event Kafka did not take; such an event is not counted as sent.
                    refusedCaptures.incrementAndGet();
                }
            }
        });
        final Thread decide = new Thread(() -> {
            while (loading.get()) {
                final String user = run + "-" + ThreadLocalRandom.current().nextInt(40);
                final HttpResponse<String> answer = gateway.post("/flags/?v=2", "{\"token\":\"" + gateway.projectToken()
                        + "\",\"distinct_id\":\"" + user + "\"}");
                decides.incrementAndGet();
                if (answer.statusCode() != 200) {
                    failedDecides.incrementAndGet();
                } else if (answer.body().contains("\"errorsWhileComputingFlags\":true")) {
                    // Allowed while a person's partition moves: the person-dependent flags are left out.
                    partialDecides.incrementAndGet();
                }
            }
        });
        capture.start();
        decide.start();
        Thread.sleep(3000);
        try (StreamsProcess third = StreamsProcess.start("scale-out-third", infra, gateway.topicPrefix(), SECRET, thirdDir)) {
            Thread.sleep(5000);
            first.close();
            gateway.waitUntil(() -> !instances().contains(first.address()), Duration.ofSeconds(10), "the stopped process leaves the directory");
            Thread.sleep(5000);
            loading.set(false);
            capture.join();
            decide.join();

            final long sent = acked.values().stream().mapToLong(AtomicLong::get).sum();
            assertThat(sent).as("events acknowledged during the run").isGreaterThan(50);
            final AtomicLong counted = new AtomicLong(-1);
            final Instant deadline = Instant.now().plus(WAIT);
            while (counted.get() != sent && Instant.now().isBefore(deadline)) {
                final JsonNode result = trend(gateway, "{\"events\":[{\"id\":\"scale_" + run + "\"}],\"date_from\":\"-1d\",\"display\":\"BoldNumber\"}");
                counted.set(result == null ? -1 : result.path(0).path("aggregated_value").asLong());
                Thread.sleep(200);
            }
            assertThat(counted.get()).as("events counted (-1: no answer) of the %d acknowledged", sent).isEqualTo(sent);
            final JsonNode perUser = answered("{\"events\":[{\"id\":\"scale_" + run + "\"}],\"date_from\":\"-1d\","
                    + "\"breakdown\":\"user\",\"breakdown_limit\":1000,\"display\":\"ActionsTable\"}");
            final Map<String, Long> perUserCounted = new TreeMap<>();
            perUser.forEach(item -> perUserCounted.put(item.path("breakdown_value").asText(), item.path("aggregated_value").asLong()));
            final Map<String, Long> expected = new TreeMap<>();
            acked.forEach((user, n) -> expected.put(user, n.get()));
            assertThat(perUserCounted).as("each person's events, each once").isEqualTo(expected);
            final JsonNode persons = answered("{\"events\":[{\"id\":\"scale_" + run + "\",\"math\":\"dau\"}],\"date_from\":\"-1d\","
                    + "\"display\":\"BoldNumber\"}");
            assertThat(persons.path(0).path("aggregated_value").asInt()).isEqualTo(expected.size());
            assertThat(decides.get()).isGreaterThan(20);
            assertThat(failedDecides.get()).as("failed /flags requests of " + decides.get()).isZero();
            // While a partition moves, its standby copy answers: few answers lack the person's flags.
            assertThat(partialDecides.get()).as("/flags answers without the person's flags").isLessThan(decides.get() / 4);
            assertThat(instances()).containsExactlyInAnyOrder(second.address(), third.address());
            System.out.printf("scale-out: %d events acknowledged (%d refused), %d /flags answered (%d without the person's flags)%n",
                    sent, refusedCaptures.get(), decides.get(), partialDecides.get());
        }
    }

    /** Adds the journeys to {@code batch}; answers how many pageviews they hold. */
    private static int journeys(final ArrayNode batch, final Instant start) {
        int pageviews = 0;
        for (int i = 0; i < USERS; i++) {
            Instant at = start.plusSeconds(i * 60L);
            if (i < IDENTIFIED) {
                // Browsed anonymously first, then identified: one person with both distinct ids.
                batch.add(event("$pageview", anon(i), at, i));
                pageviews++;
                at = at.plusSeconds(5);
                final ObjectNode identify = event("$identify", user(i), at, i);
                ((ObjectNode) identify.get("properties")).put("$anon_distinct_id", anon(i));
                batch.add(identify);
            }
            for (int v = 0; v < 1 + i % 3; v++) {
                at = at.plusSeconds(10);
                batch.add(event("$pageview", user(i), at, i));
                pageviews++;
            }
            if (i % 2 == 0) {
                batch.add(event("signup", user(i), at.plusSeconds(30), i));
            }
            if (i % 4 == 0) {
                batch.add(event("purchase", user(i), at.plusSeconds(60), i));
            }
        }
        for (final String company : List.of("acme", "tiny")) {
            final ObjectNode identify = event("$groupidentify", user(0), start.plusSeconds("acme".equals(company) ? 1 : 2), 0);
            ((ObjectNode) identify.get("properties")).put("$group_type", "company").put("$group_key", company + "-" + RUN)
                    .putObject("$group_set").put("size", "acme".equals(company) ? "big" : "small");
            batch.add(identify);
        }
        return pageviews;
    }

    private static ObjectNode event(final String name, final String distinctId, final Instant at, final int user) {
        final ObjectNode event = Json.mapper().createObjectNode().put("event", name).put("distinct_id", distinctId)
                .put("timestamp", at.toString()).put("uuid", UUID.nameUUIDFromBytes((name + distinctId + at).getBytes()).toString());
        final ObjectNode properties = event.putObject("properties").put("$browser", user % 2 == 0 ? "Chrome" : "Firefox");
        properties.putObject("$set").put("plan", user % 3 == 0 ? "pro" : "free");
        return event;
    }

    private static String user(final int i) {
        return RUN + "-user-" + i;
    }

    private static String anon(final int i) {
        return RUN + "-anon-" + i;
    }

    /** What a trend's series say, without what differs between deployments (ids, urls). */
    private static List<String> series(final JsonNode result) {
        final List<String> series = new ArrayList<>();
        result.forEach(item -> series.add(item.path("label").asText() + "|" + item.path("breakdown_value").asText() + "|"
                + item.path("data") + "|" + item.path("days") + "|" + item.path("count").asText() + "|"
                + item.path("aggregated_value").asText()));
        return series;
    }

    private static List<Integer> funnelCounts(final TestEddy eddy, final String funnel) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/funnel/", funnel);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        final List<Integer> counts = new ArrayList<>();
        TestEddy.json(response).path("result").forEach(step -> counts.add(step.path("count").asInt()));
        return counts;
    }

    /** Each person's distinct ids (sorted) and plan, as the persons list pages them. */
    private static List<String> persons(final TestEddy eddy) {
        final List<String> found = new ArrayList<>();
        String next = "/api/projects/1/persons/?limit=10";
        while (next != null) {
            final HttpResponse<String> page = eddy.request(eddy.personalKey(), "GET", next, null);
            if (page.statusCode() == 503) {
                return List.of();
            }
            assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
            final JsonNode body = TestEddy.json(page);
            body.path("results").forEach(person -> {
                final List<String> ids = new ArrayList<>();
                person.path("distinct_ids").forEach(id -> ids.add(id.asText()));
                ids.sort(null);
                found.add(ids + "=" + person.path("properties").path("plan").asText());
            });
            next = body.path("next").isTextual() ? body.path("next").asText().replaceFirst("^https?://[^/]+", "") : null;
        }
        found.sort(null);
        return found;
    }

    /** Each flag's value for the distinct id: "true", "false" or the variant. */
    private static Map<String, String> flags(final TestEddy eddy, final String distinctId) {
        final HttpResponse<String> answer = eddy.post("/flags/?v=2", "{\"token\":\"" + eddy.projectToken() + "\",\"distinct_id\":\""
                + distinctId + "\"}");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        final JsonNode body = TestEddy.json(answer);
        assertThat(body.path("errorsWhileComputingFlags").asBoolean()).as(answer.body()).isFalse();
        final Map<String, String> values = new TreeMap<>();
        body.path("flags").properties().forEach(flag -> values.put(flag.getKey(), flag.getValue().path("variant").isTextual()
                ? flag.getValue().path("variant").asText() : flag.getValue().path("enabled").asText()));
        return values;
    }

    /** The trend's result, asked again while the instances answer 503. */
    private static JsonNode answered(final String query) throws InterruptedException {
        final JsonNode[] result = new JsonNode[1];
        gateway.waitUntil(() -> (result[0] = trend(gateway, query)) != null, WAIT, "an answer to " + query);
        return result[0];
    }

    /** The trend's result, or null while the instances are rebalancing (503). */
    private static JsonNode trend(final TestEddy eddy, final String query) {
        return insight(eddy, "trend", query);
    }

    /** The result of {@code query} on the legacy route of {@code insight} ({@code trend}, {@code retention}), or null on a 503. */
    private static JsonNode insight(final TestEddy eddy, final String insight, final String query) {
        final HttpResponse<String> response = eddy.request(eddy.personalKey(), "POST", "/api/projects/1/insights/" + insight + "/", query);
        if (response.statusCode() == 503) {
            return null;
        }
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return TestEddy.json(response).path("result");
    }
}
