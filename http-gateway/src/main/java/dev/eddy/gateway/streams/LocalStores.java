package dev.eddy.gateway.streams;

import dev.eddy.gateway.http.ApiError;
import dev.eddy.topology.StreamsApp;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreType;

/**
 * Interactive queries against the state stores of the streams instance in this process. A query runs on a worker
 * thread (RocksDB reads block); a store that is not ready (start-up, rebalance) is a 503 to retry, never a
 * partial or wrong answer. While queries are not yet routed between instances, a store whose partitions are
 * spread over several instances is a 503 too.
 */
public final class LocalStores {
    private static final int RETRY_AFTER_SECONDS = 1;

    private final Vertx vertx;
    private final Supplier<Optional<StreamsApp>> streams;
    private final Supplier<String> self;

    /**
     * @param streams the streams instance in this process, once started, if its role runs one
     * @param self    this instance's advertised {@code host:port}
     */
    public LocalStores(final Vertx vertx, final Supplier<Optional<StreamsApp>> streams, final Supplier<String> self) {
        this.vertx = vertx;
        this.streams = streams;
        this.self = self;
    }

    /**
     * Runs {@code query} over every local partition of {@code storeName}.
     *
     * @param global whether the store is a global store (every instance has all of it)
     */
    public <S, T> Future<T> query(final String storeName, final QueryableStoreType<S> type, final boolean global,
                                  final Function<S, T> query) {
        return readAll(global ? java.util.List.of() : java.util.List.of(storeName), reader -> query.apply(reader.store(storeName, type)));
    }

    /** Reads any store of the local instance inside one blocking call ({@link #readAll}). */
    public interface Reader {
        <S> S store(String storeName, QueryableStoreType<S> type);
    }

    /**
     * Runs {@code query} on a worker thread with access to several stores at once: one thread hop however many
     * stores it reads. {@code partitioned} names the non-global stores it reads, checked like {@link #query}'s.
     */
    public <T> Future<T> readAll(final java.util.List<String> partitioned, final Function<Reader, T> query) {
        final Optional<StreamsApp> local = streams.get();
        if (local.isEmpty()) {
            return Future.failedFuture(ApiError.unavailable("no_streams_instance",
                    "This process runs no streams instance to answer queries.", RETRY_AFTER_SECONDS));
        }
        final StreamsApp app = local.get();
        if (!app.isQueryable()) {
            return Future.failedFuture(notReady());
        }
        for (final String storeName : partitioned) {
            for (final StreamsMetadata instance : app.instancesWith(storeName)) {
                final String address = instance.hostInfo().host() + ":" + instance.hostInfo().port();
                if (!address.equals(self.get())) {
                    return Future.failedFuture(ApiError.unavailable("partial_store",
                            "The data is spread over several instances (" + address + "); cross-instance queries are not enabled.",
                            RETRY_AFTER_SECONDS));
                }
            }
        }
        final Reader reader = new Reader() {
            @Override
            public <S> S store(final String storeName, final QueryableStoreType<S> type) {
                return app.localStore(storeName, type).orElseThrow(LocalStores::notReady);
            }
        };
        final Callable<T> blocking = () -> {
            try {
                return query.apply(reader);
            } catch (final InvalidStateStoreException e) {
                throw notReady();
            }
        };
        return vertx.executeBlocking(blocking, false);
    }

    private static ApiError notReady() {
        return ApiError.unavailable("store_not_ready", "The stores are being restored; retry shortly.", RETRY_AFTER_SECONDS);
    }
}
