package dev.eddy.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.trends.BlockFilter;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.trends.PropertyFilter;
import java.io.IOException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The scan behind a filtered, broken-down trend, on today's storage against event blocks ({@link EventBlock}), over
 * the same events in one process on one thread: {@code $pageview} where {@code $browser} is not Safari, counted per
 * UTC day and {@code $current_url} (bench-insights' second query). Today every stored event is a {@link TimelineEvent}
 * whose properties are parsed as JSON for the filter; a block answers from its event, browser and URL columns, the
 * filter decided once per distinct browser ({@link BlockFilter}). Both answers must be equal (else exit 1). Prints p50 and p90 per scan, nanoseconds per
 * event, the ratio block / timeline, and bytes per stored event of each.
 *
 * <p>{@code --extra-properties N} adds N properties to every event, as posthog-js sends about 40 (library, screen,
 * referrer, session and UTM fields), which today's scan parses and a block's leaves unread.
 */
public final class BlockScanBenchmark {
    private static final int BLOCK_ROWS = 16_384;
    private static final String EVENT = "$pageview";

    private BlockScanBenchmark() {
    }

    public static void main(final String[] argv) throws IOException {
        final Map<String, String> args = BenchArgs.parse(argv);
        final int count = Integer.parseInt(args.getOrDefault("events", "1000000"));
        final int persons = Integer.parseInt(args.getOrDefault("persons", "50000"));
        final int extra = Integer.parseInt(args.getOrDefault("extra-properties", "0"));
        final int repeats = Integer.parseInt(args.getOrDefault("repeats", "10"));
        final InsightsEvents events = new InsightsEvents(count, persons, 30, LocalDate.now(ZoneOffset.UTC).minusDays(1), 42);
        final PropertyFilter filter = PropertyFilter.parse(Json.mapper().readTree(
                "[{\"key\":\"$browser\",\"value\":\"Safari\",\"operator\":\"is_not\",\"type\":\"event\"}]"));

        final long started = System.nanoTime();
        final List<byte[]> timeline = new ArrayList<>(count);
        final List<byte[]> blocks = new ArrayList<>();
        EventBlock.Builder builder = new EventBlock.Builder();
        for (int i = 0; i < count; i++) {
            final ObjectNode properties = properties(events, i, extra);
            final UUID person = UUID.nameUUIDFromBytes(("person-" + events.person[i]).getBytes());
            timeline.add(new TimelineEvent(events.millis[i] * 1000, events.uuid(i), InsightsEvents.NAMES[events.name[i]],
                    events.distinctId(i), Map.of(), Json.mapper().writeValueAsBytes(properties)).encode());
            builder.add(new EventBlock.Row(events.millis[i] * 1000, events.uuid(i), person, events.distinctId(i),
                    InsightsEvents.NAMES[events.name[i]], properties));
            if (builder.size() == BLOCK_ROWS) {
                blocks.add(builder.build().encode());
                builder = new EventBlock.Builder();
            }
        }
        if (builder.size() > 0) {
            blocks.add(builder.build().encode());
        }
        final long timelineBytes = timeline.stream().mapToLong(b -> b.length).sum();
        final long blockBytes = blocks.stream().mapToLong(b -> b.length).sum();
        System.out.printf("%,d events (%d extra properties each), encoded both ways in %.1f s; %d blocks of up to %,d rows%n",
                count, extra, (System.nanoTime() - started) / 1e9, blocks.size(), BLOCK_ROWS);

        final Map<String, Long> expected = timelineScan(timeline, filter);
        final Map<String, Long> fromBlocks = blockScan(blocks, filter);
        if (!expected.equals(fromBlocks)) {
            System.out.println("MISMATCH: the block scan counted " + fromBlocks + ", the timeline scan " + expected);
            System.exit(1);
        }
        System.out.printf("answers equal: %,d matching events in %d (day, URL) cells%n",
                expected.values().stream().mapToLong(Long::longValue).sum(), expected.size());

        final long[] timelineNanos = new long[repeats];
        final long[] blockNanos = new long[repeats];
        for (int r = -2; r < repeats; r++) {
            // Alternating, after two warm-up rounds.
            long t = System.nanoTime();
            timelineScan(timeline, filter);
            final long timelineTook = System.nanoTime() - t;
            t = System.nanoTime();
            blockScan(blocks, filter);
            final long blockTook = System.nanoTime() - t;
            if (r >= 0) {
                timelineNanos[r] = timelineTook;
                blockNanos[r] = blockTook;
            }
        }
        Arrays.sort(timelineNanos);
        Arrays.sort(blockNanos);
        System.out.printf("%-22s %10s %10s %12s %14s%n", "scan", "p50", "p90", "ns / event", "bytes / event");
        row("timeline (today)", timelineNanos, count, timelineBytes);
        row("event blocks", blockNanos, count, blockBytes);
        System.out.printf("ratio blocks / timeline: time %.3f, bytes %.3f%n", (double) p(blockNanos, 50) / p(timelineNanos, 50),
                (double) blockBytes / timelineBytes);
    }

    private static void row(final String name, final long[] nanos, final int count, final long bytes) {
        System.out.printf("%-22s %7.1f ms %7.1f ms %12.1f %14.1f%n", name, p(nanos, 50) / 1e6, p(nanos, 90) / 1e6,
                (double) p(nanos, 50) / count, (double) bytes / count);
    }

    private static long p(final long[] sorted, final int percentile) {
        return sorted[Math.min(sorted.length - 1, sorted.length * percentile / 100)];
    }

    /** Today: decode each stored event, parse its properties, filter, break down. */
    private static Map<String, Long> timelineScan(final List<byte[]> timeline, final PropertyFilter filter) throws IOException {
        final Map<String, Long> counts = new HashMap<>();
        final Instant now = Instant.now();
        for (final byte[] stored : timeline) {
            final TimelineEvent event = TimelineEvent.decode(stored);
            if (!EVENT.equals(event.event())) {
                continue;
            }
            final JsonNode properties = Json.mapper().readTree(event.properties());
            if (!filter.test(PropertyFilter.Source.ofEvent(properties), now)) {
                continue;
            }
            final JsonNode url = properties.get("$current_url");
            counts.merge(day(event.timeMicros()) + " " + (url == null ? null : url.asText()), 1L, Long::sum);
        }
        return counts;
    }

    /** Blocks: the event column's code, the filter on the columns, the breakdown's code; texts once per block. */
    private static Map<String, Long> blockScan(final List<byte[]> blocks, final PropertyFilter filter) {
        final Map<String, Long> counts = new HashMap<>();
        final Instant now = Instant.now();
        for (final byte[] stored : blocks) {
            final EventBlock block = EventBlock.decode(stored);
            final int event = block.events().codeOf(EVENT);
            if (event < 0) {
                continue;
            }
            final EventBlock.Column events = block.events();
            final EventBlock.Column urls = block.property("$current_url");
            final BlockFilter rows = BlockFilter.of(block, filter, NO_OTHERS, now);
            final Map<Long, long[]> perDay = new TreeMap<>();
            for (int r = 0; r < block.rows(); r++) {
                if (events.code(r) != event || !rows.test(r)) {
                    continue;
                }
                perDay.computeIfAbsent(block.timeMicros(r) / 86_400_000_000L, d -> new long[urls.size()])[urls.code(r)]++;
            }
            perDay.forEach((dayNumber, byUrl) -> {
                for (int c = 0; c < byUrl.length; c++) {
                    if (byUrl[c] > 0) {
                        final JsonNode url = urls.entry(c);
                        counts.merge(LocalDate.ofEpochDay(dayNumber) + " " + (url == null ? null : url.asText()), byUrl[c], Long::sum);
                    }
                }
            });
        }
        return counts;
    }

    private static String day(final long micros) {
        return LocalDate.ofEpochDay(Math.floorDiv(micros, 86_400_000_000L)).toString();
    }

    /** The bench-insights event's properties, and {@code extra} more of the kinds posthog-js sends. */
    private static ObjectNode properties(final InsightsEvents events, final int i, final int extra) {
        final ObjectNode p = Json.mapper().createObjectNode().put("$os", InsightsEvents.OSES[events.os[i]]);
        if (events.browser[i] != InsightsEvents.MISSING) {
            p.put("$browser", InsightsEvents.BROWSERS[events.browser[i]]);
        }
        if (events.url[i] != InsightsEvents.MISSING) {
            p.put("$current_url", InsightsEvents.URLS[events.url[i]]);
        }
        for (int k = 0; k < extra; k++) {
            // Low-cardinality fields (library, screen, referrer) and per-session ones, as a browser sends them.
            switch (k % 4) {
                case 0 -> p.put("$lib_field_" + k, "web-" + (k % 3));
                case 1 -> p.put("$screen_field_" + k, 1000 + (events.person[i] + k) % 7 * 128);
                case 2 -> p.put("$session_field_" + k, "s-" + events.person[i] + "-" + (i / 50));
                default -> p.put("$flag_field_" + k, (events.person[i] + k) % 2 == 0);
            }
        }
        return p;
    }

    private static final PropertyFilter.Source NO_OTHERS = PropertyFilter.Source.ofEvent(Json.mapper().createObjectNode());
}
