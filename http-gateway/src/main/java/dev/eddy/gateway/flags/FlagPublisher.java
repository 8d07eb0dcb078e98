package dev.eddy.gateway.flags;

import dev.eddy.gateway.capture.EventProducer;
import dev.eddy.serde.Json;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the compacted {@code flags.definitions} topic in step with PostgreSQL, which is the source of truth: each
 * change is published after its transaction committed (a tombstone for a deleted flag, and for the old key of a
 * renamed one), every live flag is published again at start-up, and a publish that failed is retried by
 * publishing everything again shortly after, so the topic converges whatever failed.
 */
public final class FlagPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(FlagPublisher.class);
    private static final long RETRY_MS = 5_000;

    private final Vertx vertx;
    private final EventProducer producer;
    private final String topic;
    private final FeatureFlagRepository flags;
    private final AtomicBoolean dirty = new AtomicBoolean(false);

    public FlagPublisher(final Vertx vertx, final EventProducer producer, final String topic, final FeatureFlagRepository flags) {
        this.vertx = vertx;
        this.producer = producer;
        this.topic = topic;
        this.flags = flags;
        vertx.setPeriodic(RETRY_MS, id -> {
            if (dirty.compareAndSet(true, false)) {
                republishAll();
            }
        });
    }

    static String key(final long projectId, final String flagKey) {
        return projectId + ":" + flagKey;
    }

    /** Publishes one change; never fails the caller (a failure schedules a full republish). */
    public Future<Void> published(final FeatureFlagRepository.Change change) {
        final List<EventProducer.Outgoing> records = new ArrayList<>();
        change.before().filter(b -> !b.key().equals(change.after().key()))
                .ifPresent(b -> records.add(new EventProducer.Outgoing(topic, key(b.projectId(), b.key()), null)));
        final FeatureFlag after = change.after();
        records.add(new EventProducer.Outgoing(topic, key(after.projectId(), after.key()),
                after.deleted() ? null : bytes(after)));
        return send(records);
    }

    /** Publishes every live flag (start-up, and after a failed publish). */
    public Future<Void> republishAll() {
        return flags.everyLive().compose(all -> send(all.stream()
                .map(f -> new EventProducer.Outgoing(topic, key(f.projectId(), f.key()), bytes(f))).toList()))
                .onSuccess(v -> LOG.info("published the definitions of every live feature flag"));
    }

    private Future<Void> send(final List<EventProducer.Outgoing> records) {
        final Context context = vertx.getOrCreateContext();
        return producer.send(context, records).recover(e -> {
            LOG.warn("feature flag definitions not published ({}); retrying in {} ms", e.toString(), RETRY_MS);
            dirty.set(true);
            return Future.succeededFuture();
        });
    }

    private static byte[] bytes(final FeatureFlag flag) {
        try {
            return Json.mapper().writeValueAsBytes(flag.definition());
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("a flag definition is always JSON", e);
        }
    }
}
