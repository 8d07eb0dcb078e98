package dev.eddy.gateway.trends;

import dev.eddy.gateway.streams.LocalStores;
import dev.eddy.stores.StoreNames;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import dev.eddy.trends.HourlyEventKey;
import io.vertx.core.Future;
import java.util.List;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Answers hourly event counts from the {@link StoreNames#HOURLY_COUNTS} stores by interactive query. Every
 * instance holds partial counts for its partitions; the answer is the sum over all of them.
 */
public final class EventCountService {
    private final LocalStores stores;

    public EventCountService(final LocalStores stores) {
        this.stores = stores;
    }

    public Future<List<HourlyCount>> hourly(final HourlyCountQuery query) {
        return stores.query(StoreNames.HOURLY_COUNTS, QueryableStoreTypes.<HourlyEventKey, Long>keyValueStore(), false,
                (ReadOnlyKeyValueStore<HourlyEventKey, Long> store) -> HourlyCountQuery.merge(List.of(query.run(store))));
    }
}
