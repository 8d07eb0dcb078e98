package dev.eddy.gateway.trends;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.StreamsApp;
import dev.eddy.trends.HourlyCount;
import dev.eddy.trends.HourlyCountQuery;
import dev.eddy.trends.HourlyEventKey;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Answers hourly event counts from the {@link StoreNames#TREND_ROLLUPS} stores by interactive query. Every
 * instance holds partial counts for its partitions; the answer is the sum over all of them, and a store that
 * is not ready (start-up, rebalance) is a 503 to retry, never a partial count.
 */
public final class EventCountService {
    private static final int RETRY_AFTER_SECONDS = 1;

    private final Vertx vertx;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<String> self;

    /**
     * @param streams the streams instance in this process, once started, if its role runs one
     * @param self    this instance's advertised {@code host:port}
     */
    public EventCountService(final Vertx vertx, final Supplier<Optional<StreamsApp>> streams, final Supplier<String> self) {
        this.vertx = vertx;
        this.streams = streams;
        this.self = self;
    }

    public Future<List<HourlyCount>> hourly(final HourlyCountQuery query) {
        final Optional<StreamsApp> local = streams.get();
        if (local.isEmpty()) {
            return Future.failedFuture(ApiError.unavailable("no_streams_instance",
                    "This process runs no streams instance to answer queries.", RETRY_AFTER_SECONDS));
        }
        final StreamsApp app = local.get();
        if (!app.isRunning()) {
            return Future.failedFuture(notReady());
        }
        for (final StreamsMetadata instance : app.instancesWith(StoreNames.TREND_ROLLUPS)) {
            final String address = instance.hostInfo().host() + ":" + instance.hostInfo().port();
            if (!address.equals(self.get())) {
                // Several instances share the partitions: until the scatter to their /internal routes exists,
                // answering from this one alone would be a silent partial count.
                return Future.failedFuture(ApiError.unavailable("partial_store",
                        "Counts are spread over several instances (" + address + "); cross-instance queries are not enabled.",
                        RETRY_AFTER_SECONDS));
            }
        }
        // RocksDB reads block: run them on a worker thread, not on the event loop.
        return vertx.executeBlocking(() -> {
            final ReadOnlyKeyValueStore<HourlyEventKey, Long> store = app
                    .localStore(StoreNames.TREND_ROLLUPS, QueryableStoreTypes.<HourlyEventKey, Long>keyValueStore())
                    .orElseThrow(EventCountService::notReady);
            try {
                return HourlyCountQuery.merge(List.of(query.run(store)));
            } catch (final InvalidStateStoreException e) {
                throw notReady();
            }
        }, false);
    }

    private static ApiError notReady() {
        return ApiError.unavailable("store_not_ready", "Event counts are being restored; retry shortly.", RETRY_AFTER_SECONDS);
    }
}
