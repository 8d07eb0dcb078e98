package dev.eddy.gateway.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lookups of who may do what (a personal API key's owner and scopes, a project a user may see) kept in memory while
 * PostgreSQL tells this process of every change to them. A trigger on each table they read announces its changes on
 * the channel {@code eddy_access} when they commit (migration V5); this process listens on one connection of its own
 * and drops every kept lookup at each notice. So a revoked key, a removed member or a changed project is seen by the
 * next request on every gateway, as without keeping, while a dashboard's requests skip two database round trips each.
 *
 * <p>Lookups are kept only while the listening connection is up (and are dropped when it comes back, as notices sent
 * meanwhile are lost), and never for longer than {@link #MAX_AGE}: the bound if a connection dies unnoticed. A lookup
 * that raced a notice is not kept: each change moves a generation on, and a lookup begun in an earlier generation is
 * dropped.
 */
public final class AccessChanges implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AccessChanges.class);
    /** The channel the triggers announce on. */
    static final String CHANNEL = "eddy_access";
    /** Longest a kept lookup is trusted, whatever the notices say. */
    static final Duration MAX_AGE = Duration.ofSeconds(30);
    private static final long MAX_ENTRIES = 10_000;
    private static final long RECONNECT_MILLIS = 1_000;

    private final AtomicLong generation = new AtomicLong();
    private final List<Cache<?, ?>> caches = new CopyOnWriteArrayList<>();
    private final PgSubscriber subscriber;
    private volatile boolean listening;

    private AccessChanges(final PgSubscriber subscriber) {
        this.subscriber = subscriber;
    }

    /**
     * Starts listening on {@code connect}'s database; kept lookups are used once the first {@code LISTEN} is in place.
     * A failed first connection is retried every second, and lookups go to the database until it succeeds.
     */
    public static AccessChanges listen(final Vertx vertx, final PgConnectOptions connect, final MeterRegistry registry) {
        final PgSubscriber subscriber = PgSubscriber.subscriber(vertx, connect).reconnectPolicy(attempt -> RECONNECT_MILLIS);
        final AccessChanges changes = new AccessChanges(subscriber);
        Gauge.builder("eddy.access.listening", changes, c -> c.listening() ? 1 : 0)
                .description("1 while this gateway hears of changes of keys and projects and keeps their lookups").register(registry);
        Gauge.builder("eddy.access.kept", changes, AccessChanges::kept)
                .description("lookups of keys and projects kept now").register(registry);
        subscriber.channel(CHANNEL)
                .subscribeHandler(v -> changes.subscribed())
                .handler(table -> changes.changed())
                .endHandler(v -> changes.stopped());
        subscriber.closeHandler(v -> changes.stopped());
        changes.connect(vertx);
        return changes;
    }

    private void connect(final Vertx vertx) {
        subscriber.connect().onFailure(e -> {
            LOG.warn("cannot listen for changes of keys and projects ({}); looking them up at each request until it can", e.getMessage());
            if (!subscriber.closed()) {
                vertx.setTimer(RECONNECT_MILLIS, t -> connect(vertx));
            }
        });
    }

    /**
     * A cache of lookups kept under these notices.
     *
     * @param keep which answers to keep (a found key or project; an unknown one is looked up each time)
     */
    public <K, V> Kept<K, V> cache(final Predicate<V> keep) {
        final Cache<K, V> cache = Caffeine.newBuilder().maximumSize(MAX_ENTRIES).expireAfterWrite(MAX_AGE).build();
        caches.add(cache);
        return new Kept<>(cache, keep);
    }

    private double kept() {
        return caches.stream().mapToLong(Cache::estimatedSize).sum();
    }

    /** Whether kept lookups are used now: the listening connection is up. */
    public boolean listening() {
        return listening && subscriber.actualConnection() != null;
    }

    /**
     * A change this process just committed: its kept lookups are dropped now, so its next request sees the change
     * even before the change's notice arrives (other gateways drop theirs at the notice).
     */
    public void changedHere() {
        changed();
    }

    /** What a change does: every kept lookup is dropped, and lookups under way are not kept. */
    private void changed() {
        generation.incrementAndGet();
        caches.forEach(Cache::invalidateAll);
    }

    /** Listening again: notices may have been missed while not. */
    private void subscribed() {
        changed();
        listening = true;
        LOG.info("listening for changes of keys and projects: their lookups are kept between requests");
    }

    private void stopped() {
        listening = false;
        changed();
    }

    @Override
    public void close() {
        listening = false;
        subscriber.close();
    }

    /** Lookups of one kind, kept while {@link AccessChanges} listens. */
    public final class Kept<K, V> {
        private final Cache<K, V> cache;
        private final Predicate<V> keep;

        private Kept(final Cache<K, V> cache, final Predicate<V> keep) {
            this.cache = cache;
            this.keep = keep;
        }

        /** The kept answer for {@code key}, or {@code lookup}'s (kept if nothing changed while it ran). */
        public Future<V> get(final K key, final Supplier<Future<V>> lookup) {
            if (!listening()) {
                return lookup.get();
            }
            final V kept = cache.getIfPresent(key);
            if (kept != null) {
                return Future.succeededFuture(kept);
            }
            final long before = generation.get();
            return lookup.get().onSuccess(found -> {
                if (!keep.test(found) || generation.get() != before) {
                    return;
                }
                cache.put(key, found);
                // A change between the check and the put: its clearing may have run before the put.
                if (generation.get() != before) {
                    cache.invalidate(key);
                }
            });
        }
    }
}
