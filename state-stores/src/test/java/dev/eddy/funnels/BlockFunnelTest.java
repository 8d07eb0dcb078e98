package dev.eddy.funnels;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyLookup;
import dev.eddy.trends.TimelineEventSource;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Funnels answered from event blocks equal funnels answered from each person's timeline over the same stored events:
 * ordered, strict and unordered, exclusions, breakdowns by event and person properties with each attribution, step
 * and global filters, funnel trends, time to convert, and group aggregation, over random events in random blocks
 * (a person's events spread over several, some deleted).
 */
class BlockFunnelTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:34:56.789Z");
    private static final String[] EVENTS = {"$pageview", "signup", "buy", "other"};
    static final String STEPS = "\"events\":[{\"id\":\"$pageview\",\"order\":0},{\"id\":\"signup\",\"order\":1},{\"id\":\"buy\",\"order\":2}]";

    /** Funnels of every kind Eddy answers (shared with {@link FunnelProgressTest}). */
    static final List<String> QUERIES = List.of(
            "{" + STEPS + ",\"date_from\":\"-30d\"}",
            "{" + STEPS + ",\"date_from\":\"-14d\",\"funnel_order_type\":\"strict\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_order_type\":\"unordered\",\"funnel_window_days\":3}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"breakdown\":\"$browser\",\"breakdown_type\":\"event\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"breakdown\":\"$browser\",\"breakdown_attribution_type\":\"all_events\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"breakdown\":\"plan\",\"breakdown_type\":\"person\",\"breakdown_attribution_type\":\"last_touch\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"exclusions\":[{\"id\":\"other\",\"funnel_from_step\":0,\"funnel_to_step\":1}]}",
            "{\"events\":[{\"id\":\"$pageview\",\"order\":0,\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\"}]},"
                    + "{\"id\":null,\"order\":1,\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}],\"date_from\":\"-30d\","
                    + "\"properties\":[{\"key\":\"amount\",\"value\":\"10\",\"operator\":\"gt\"}]}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_viz_type\":\"trends\",\"interval\":\"day\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_viz_type\":\"time_to_convert\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"aggregation_group_type_index\":0}",
            // An action step (a Chrome pageview or a signup), then a buy, excluding an action of "other" events.
            "{\"actions\":[{\"id\":5,\"order\":0,\"eddy_action\":{\"id\":5,\"name\":\"came\",\"steps\":[{\"event\":\"$pageview\","
                    + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\"}]},{\"event\":\"signup\"}]}}],\"events\":[{\"id\":\"buy\",\"order\":1}],"
                    + "\"date_from\":\"-30d\",\"exclusions\":[{\"id\":6,\"type\":\"actions\",\"funnel_from_step\":0,\"funnel_to_step\":1,"
                    + "\"eddy_action\":{\"id\":6,\"name\":\"other\",\"steps\":[{\"event\":\"other\",\"properties\":[{\"key\":\"amount\","
                    + "\"value\":\"10\",\"operator\":\"gt\"}]}]}}]}");

    /** The persons behind funnels' numbers ({@link FunnelQuery#parseActors}): read from blocks as from timelines. */
    private static final List<String> ACTOR_QUERIES = List.of(
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_step\":2,\"limit\":10,\"offset\":3}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_step\":-3,\"breakdown\":\"$browser\",\"funnel_step_breakdown\":\"Chrome\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_custom_steps\":[1,3],\"funnel_order_type\":\"unordered\"}",
            "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_viz_type\":\"trends\",\"entrance_period_start\":\"2020-01-20\",\"drop_off\":true}");

    @Test
    void blocksAnswerEveryFunnelAsTheTimelinesDo() throws IOException {
        for (final long seed : new long[] {1, 2, 3}) {
            compare(seed, 80, 2_500, List.of("UTC", "Asia/Kolkata"));
        }
    }

    private static void compare(final long seed, final int personCount, final int eventCount, final List<String> zones) throws IOException {
        {
            final Random random = new Random(seed);
            final Map<String, ObjectNode> persons = new HashMap<>();
            final List<UUID> people = new ArrayList<>();
            for (int p = 0; p < personCount; p++) {
                final UUID person = new UUID(random.nextLong(), random.nextLong());
                people.add(person);
                persons.put(person.toString(), random.nextBoolean() ? Json.mapper().createObjectNode().put("plan", random.nextBoolean() ? "pro" : "free")
                        : Json.mapper().createObjectNode());
            }
            final PropertyLookup lookup = PropertyLookup.of(person -> persons.getOrDefault(person, Json.mapper().createObjectNode()),
                    (type, key) -> Json.mapper().createObjectNode());
            final List<EventBlock.Row> rows = new ArrayList<>();
            for (int i = 0; i < eventCount; i++) {
                final ObjectNode properties = Json.mapper().createObjectNode();
                if (random.nextInt(5) > 0) {
                    properties.put("$browser", random.nextBoolean() ? "Chrome" : "Safari");
                }
                properties.put("amount", random.nextInt(20));
                final UUID person = people.get(random.nextInt(people.size()));
                // Some events at the same microsecond, to order by uuid.
                final long time = TimelineEvent.micros(NOW) - random.nextInt(35 * 24 * 60) * 60_000_000L;
                rows.add(new EventBlock.Row(time, UUID.randomUUID(), person, "d", EVENTS[random.nextInt(EVENTS.length)],
                        random.nextInt(4) == 0 ? Map.of() : Map.of(0, "org-" + random.nextInt(5)), properties));
            }
            final List<EventBlock> blocks = new ArrayList<>();
            final List<BitSet> deletions = new ArrayList<>();
            // Each person's kept events, in timeline order (time, then the uuid's bytes).
            final Map<UUID, List<TimelineEvent>> timelines = new TreeMap<>();
            for (int start = 0; start < rows.size();) {
                final int size = Math.min(rows.size() - start, 1 + random.nextInt(600));
                final EventBlock.Builder builder = new EventBlock.Builder();
                final BitSet deleted = new BitSet();
                for (int r = 0; r < size; r++) {
                    final EventBlock.Row row = rows.get(start + r);
                    builder.add(row);
                    if (random.nextInt(8) == 0) {
                        deleted.set(r);
                    } else {
                        timelines.computeIfAbsent(row.person(), p -> new ArrayList<>()).add(new TimelineEvent(row.timeMicros(), row.uuid(), row.event(),
                                row.distinctId(), row.groups(), Json.mapper().writeValueAsBytes(row.properties())));
                    }
                }
                blocks.add(random.nextBoolean() ? builder.build() : EventBlock.decode(builder.build().encode()));
                deletions.add(deleted);
                start += size;
            }
            // Blocks reach a partition in any order.
            final List<Integer> order = new ArrayList<>();
            for (int b = 0; b < blocks.size(); b++) {
                order.add(b);
            }
            Collections.shuffle(order, random);
            timelines.values().forEach(events -> events.sort(Comparator.comparingLong(TimelineEvent::timeMicros)
                    .thenComparing((a, b) -> compareUnsigned(a.uuid(), b.uuid()))));
            for (final String zone : zones) {
                for (final String json : java.util.stream.Stream.concat(QUERIES.stream(), ACTOR_QUERIES.stream()).toList()) {
                    final FunnelQuery query = ACTOR_QUERIES.contains(json)
                            ? FunnelQuery.parseActors(Json.mapper().readTree(json), ZoneId.of(zone), DayOfWeek.SUNDAY, null, NOW, Optional::empty)
                            : FunnelQuery.parse(Json.mapper().readTree(json), ZoneId.of(zone), DayOfWeek.SUNDAY, null, NOW, Optional::empty);
                    final FunnelQuery.Partial byTimeline = query.partial();
                    timelines.forEach((person, events) -> query.add(byTimeline, person.toString(), events,
                            e -> new TimelineEventSource(person.toString(), e, lookup), NOW));
                    final FunnelQuery.Partial byBlock = query.partial();
                    final FunnelQuery.BlockRowsCollector collector = query.collector(lookup, NOW);
                    for (final int b : order) {
                        collector.add(blocks.get(b), deletions.get(b));
                    }
                    collector.finish(byBlock);
                    // Rows spread over buckets by actor early (as a collector of a large partition does).
                    final FunnelQuery.Partial bySpread = query.partial();
                    final FunnelQuery.BlockRowsCollector spread = query.collector(lookup, NOW);
                    spread.spreadFrom(100);
                    for (final int b : order) {
                        spread.add(blocks.get(b), deletions.get(b));
                    }
                    spread.finish(bySpread);
                    // Read in three shares of the actors, one after the other, as a large partition is.
                    final FunnelQuery.Partial byShares = query.partial();
                    for (int share = 0; share < 3; share++) {
                        final FunnelQuery.BlockRowsCollector part = query.collector(lookup, NOW, share, 3);
                        for (final int b : order) {
                            part.add(blocks.get(b), deletions.get(b));
                        }
                        part.finish(byShares);
                    }
                    final JsonNode expected = query.result(byTimeline);
                    assertThat(query.result(byBlock)).as("seed %d, %s, %s", seed, zone, json).isEqualTo(expected);
                    assertThat(query.result(byShares)).as("in shares: seed %d, %s, %s", seed, zone, json).isEqualTo(expected);
                    assertThat(query.result(bySpread)).as("in buckets: seed %d, %s, %s", seed, zone, json).isEqualTo(expected);
                    assertThat(expected.toString()).as("somebody entered").containsPattern("\"count\":[1-9]|\\[\\d+,[1-9]");
                }
            }
        }
    }

    private static int compareUnsigned(final UUID a, final UUID b) {
        final int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return c != 0 ? c : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
    }
}
