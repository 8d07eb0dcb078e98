package dev.eddy.funnels;

import com.fasterxml.jackson.databind.JsonNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.columns.StoredBlocks;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyLookup;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A funnel's kept progress answers exactly what a fresh evaluation of every block answers, read after read, while a
 * partition changes under it as Eddy's do: rows arriving in the block being filled, blocks sealed, rows deleted from
 * sealed blocks by merges (and stored again under the surviving person) and by expiry, blocks removed and sealed again
 * under a new id; and after a read that failed part way.
 */
class FunnelProgressTest {
    private static final Instant NOW = Instant.parse("2020-01-30T12:34:56.789Z");
    private static final long PROJECT = 3;
    private static final String[] EVENTS = {"$pageview", "signup", "buy", "other"};
    private static final String STEPS = BlockFunnelTest.STEPS;
    private static final PropertyLookup NO_PROPERTIES = PropertyLookup.of(person -> Json.mapper().createObjectNode(),
            (type, key) -> Json.mapper().createObjectNode());

    /** A sealed block's entry as the partition has it. */
    private record Sealed(long number, BlockKeys.Sealed entry, BitSet deleted) {
    }

    /** Rows of the block being filled per part (its later rows are the tail, stored one by one). */
    private static final int PART_ROWS = 128;

    /**
     * A partition's rows of the project: sealed blocks by number, and the rows of the block being filled (whole parts
     * of {@link #PART_ROWS}, then the tail).
     */
    private static final class Partition {
        final Random random;
        final List<UUID> people = new ArrayList<>();
        final Map<Long, Sealed> sealed = new TreeMap<>();
        final Map<Long, EventBlock> content = new TreeMap<>();
        final List<EventBlock.Row> filling = new ArrayList<>();
        long nextBlock;
        /** When set, each new row happens after every earlier one (events arriving as they happen), unless late. */
        long clock;
        boolean late;

        Partition(final long seed) {
            random = new Random(seed);
            for (int p = 0; p < 40; p++) {
                people.add(new UUID(random.nextLong(), random.nextLong()));
            }
        }

        EventBlock.Row row(final UUID person) {
            final ObjectNode properties = Json.mapper().createObjectNode();
            if (random.nextInt(5) > 0) {
                properties.put("$browser", random.nextBoolean() ? "Chrome" : "Safari");
            }
            properties.put("amount", random.nextInt(20));
            final long time;
            if (clock != 0 && !late) {
                clock += (1 + random.nextInt(120)) * 1_000_000L;
                time = clock;
            } else if (clock != 0) {
                time = clock - random.nextInt(10 * 24 * 60) * 60_000_000L;
            } else {
                time = TimelineEvent.micros(NOW) - random.nextInt(35 * 24 * 60) * 60_000_000L;
            }
            return new EventBlock.Row(time, UUID.randomUUID(), person, "d", EVENTS[random.nextInt(EVENTS.length)], Map.of(), properties);
        }

        void arrive(final int rows) {
            for (int i = 0; i < rows; i++) {
                filling.add(row(people.get(random.nextInt(people.size()))));
                if (filling.size() == 20 * PART_ROWS) {
                    seal();
                }
            }
        }

        void seal() {
            if (filling.isEmpty()) {
                return;
            }
            put(nextBlock++, filling);
            filling.clear();
        }

        private void put(final long number, final List<EventBlock.Row> rows) {
            final EventBlock.Builder builder = new EventBlock.Builder();
            rows.forEach(builder::add);
            final EventBlock block = builder.build();
            content.put(number, block);
            sealed.put(number, new Sealed(number, new BlockKeys.Sealed(random.nextLong(), block.firstMicros(), block.lastMicros()),
                    new BitSet()));
        }

        /** Person {@code from} merged into {@code into}: its rows leave their blocks and are stored again as into's. */
        void merge(final UUID from, final UUID into) {
            for (final Sealed b : List.copyOf(sealed.values())) {
                final EventBlock block = content.get(b.number());
                final BitSet deleted = (BitSet) b.deleted().clone();
                for (int r = 0; r < block.rows(); r++) {
                    if (!deleted.get(r) && block.person(block.persons().code(r)).equals(from)) {
                        deleted.set(r);
                        filling.add(new EventBlock.Row(block.timeMicros(r), block.uuid(r), into, "d", block.events().value(r).asText(), Map.of(),
                                (ObjectNode) Json.mapper().createObjectNode().set("$browser", block.property("$browser").value(r))));
                    }
                }
                sealed.put(b.number(), new Sealed(b.number(), b.entry(), deleted));
            }
            filling.replaceAll(row -> row.person().equals(from) ? new EventBlock.Row(row.timeMicros(), row.uuid(), into, row.distinctId(),
                    row.event(), row.groups(), row.properties()) : row);
            people.remove(from);
        }

        /** Expiry: some rows of a block deleted, or the whole block removed. */
        void expire() {
            if (sealed.isEmpty()) {
                return;
            }
            final long number = List.copyOf(sealed.keySet()).get(random.nextInt(sealed.size()));
            if (random.nextBoolean()) {
                sealed.remove(number);
                content.remove(number);
                return;
            }
            final Sealed b = sealed.get(number);
            final BitSet deleted = (BitSet) b.deleted().clone();
            for (int r = 0; r < content.get(number).rows(); r++) {
                if (random.nextInt(4) == 0) {
                    deleted.set(r);
                }
            }
            sealed.put(number, new Sealed(number, b.entry(), deleted));
        }

        /** A block rebuilt (its store restored): the same rows under a new id. */
        void reseal() {
            if (sealed.isEmpty()) {
                return;
            }
            final long number = List.copyOf(sealed.keySet()).get(random.nextInt(sealed.size()));
            final EventBlock block = content.get(number);
            final BitSet deleted = sealed.get(number).deleted();
            final List<EventBlock.Row> kept = new ArrayList<>();
            for (int r = deleted.nextClearBit(0); r < block.rows(); r = deleted.nextClearBit(r + 1)) {
                kept.add(new EventBlock.Row(block.timeMicros(r), block.uuid(r), block.person(block.persons().code(r)), "d",
                        block.events().value(r).asText(), Map.of(), (ObjectNode) Json.mapper().createObjectNode()
                        .set("$browser", block.property("$browser").value(r))));
            }
            put(number, kept);
        }

        StoredBlocks.Sealed source() {
            return (project, number, entry) -> {
                final Sealed b = sealed.get(number);
                return project == PROJECT && b != null && b.entry().id() == entry.id() ? content.get(number) : null;
            };
        }

        /** The sealed blocks, then the whole parts of the block being filled, as a read finds them. */
        List<FunnelProgress.Unit> units() {
            final List<FunnelProgress.Unit> units = new ArrayList<>();
            sealed.values().forEach(b -> units.add(FunnelProgress.Unit.sealed(PROJECT, b.number(), b.entry(), b.deleted(), source())));
            for (int part = 0; (part + 1) * PART_ROWS <= filling.size(); part++) {
                units.add(FunnelProgress.Unit.part(nextBlock, part, block(filling.subList(part * PART_ROWS, (part + 1) * PART_ROWS)).encode(),
                        new BitSet()));
            }
            return units;
        }

        List<FunnelProgress.UnsealedBlock> unsealed() {
            final List<EventBlock.Row> tail = filling.subList(filling.size() / PART_ROWS * PART_ROWS, filling.size());
            return tail.isEmpty() ? List.of() : List.of(new FunnelProgress.UnsealedBlock(block(tail), new BitSet()));
        }

        private static EventBlock block(final List<EventBlock.Row> rows) {
            final EventBlock.Builder builder = new EventBlock.Builder();
            rows.forEach(builder::add);
            return builder.build();
        }

        /** The funnel's answer evaluated afresh from every row. */
        FunnelQuery.Partial fresh(final FunnelQuery query) {
            final FunnelQuery.Partial partial = query.partial();
            final FunnelQuery.BlockRowsCollector collector = query.collector(NO_PROPERTIES, NOW);
            sealed.values().forEach(b -> collector.add(content.get(b.number()), b.deleted()));
            collector.add(block(filling), new BitSet());
            collector.finish(partial);
            return partial;
        }
    }

    @Test
    void keptProgressAnswersAsAFreshEvaluationWhateverChanges() throws IOException {
        for (final long seed : new long[] {1, 2, 3}) {
            final Partition partition = new Partition(seed);
            final List<FunnelQuery> queries = new ArrayList<>();
            final List<FunnelProgress> progress = new ArrayList<>();
            final List<String> shaped = new ArrayList<>();
            for (final String json : BlockFunnelTest.QUERIES) {
                final FunnelQuery query = FunnelQuery.parse(Json.mapper().readTree(json), ZoneId.of("Asia/Kolkata"), DayOfWeek.SUNDAY, null, NOW,
                        Optional::empty);
                if (query.progressShape().isPresent()) {
                    shaped.add(json);
                    queries.add(query);
                    progress.add(new FunnelProgress());
                }
            }
            assertThat(shaped).as("every funnel but those by person properties or groups").hasSize(BlockFunnelTest.QUERIES.size() - 3);
            for (int step = 0; step < 40; step++) {
                switch (partition.random.nextInt(8)) {
                    case 0, 1, 2 -> partition.arrive(1 + partition.random.nextInt(120));
                    case 3, 4 -> {
                        partition.arrive(1 + partition.random.nextInt(200));
                        partition.seal();
                    }
                    case 5 -> partition.merge(partition.people.get(partition.random.nextInt(partition.people.size())),
                            partition.people.get(partition.random.nextInt(partition.people.size())));
                    case 6 -> partition.expire();
                    default -> partition.reseal();
                }
                for (int q = 0; q < queries.size(); q++) {
                    final FunnelQuery query = queries.get(q);
                    final FunnelQuery.Partial kept = query.partial();
                    final List<FunnelProgress.UnsealedBlock> unsealed = partition.unsealed();
                    progress.get(q).read(query, partition.units(), unsealed, NO_PROPERTIES,
                            NOW, () -> { }, kept);
                    final JsonNode fresh = query.result(partition.fresh(query));
                    assertThat(query.result(kept)).as("seed %d, step %d, %s", seed, step, shaped.get(q)).isEqualTo(fresh);
                    // Asked again with nothing changed (the same tail block, as a kept tail gives): the same answer, and
                    // nobody evaluated again.
                    final FunnelQuery.Partial again = query.partial();
                    progress.get(q).read(query, partition.units(), unsealed, NO_PROPERTIES, NOW, () -> { }, again);
                    assertThat(query.result(again)).as("seed %d, step %d again, %s", seed, step, shaped.get(q)).isEqualTo(fresh);
                    assertThat(progress.get(q).lastRead().evaluated()).as("persons evaluated by a read with nothing changed").isZero();
                    assertThat(progress.get(q).lastRead().copiedTally()).as("the tally copied again with nothing changed").isFalse();
                }
            }
            assertThat(progress.get(0).keptPersons()).as("persons are kept").isPositive();
            assertThat(query0Steps(queries.get(0), partition)).as("somebody entered").containsPattern("\"count\":[1-9]");
        }
    }

    @Test
    void aNewcomersRowInTheTailLeavesTheKeptPersonsSumUncopied() throws IOException {
        final Partition partition = new Partition(11);
        partition.arrive(3 * PART_ROWS + 10);
        partition.seal();
        partition.arrive(10);
        final FunnelQuery query = BlockFunnelTest.QUERIES.stream().map(json -> parse(json)).filter(FunnelQuery::tallied).findFirst().orElseThrow();
        final FunnelProgress progress = new FunnelProgress();
        final FunnelQuery.Partial first = query.partial();
        progress.read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> { }, first);
        assertThat(progress.lastRead().copiedTally()).as("the first read sums the kept persons").isTrue();

        partition.filling.add(partition.row(new UUID(9, 9)));
        final FunnelQuery.Partial second = query.partial();
        progress.read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> { }, second);
        assertThat(query.result(second)).isEqualTo(query.result(partition.fresh(query)));
        assertThat(progress.lastRead().copiedTally()).as("a new tail row of a person with no kept row: the sum as it was").isFalse();
    }

    private static FunnelQuery parse(final String json) {
        try {
            return FunnelQuery.parse(Json.mapper().readTree(json), ZoneId.of("Asia/Kolkata"), DayOfWeek.SUNDAY, null, NOW, Optional::empty);
        } catch (final IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void personsGoOnFromTheirKeptEvaluationWithRowsInTimeOrderAndAreEvaluatedAgainOnlyForLateRowsAndMerges() throws IOException {
        for (final long seed : new long[] {4, 5}) {
            final Partition partition = new Partition(seed);
            partition.clock = TimelineEvent.micros(NOW) - 12L * 24 * 3600 * 1_000_000;
            final List<String> resumable = List.of(BlockFunnelTest.QUERIES.get(0), BlockFunnelTest.QUERIES.get(1), BlockFunnelTest.QUERIES.get(6),
                    BlockFunnelTest.QUERIES.get(9), "{" + STEPS + ",\"date_from\":\"-30d\",\"funnel_window_interval\":1,"
                            + "\"funnel_window_interval_unit\":\"hour\"}");
            final List<FunnelQuery> queries = new ArrayList<>();
            final List<FunnelProgress> progress = new ArrayList<>();
            for (final String json : resumable) {
                queries.add(FunnelQuery.parse(Json.mapper().readTree(json), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, NOW, Optional::empty));
                assertThat(queries.get(queries.size() - 1).run()).as(json).isPresent();
                progress.add(new FunnelProgress());
            }
            final int[] extended = new int[queries.size()];
            // Whether the block being filled has rows earlier than others before them (late ones, or moved by a merge).
            boolean mixed = false;
            for (int step = 0; step < 60; step++) {
                final int kind = partition.random.nextInt(10);
                partition.late = kind == 8;
                final boolean inOrder = kind < 7 && !mixed;
                mixed |= kind >= 7;
                switch (kind) {
                    case 0, 1, 2, 3, 4, 8 -> partition.arrive(1 + partition.random.nextInt(150));
                    case 5, 6 -> {
                        partition.arrive(1 + partition.random.nextInt(150));
                        partition.seal();
                    }
                    default -> partition.merge(partition.people.get(partition.random.nextInt(partition.people.size())),
                            partition.people.get(partition.random.nextInt(partition.people.size())));
                }
                for (int q = 0; q < queries.size(); q++) {
                    final FunnelQuery query = queries.get(q);
                    final FunnelQuery.Partial kept = query.partial();
                    progress.get(q).read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> { }, kept);
                    assertThat(query.result(kept)).as("seed %d, step %d, %s", seed, step, resumable.get(q))
                            .isEqualTo(query.result(partition.fresh(query)));
                    if (inOrder && step > 0) {
                        // Rows after every earlier one, a part made, a block sealed from its parts: nobody starts over.
                        assertThat(progress.get(q).lastRead().evaluated()).as("seed %d, step %d (kind %d): persons evaluated again, %s", seed, step,
                                kind, resumable.get(q)).isZero();
                    }
                    extended[q] += progress.get(q).lastRead().extended();
                }
                mixed &= kind != 5 && kind != 6;
            }
            for (int q = 0; q < queries.size(); q++) {
                assertThat(extended[q]).as("persons that went on, %s", resumable.get(q)).isGreaterThan(100);
            }
        }
    }

    private static String query0Steps(final FunnelQuery query, final Partition partition) {
        return query.result(partition.fresh(query)).toString();
    }

    @Test
    void aReadThatFailsPartWayForgetsWhatItKeptAndTheNextBuildsAgain() throws IOException {
        final Partition partition = new Partition(7);
        final FunnelQuery query = FunnelQuery.parse(Json.mapper().readTree(BlockFunnelTest.QUERIES.get(0)), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, NOW,
                Optional::empty);
        final FunnelProgress progress = new FunnelProgress();
        for (int b = 0; b < 4; b++) {
            partition.arrive(300);
            partition.seal();
        }
        partition.arrive(50);
        progress.read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> { },
                query.partial());
        assertThat(progress.keptPersons()).isPositive();

        // New blocks; the read is stopped after its second block (a cancelled query).
        partition.arrive(300);
        partition.seal();
        partition.merge(partition.people.get(0), partition.people.get(1));
        final AtomicInteger checks = new AtomicInteger();
        assertThatThrownBy(() -> progress.read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> {
                    if (checks.incrementAndGet() == 2) {
                        throw new IllegalStateException("cancelled");
                    }
                }, query.partial())).hasMessage("cancelled");
        assertThat(progress.keptPersons()).as("forgotten").isZero();

        // A block removed while a read uses it.
        final List<FunnelProgress.Unit> before = partition.units();
        partition.sealed.remove(partition.sealed.keySet().iterator().next());
        assertThatThrownBy(() -> progress.read(query, before, partition.unsealed(), NO_PROPERTIES, NOW, () -> { },
                query.partial())).isInstanceOf(EventBlock.Gone.class);

        final FunnelQuery.Partial again = query.partial();
        progress.read(query, partition.units(), partition.unsealed(), NO_PROPERTIES, NOW, () -> { },
                again);
        assertThat(query.result(again)).isEqualTo(query.result(partition.fresh(query)));
    }

    @Test
    void funnelsThatDependOnMoreThanTheirEventsKeepNothing() throws IOException {
        for (final String json : List.of(
                "{" + STEPS + ",\"breakdown\":\"plan\",\"breakdown_type\":\"person\"}",
                "{" + STEPS + ",\"aggregation_group_type_index\":0}",
                "{" + STEPS + ",\"properties\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}",
                "{\"events\":[{\"id\":\"a\",\"order\":0},{\"id\":\"b\",\"order\":1,\"properties\":[{\"key\":\"at\",\"value\":\"-1d\","
                        + "\"operator\":\"is_date_after\"}]}]}",
                "{" + STEPS + ",\"exclusions\":[{\"id\":\"x\",\"funnel_from_step\":0,\"funnel_to_step\":1,\"properties\":[{\"key\":\"industry\","
                        + "\"value\":\"tech\",\"type\":\"group\",\"group_type_index\":0}]}]}")) {
            assertThat(FunnelQuery.parse(Json.mapper().readTree(json), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, NOW, Optional::empty)
                    .progressShape()).as(json).isEmpty();
        }
        final String plain = "{" + STEPS + ",\"date_from\":\"-30d\"}";
        final Optional<String> shape = FunnelQuery.parse(Json.mapper().readTree(plain), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, NOW,
                Optional::empty).progressShape();
        final String open = plain.substring(0, plain.length() - 1);
        for (final String other : List.of(plain.replace("-30d", "-29d"), plain.replace("buy", "pay"), open + ",\"funnel_order_type\":\"strict\"}",
                open + ",\"funnel_window_interval\":3}", open + ",\"breakdown\":\"$browser\"}")) {
            assertThat(FunnelQuery.parse(Json.mapper().readTree(other), ZoneId.of("UTC"), DayOfWeek.SUNDAY, null, NOW, Optional::empty)
                    .progressShape()).as(other).isPresent().isNotEqualTo(shape);
        }
    }
}
