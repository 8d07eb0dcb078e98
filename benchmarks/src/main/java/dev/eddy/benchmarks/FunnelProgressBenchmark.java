package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.columns.BlockKeys;
import dev.eddy.columns.EventBlock;
import dev.eddy.funnels.FunnelProgress;
import dev.eddy.funnels.FunnelQuery;
import dev.eddy.serde.Json;
import dev.eddy.trends.PropertyLookup;
import java.io.IOException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * One partition's funnel tile, in one process on one thread: bench-insights' ordered funnel ($pageview → signup →
 * purchase, 14 days, over its 30 days) on that benchmark's events of one partition's share (by default 10M events
 * and 500,000 persons over 12 partitions), kept between reads ({@link FunnelProgress}) against evaluating every person
 * from the sealed blocks afresh (what a funnel asked once does; the baseline). Prints p50 of: the fresh evaluation;
 * the first read with a progress (a tile's first refresh, which builds it); a read with nothing new; and a read after
 * a block of events newer than all others was sealed (a live tile's refresh); each also as a ratio to the fresh
 * evaluation in this run. Then what the progress takes on the heap per person: as it weighs itself for the answer
 * cache, and as measured (the heap after collections, with and without it). Last, the fresh evaluation over blocks
 * decoded from their stored bytes each time (a funnel asked once over blocks the block cache does not hold), and what
 * a block decoded for the funnel weighs in that cache. Every answer must equal the fresh evaluation's (else exit 1).
 */
public final class FunnelProgressBenchmark {
    private static final long PROJECT = 1;

    private FunnelProgressBenchmark() {
    }

    public static void main(final String[] argv) throws IOException {
        final Map<String, String> args = BenchArgs.parse(argv);
        final int partitions = Integer.parseInt(args.getOrDefault("partitions", "12"));
        final int count = Integer.parseInt(args.getOrDefault("events", "10000000")) / partitions;
        final int persons = Integer.parseInt(args.getOrDefault("persons", "500000")) / partitions;
        final int repeats = Integer.parseInt(args.getOrDefault("repeats", "10"));
        final int live = Integer.parseInt(args.getOrDefault("live-blocks", "10"));
        final LocalDate lastDay = LocalDate.now(ZoneOffset.UTC).minusDays(1);
        // One partition's share, and after it the events of the live refreshes (the same distributions, later times).
        final InsightsEvents events = new InsightsEvents(count + live * BlockKeys.ROWS, persons, 30, lastDay, 42);
        final int stored = count / BlockKeys.ROWS * BlockKeys.ROWS;
        final List<EventBlock> blocks = new ArrayList<>();
        for (int from = 0; from < stored + live * BlockKeys.ROWS; from += BlockKeys.ROWS) {
            blocks.add(block(events, from, from + BlockKeys.ROWS));
        }
        final Instant now = lastDay.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
        final JsonNode json = Json.mapper().readTree("{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"$pageview\",\"order\":0},"
                + "{\"id\":\"signup\",\"order\":1},{\"id\":\"purchase\",\"order\":2}],\"funnel_window_interval\":14,"
                + "\"funnel_window_interval_unit\":\"day\",\"date_from\":\"" + events.firstDay + "\",\"date_to\":\"" + lastDay + "\"}");
        final FunnelQuery query = FunnelQuery.parse(json, ZoneOffset.UTC, DayOfWeek.SUNDAY, null, now, Optional::empty);
        final PropertyLookup none = PropertyLookup.of(person -> Json.mapper().createObjectNode(), (type, key) -> Json.mapper().createObjectNode());
        final int sealed = stored / BlockKeys.ROWS;
        System.out.printf("one partition of %d: %,d events of %,d persons in %d sealed blocks of %,d rows; %d more blocks for live reads%n",
                partitions, stored, persons, sealed, BlockKeys.ROWS, live);

        final Supplier<JsonNode> fresh = () -> fresh(query, blocks.subList(0, sealed), none, now);
        final JsonNode expected = fresh.get();
        final double freshMs = p50(repeats, () -> check(fresh.get(), expected, "fresh"));
        final double buildMs = p50(Math.min(repeats, 5), () -> {
            final FunnelProgress progress = new FunnelProgress();
            check(read(progress, query, units(blocks, sealed), none, now), expected, "first read");
        });

        final FunnelProgress progress = new FunnelProgress();
        read(progress, query, units(blocks, sealed), none, now);
        final double againMs = p50(repeats, () -> check(read(progress, query, units(blocks, sealed), none, now), expected, "read again"));
        System.out.printf("%d live reads, each after a block of newer events was sealed%n", live);
        final double[] liveMs = new double[live];
        JsonNode answer = null;
        long evaluated = 0;
        for (int b = 0; b < live; b++) {
            final long started = System.nanoTime();
            answer = read(progress, query, units(blocks, sealed + b + 1), none, now);
            liveMs[b] = (System.nanoTime() - started) / 1e6;
            evaluated += progress.lastRead().evaluated();
        }
        if (live > 0) {
            check(answer, fresh(query, blocks, none, now), "after blocks sealed");
        }
        System.out.printf("fresh evaluation (baseline)          p50 %8.2f ms%n", freshMs);
        System.out.printf("first read, building the progress    p50 %8.2f ms  ratio %.2f%n", buildMs, buildMs / freshMs);
        System.out.printf("read again, nothing new              p50 %8.2f ms  ratio %.3f%n", againMs, againMs / freshMs);
        if (live > 0) {
            final double liveP50 = median(liveMs);
            System.out.printf("read after %,d newer events sealed   p50 %8.2f ms  ratio %.3f; %,.0f of %,d kept persons evaluated a read%n",
                    BlockKeys.ROWS, liveP50, liveP50 / freshMs, (double) evaluated / live, progress.keptPersons());
        }

        // The heap after collections, without and with one more progress built (held until measured).
        final long without = usedAfterGc();
        final FunnelProgress measured = new FunnelProgress();
        read(measured, query, units(blocks, sealed), none, now);
        final long with = usedAfterGc();
        java.lang.ref.Reference.reachabilityFence(measured);
        System.out.printf("progress on the heap: weighed %,d bytes (%.0f a person), measured %,d bytes (%.0f a person)%n",
                measured.memoryBytes(), (double) measured.memoryBytes() / persons, with - without, (double) (with - without) / persons);

        final List<byte[]> encoded = blocks.subList(0, sealed).stream().map(EventBlock::encode).toList();
        final double decodedMs = p50(repeats, () -> check(fresh(query, encoded.stream().map(EventBlock::decode).toList(), none, now), expected,
                "decoded"));
        final List<EventBlock> decoded = encoded.stream().map(EventBlock::decode).toList();
        check(fresh(query, decoded, none, now), expected, "decoded");
        final double weight = decoded.stream().mapToLong(EventBlock::memoryBytes).average().orElse(0);
        System.out.printf("fresh evaluation, blocks decoded     p50 %8.2f ms  ratio %.2f; a block decoded for it weighs %,.0f bytes (%.1f a row)%n",
                decodedMs, decodedMs / freshMs, weight, weight / BlockKeys.ROWS);
    }

    private static EventBlock block(final InsightsEvents events, final int from, final int to) {
        final EventBlock.Builder builder = new EventBlock.Builder();
        for (int i = from; i < to; i++) {
            builder.add(new EventBlock.Row(events.millis[i] * 1000, events.uuid(i), UUID.nameUUIDFromBytes(("person-" + events.person[i]).getBytes()),
                    events.distinctId(i), InsightsEvents.NAMES[events.name[i]], Map.of(), Json.mapper().createObjectNode()));
        }
        return builder.build();
    }

    private static List<FunnelProgress.Unit> units(final List<EventBlock> blocks, final int sealed) {
        final List<FunnelProgress.Unit> units = new ArrayList<>(sealed);
        for (int b = 0; b < sealed; b++) {
            final EventBlock block = blocks.get(b);
            units.add(FunnelProgress.Unit.sealed(PROJECT, b, new BlockKeys.Sealed(b + 1, block.firstMicros(), block.lastMicros()), new BitSet(),
                    (project, number, entry) -> blocks.get((int) number)));
        }
        return units;
    }

    private static JsonNode read(final FunnelProgress progress, final FunnelQuery query, final List<FunnelProgress.Unit> units,
                                 final PropertyLookup properties, final Instant now) {
        final FunnelQuery.Partial partial = query.partial();
        progress.read(query, units, List.of(), properties, now, () -> { }, partial);
        return query.result(partial);
    }

    private static JsonNode fresh(final FunnelQuery query, final List<EventBlock> blocks, final PropertyLookup properties, final Instant now) {
        final FunnelQuery.BlockRowsCollector collector = query.collector(properties, now);
        blocks.forEach(b -> collector.add(b, new BitSet()));
        final FunnelQuery.Partial partial = query.partial();
        collector.finish(partial);
        return query.result(partial);
    }

    private static void check(final JsonNode answer, final JsonNode expected, final String what) {
        if (!answer.equals(expected)) {
            System.out.println("MISMATCH (" + what + "): " + answer + " against " + expected);
            System.exit(1);
        }
    }

    /** p50 of {@code repeats} timed runs after one untimed. */
    private static double p50(final int repeats, final Runnable run) {
        run.run();
        final double[] ms = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            final long started = System.nanoTime();
            run.run();
            ms[i] = (System.nanoTime() - started) / 1e6;
        }
        return median(ms);
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static long usedAfterGc() {
        final Runtime runtime = Runtime.getRuntime();
        for (int i = 0; i < 4; i++) {
            System.gc();
            try {
                Thread.sleep(100);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
