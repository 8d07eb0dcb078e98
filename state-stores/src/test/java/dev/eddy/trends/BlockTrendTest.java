package dev.eddy.trends;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Trends answered from event blocks equal trends answered event by event from the same stored events: every math,
 * every breakdown type, event, person and group filters, compare, intervals and time zones, over random events in
 * random blocks with random rows deleted.
 */
class BlockTrendTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:34:56.789Z");
    private static final String[] EVENTS = {"$pageview", "signup", "buy", "$autocapture"};
    private static final String[] BROWSERS = {"Chrome", "Safari", "Firefox", ""};
    private static final String[] URLS = {"/", "/pricing", "/pricing/", "/docs", "/blog?x=1", "/docs?#"};
    private static final String[] PLANS = {"free", "pro", "team"};

    private static final List<String> QUERIES = List.of(
            "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"-7d\"}",
            "{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"buy\",\"math\":\"dau\"}],\"date_from\":\"-14d\",\"interval\":\"hour\"}",
            "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"-30d\",\"breakdown\":\"$current_url\","
                    + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Safari\",\"operator\":\"is_not\",\"type\":\"event\"}]}",
            "{\"events\":[{\"id\":null,\"math\":\"weekly_active\"}],\"date_from\":\"-21d\"}",
            "{\"events\":[{\"id\":\"buy\",\"math\":\"monthly_active\"}],\"date_from\":\"-40d\",\"interval\":\"week\"}",
            "{\"events\":[{\"id\":\"buy\",\"math\":\"sum\",\"math_property\":\"amount\"},{\"id\":\"buy\",\"math\":\"avg\",\"math_property\":\"amount\"},"
                    + "{\"id\":\"buy\",\"math\":\"max\",\"math_property\":\"amount\"},{\"id\":\"buy\",\"math\":\"median\",\"math_property\":\"amount\"}],"
                    + "\"date_from\":\"-30d\",\"breakdown\":\"plan\",\"breakdown_type\":\"person\"}",
            "{\"events\":[{\"id\":\"signup\",\"math\":\"unique_group\",\"math_group_type_index\":0}],\"date_from\":\"-30d\",\"interval\":\"month\"}",
            "{\"events\":[{\"id\":\"$pageview\",\"properties\":[{\"key\":\"plan\",\"value\":[\"pro\",\"team\"],\"type\":\"person\"}]}],"
                    + "\"date_from\":\"-30d\",\"breakdown\":\"industry\",\"breakdown_type\":\"group\",\"breakdown_group_type_index\":0}",
            "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"-7d\",\"compare\":true,\"breakdown\":\"$browser\"}",
            "{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"signup\"}],\"formula\":\"A/B\",\"date_from\":\"-30d\",\"display\":\"BoldNumber\","
                    + "\"properties\":{\"type\":\"OR\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"$current_url\",\"value\":\"doc\","
                    + "\"operator\":\"icontains\"},{\"key\":\"$browser\",\"value\":\"Chrome\"}]},{\"type\":\"AND\",\"values\":[{\"key\":\"amount\","
                    + "\"value\":\"50\",\"operator\":\"gt\"}]}]}}",
            "{\"events\":[{\"id\":\"$autocapture\",\"math\":\"p90\",\"math_property\":\"amount\"}],\"date_from\":\"2020-01-01\",\"date_to\":\"2020-01-20\","
                    + "\"breakdown\":\"amount\"}",
            "{\"events\":[{\"id\":\"buy\",\"properties\":[{\"key\":\"industry\",\"value\":\"tech\",\"type\":\"group\",\"group_type_index\":0}]}],"
                    + "\"date_from\":\"-30d\",\"interval\":\"day\"}",
            "{\"events\":[{\"id\":\"$pageview\"},{\"id\":\"buy\",\"math\":\"avg_count_per_actor\"}],\"date_from\":\"-30d\",\"breakdowns\":"
                    + "[{\"property\":\"$browser\"},{\"property\":\"plan\",\"type\":\"person\"},{\"property\":\"industry\",\"type\":\"group\","
                    + "\"group_type_index\":0}],\"breakdown_limit\":5}",
            "{\"events\":[{\"id\":\"$pageview\",\"math\":\"p90_count_per_actor\"}],\"date_from\":\"-30d\",\"display\":\"ActionsTable\","
                    + "\"breakdowns\":[{\"property\":\"$browser\"},{\"property\":\"$current_url\"}]}",
            "{\"events\":[{\"id\":\"$pageview\"}],\"date_from\":\"-30d\",\"breakdown\":\"$current_url\",\"breakdown_normalize_url\":true,"
                    + "\"smoothing_intervals\":3}",
            "{\"actions\":[{\"id\":3,\"eddy_action\":{\"id\":3,\"name\":\"docs or buy\",\"steps\":[{\"event\":\"$pageview\",\"url\":\"/docs\"},"
                    + "{\"event\":\"buy\",\"properties\":[{\"key\":\"amount\",\"value\":\"20\",\"operator\":\"gt\"}]}]}}],\"events\":[{\"id\":\"buy\","
                    + "\"order\":1}],\"date_from\":\"-30d\",\"breakdown\":\"$browser\"}",
            "{\"actions\":[{\"id\":4,\"math\":\"dau\",\"eddy_action\":{\"id\":4,\"name\":\"pricing\",\"steps\":[{\"url\":\"/pricing\","
                    + "\"url_matching\":\"exact\"}]}}],\"date_from\":\"-30d\"}",
            "{\"events\":[{\"id\":\"$pageview\",\"math\":\"dau\"}],\"date_from\":\"-30d\",\"breakdowns\":[{\"property\":\"$current_url\","
                    + "\"normalize_url\":true},{\"property\":\"$browser\"}]}");

    @Test
    void blocksAnswerEveryQueryAsTheEventsDo() throws IOException {
        for (final long seed : new long[] {1, 2, 3}) {
            final Random random = new Random(seed);
            final Map<String, ObjectNode> persons = new HashMap<>();
            final List<UUID> people = new ArrayList<>();
            for (int p = 0; p < 60; p++) {
                final UUID person = new UUID(seed, p);
                people.add(person);
                final ObjectNode properties = Json.mapper().createObjectNode();
                if (random.nextInt(5) > 0) {
                    properties.put("plan", PLANS[random.nextInt(PLANS.length)]);
                }
                persons.put(person.toString(), properties);
            }
            final PropertyLookup lookup = PropertyLookup.of(person -> persons.getOrDefault(person, Json.mapper().createObjectNode()),
                    (type, key) -> Json.mapper().createObjectNode().put("industry", key.endsWith("1") ? "tech" : "retail"));
            final List<EventBlock.Row> rows = new ArrayList<>();
            for (int i = 0; i < 3_000; i++) {
                rows.add(randomRow(random, people));
            }
            // Random block sizes; about one row in six deleted (moved away or expired).
            final List<EventBlock> blocks = new ArrayList<>();
            final List<BitSet> deletions = new ArrayList<>();
            final List<EventBlock.Row> kept = new ArrayList<>();
            for (int start = 0; start < rows.size();) {
                final int size = Math.min(rows.size() - start, 1 + random.nextInt(700));
                final EventBlock.Builder builder = new EventBlock.Builder();
                final BitSet deleted = new BitSet();
                for (int r = 0; r < size; r++) {
                    builder.add(rows.get(start + r));
                    if (random.nextInt(6) == 0) {
                        deleted.set(r);
                    } else {
                        kept.add(rows.get(start + r));
                    }
                }
                final EventBlock built = builder.build();
                blocks.add(random.nextBoolean() ? built : EventBlock.decode(built.encode()));
                deletions.add(deleted);
                start += size;
            }
            for (final String zone : List.of("UTC", "America/New_York")) {
                for (final String json : QUERIES) {
                    final TrendQuery query = TrendQuery.parse(Json.mapper().readTree(json), ZoneId.of(zone), DayOfWeek.SUNDAY, null, NOW,
                            Optional::empty);
                    final TrendQuery.Partial byEvent = query.partial();
                    for (final EventBlock.Row row : kept) {
                        query.add(byEvent, row.person().toString(), new TimelineEvent(row.timeMicros(), row.uuid(), row.event(),
                                row.distinctId(), row.groups(), Json.mapper().writeValueAsBytes(row.properties())), lookup, NOW);
                    }
                    final TrendQuery.Partial byBlock = query.partial();
                    for (int b = 0; b < blocks.size(); b++) {
                        query.add(byBlock, blocks.get(b), deletions.get(b), lookup, NOW);
                    }
                    final JsonNode expected = query.result(byEvent);
                    assertThat(query.result(byBlock)).as("seed %d, %s, %s", seed, zone, json).isEqualTo(expected);
                    assertThat(expected.toString()).as("the query counts something").containsPattern("\"(count|aggregated_value)\":(0\\.0*)?[1-9]");
                }
            }
        }
    }

    private static EventBlock.Row randomRow(final Random random, final List<UUID> people) {
        final ObjectNode properties = Json.mapper().createObjectNode();
        if (random.nextInt(8) > 0) {
            properties.put("$browser", BROWSERS[random.nextInt(BROWSERS.length)]);
        }
        if (random.nextInt(8) > 0) {
            properties.put("$current_url", URLS[random.nextInt(URLS.length)]);
        }
        switch (random.nextInt(4)) {
            case 0 -> properties.put("amount", random.nextInt(100));
            case 1 -> properties.put("amount", String.valueOf(random.nextInt(100)));
            case 2 -> properties.put("amount", random.nextInt(40) * 2.5);
            default -> { }
        }
        final Map<Integer, String> groups = random.nextInt(3) == 0 ? Map.of() : Map.of(0, "org-" + random.nextInt(4));
        // Times from 45 days before NOW to a little after it, at any microsecond.
        final long time = TimelineEvent.micros(NOW) - (long) (random.nextDouble() * 45 * 86_400_000_000L) + random.nextInt(3_600_000) * 1_000L;
        final UUID person = people.get(random.nextInt(people.size()));
        return new EventBlock.Row(time, UUID.randomUUID(), person, "d-" + person.getLeastSignificantBits(), EVENTS[random.nextInt(EVENTS.length)],
                groups, properties);
    }
}
