package dev.eddy.gateway.capture;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import dev.eddy.gateway.auth.AuthFailureLimiter;
import dev.eddy.gateway.projects.ProjectRepository;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;

/**
 * Resolves a project API key to its project for every ingestion request. Answers are cached: a known token is
 * looked up again in the background a minute after it was read (a reset token stops working within a minute
 * of use), and kept while that lookup fails, for up to a day, so ingestion and flags keep working through a
 * PostgreSQL outage; unknown tokens are cached briefly (a stream of bad tokens does not reach the database, yet
 * a new project is usable within seconds).
 */
public final class ProjectTokens {
    private static final Duration REFRESH_AFTER = Duration.ofMinutes(1);
    private static final Duration KNOWN_TTL = Duration.ofDays(1);
    private static final Duration UNKNOWN_TTL = Duration.ofSeconds(5);
    private static final long MAX_ENTRIES = 100_000;
    /** Longest project API key PostHog accepts. */
    static final int MAX_TOKEN_LENGTH = 64;

    private final AsyncLoadingCache<String, Optional<Long>> cache;

    /** @param lookup finds the project of a token in the database ({@link ProjectRepository#idForToken}) */
    public ProjectTokens(final Function<String, Future<Optional<Long>>> lookup) {
        this(lookup, Ticker.systemTicker(), ForkJoinPool.commonPool());
    }

    /** With the clock and the executor of the background lookups given (tests). */
    ProjectTokens(final Function<String, Future<Optional<Long>>> lookup, final Ticker ticker, final Executor background) {
        this.cache = Caffeine.newBuilder()
                .ticker(ticker)
                .executor(background)
                .maximumSize(MAX_ENTRIES)
                .expireAfter(Expiry.<String, Optional<Long>>writing((token, project) ->
                        project.isPresent() ? KNOWN_TTL : UNKNOWN_TTL))
                .refreshAfterWrite(REFRESH_AFTER)
                .buildAsync((token, executor) -> lookup.apply(token).toCompletionStage().toCompletableFuture());
    }

    /** The project of {@code token}, or empty when no project has it; completes on {@code context}. */
    public Future<Optional<Long>> projectOf(final String token, final Context context) {
        if (!wellFormed(token)) {
            // No project has it, and PostgreSQL must not see it: a NUL byte fails the query, which read as an outage.
            return Future.succeededFuture(Optional.empty());
        }
        final java.util.concurrent.CompletableFuture<Optional<Long>> project = cache.get(token);
        if (project.isDone()) {
            // Nearly every call: answered at once, without a trip through the context's task queue.
            try {
                return Future.succeededFuture(project.join());
            } catch (final java.util.concurrent.CompletionException e) {
                return Future.failedFuture(e.getCause());
            }
        }
        return Future.fromCompletionStage(project, context);
    }

    /**
     * The project of {@code token} sent from {@code address}, for a public route: a well-formed token no project has
     * counts as a failed authentication of the address. An address that failed too often gets the 429 of {@code failures} for every
     * token not already known to be valid, before any lookup; a valid token is never held back, so capture stays
     * loss-free even when every client shares a proxy's address.
     */
    public Future<Optional<Long>> authenticate(final String token, final String address, final AuthFailureLimiter failures,
                                               final Context context) {
        if (failures.blocked(address)) {
            final java.util.concurrent.CompletableFuture<Optional<Long>> known = wellFormed(token) ? cache.getIfPresent(token) : null;
            final boolean valid = known != null && known.isDone() && !known.isCompletedExceptionally() && known.join().isPresent();
            return valid ? Future.succeededFuture(known.join()) : Future.failedFuture(failures.throttled());
        }
        return projectOf(token, context).onSuccess(project -> {
            // A token no project can have is refused without a lookup: no guess, no load, not counted.
            if (project.isEmpty() && wellFormed(token)) {
                failures.failed(address);
            }
        });
    }

    /** PostHog's token rules: non-empty, at most 64 ASCII characters, no NUL, not a personal key ({@code phx_}). */
    static boolean wellFormed(final String token) {
        return !token.isEmpty()
                && token.length() <= MAX_TOKEN_LENGTH
                && token.chars().allMatch(c -> c > 0 && c < 128)
                && !token.startsWith("phx_");
    }
}
