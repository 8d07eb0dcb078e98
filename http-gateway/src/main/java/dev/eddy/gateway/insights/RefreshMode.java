package dev.eddy.gateway.insights;

import dev.eddy.gateway.http.ApiError;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * PostHog's {@code refresh} parameter of the insights API (its query runner's execution modes): whether reading an
 * insight may calculate it, how eagerly, and whether the answer waits for the calculation.
 */
public enum RefreshMode {
    /** Cached result or a cache miss; never calculates. The default. */
    FORCE_CACHE("force_cache"),
    /** Calculates while the request waits, unless a fresh result is cached. */
    BLOCKING("blocking"),
    /** Starts a background calculation and answers at once, unless a fresh result is cached. */
    ASYNC("async"),
    /** Starts a background calculation unless a somewhat fresh result (the lazy thresholds) is cached. */
    LAZY_ASYNC("lazy_async"),
    /** Calculates while the request waits, even if a fresh result is cached. */
    FORCE_BLOCKING("force_blocking"),
    /** Starts a background calculation even if a fresh result is cached. */
    FORCE_ASYNC("force_async"),
    /** As {@link #ASYNC} when a stale result is cached, as {@link #BLOCKING} when nothing is. */
    ASYNC_EXCEPT_ON_CACHE_MISS("async_except_on_cache_miss");

    private final String value;

    RefreshMode(final String value) {
        this.value = value;
    }

    public String value() {
        return value;
    }

    /**
     * The mode a {@code refresh} query parameter asks for. Absent is {@code force_cache}; PostHog's legacy boolean
     * {@code refresh=true} is {@code force_blocking} and {@code false} is {@code force_cache}. Where PostHog quietly
     * falls back to {@code force_cache} on an unknown value, Eddy answers 400: a typo would otherwise read as "no data".
     */
    public static RefreshMode parse(final String raw) {
        if (raw == null || raw.isBlank()) {
            return FORCE_CACHE;
        }
        final String text = raw.trim().toLowerCase(Locale.ROOT);
        switch (text) {
            case "true", "1" -> {
                return FORCE_BLOCKING;
            }
            case "false", "0" -> {
                return FORCE_CACHE;
            }
            default -> {
                for (final RefreshMode mode : values()) {
                    if (mode.value.equals(text)) {
                        return mode;
                    }
                }
                throw ApiError.badRequest("invalid_input", "'refresh' must be one of "
                        + Arrays.stream(values()).map(RefreshMode::value).collect(Collectors.joining(", ")) + ".", "refresh");
            }
        }
    }
}
