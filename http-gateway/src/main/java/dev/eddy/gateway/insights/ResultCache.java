package dev.eddy.gateway.insights;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.eddy.config.InsightsConfig;
import dev.eddy.gateway.auth.Secrets;
import java.time.Clock;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Calculated results of saved insights, in memory on this gateway: bounded in count (least recently used dropped
 * first) and in age ({@code insights.cache.*}). The first tier of the cache: a miss asks the results every gateway
 * shares ({@link SharedResults}) before calculating.
 */
final class ResultCache {
    /**
     * What a result depends on besides the project's data: the insight and what it asks for, its dashboard
     * overrides included ({@code definition}, the kind and legacy filter as JSON).
     */
    record Key(long projectId, Long insightId, String definition) {
        /** The key as one name (SHA-256, hex): PostHog's {@code cache_key} and the shared results' row. */
        String digest() {
            return HexFormat.of().formatHex(Secrets.sha256(projectId + "/" + insightId + "/" + definition));
        }
    }

    /**
     * @param settings the project's calendar and test account filters when it was calculated: a result of other
     *                 settings is not the insight's any more
     */
    record Entry(JsonNode result, Instant lastRefresh, String settings) {
    }

    private final Cache<Key, Entry> entries;

    ResultCache(final InsightsConfig.Cache config, final Clock clock) {
        this.entries = Caffeine.newBuilder()
                .maximumSize(config.maxEntries())
                .expireAfterWrite(config.expireAfter().toNanos(), TimeUnit.NANOSECONDS)
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis()))
                .build();
    }

    /** @param settings the project's settings now; empty accepts a result of any (a public viewer has none to compare) */
    Optional<Entry> get(final Key key, final Optional<String> settings) {
        final Entry entry = entries.getIfPresent(key);
        return entry == null || settings.isPresent() && !settings.get().equals(entry.settings()) ? Optional.empty() : Optional.of(entry);
    }

    void put(final Key key, final Entry entry) {
        entries.asMap().merge(key, entry, (old, fresh) -> fresh.lastRefresh().isBefore(old.lastRefresh()) ? old : fresh);
    }
}
