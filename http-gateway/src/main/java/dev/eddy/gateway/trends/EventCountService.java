package dev.eddy.gateway.trends;

import dev.eddy.gateway.streams.QueryControl;
import dev.eddy.gateway.streams.Scatter;
import dev.eddy.query.HourlyCountRead;
import dev.eddy.stores.StoreNames;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;

/**
 * Answers hourly event counts from the {@link StoreNames#HOURLY_COUNTS} stores: every instance sums its own
 * partitions' counts ({@link HourlyCountRead}), and the partials add up ({@link HourlyCountQuery#merge}).
 */
public final class EventCountService {
    private static final String KIND = "event-counts";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Scatter scatter;

    /** Registers the counts' partial with {@code scatter} (one service per scatter). */
    public EventCountService(final Scatter scatter) {
        this.scatter = scatter;
        scatter.register(KIND, new HourlyCountRead());
    }

    public Future<List<HourlyCount>> hourly(final HourlyCountQuery query) {
        return scatter.gather(KIND, HourlyCountRead.request(query), QueryControl.within(TIMEOUT));
    }
}
