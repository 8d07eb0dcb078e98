package dev.eddy.trends;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Reads a project's hourly event counts out of the rollup store. Each partition keeps its own partial
 * counts for the events it processed, so the same key can come back once per local partition: the query
 * adds them, and answers from several instances add up the same way ({@link #merge}).
 *
 * @param projectId project to read
 * @param from      first hour included
 * @param to        last hour included
 * @param event     only this event name, when present
 */
public record HourlyCountQuery(long projectId, Instant from, Instant to, Optional<String> event) {

    private static final Comparator<HourlyCount> ORDER =
            Comparator.comparing(HourlyCount::hour).thenComparing(HourlyCount::event);

    public HourlyCountQuery {
        if (to.isBefore(from)) {
            throw new IllegalArgumentException("'to' is before 'from'");
        }
    }

    /** Runs the query over one store view (all the partitions this instance hosts). */
    public List<HourlyCount> run(final ReadOnlyKeyValueStore<HourlyEventKey, Long> store) {
        final long firstHour = HourlyEventKey.hourOf(from);
        final long lastHour = HourlyEventKey.hourOf(to);
        final Map<HourlyEventKey, Long> sums = new HashMap<>();
        HourlyCells.scan(store, projectId, event, firstHour, lastHour,
                (name, hour, count) -> sums.merge(new HourlyEventKey(projectId, hour, name), count, Long::sum));
        final List<HourlyCount> result = new ArrayList<>(sums.size());
        sums.forEach((key, count) -> result.add(new HourlyCount(key.event(), key.hourStart(), count)));
        result.sort(ORDER);
        return result;
    }

    /** Adds partial answers (from several instances) into one, ordered by hour then event name. */
    public static List<HourlyCount> merge(final List<List<HourlyCount>> partials) {
        final Map<String, Map<Instant, Long>> sums = new HashMap<>();
        for (final List<HourlyCount> partial : partials) {
            for (final HourlyCount c : partial) {
                sums.computeIfAbsent(c.event(), e -> new HashMap<>()).merge(c.hour(), c.count(), Long::sum);
            }
        }
        final List<HourlyCount> merged = new ArrayList<>();
        sums.forEach((event, byHour) -> byHour.forEach((hour, count) -> merged.add(new HourlyCount(event, hour, count))));
        merged.sort(ORDER);
        return merged;
    }
}
