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

    private final Scatter scatter;
    private final Duration timeout;

    /**
     * Registers the counts' partial with {@code scatter} (one service per scatter).
     *
     * @param timeout how long counting may take across the instances, rebalances included
     */
    public EventCountService(final Scatter scatter, final Duration timeout) {
        this.scatter = scatter;
        this.timeout = timeout;
        scatter.register(KIND, new HourlyCountRead());
    }

    public Future<List<HourlyCount>> hourly(final HourlyCountQuery query) {
        return scatter.gather(KIND, HourlyCountRead.request(query), QueryControl.within(timeout));
    }
}
