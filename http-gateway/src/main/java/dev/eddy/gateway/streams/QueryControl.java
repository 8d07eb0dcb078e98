package dev.eddy.gateway.streams;

import dev.eddy.gateway.http.ApiError;
import java.time.Duration;

/**
 * The limits of one insight calculation: a deadline, and a flag another request can raise to cancel it. Scans
 * {@link #check} between events, so a long query stops within a few thousand events of either.
 */
public final class QueryControl {
    private final long deadlineNanos;
    private final Duration limit;
    private volatile boolean cancelled;

    private QueryControl(final Duration limit) {
        this.limit = limit;
        this.deadlineNanos = System.nanoTime() + limit.toNanos();
    }

    /** A calculation that may run for {@code limit} from now. */
    public static QueryControl within(final Duration limit) {
        if (limit.isNegative() || limit.isZero()) {
            throw new IllegalArgumentException("a query's time limit must be positive");
        }
        return new QueryControl(limit);
    }

    public void cancel() {
        cancelled = true;
    }

    public boolean isCancelled() {
        return cancelled;
    }

    /** Time left before the deadline; zero or negative once it has passed. */
    public Duration remaining() {
        return Duration.ofNanos(deadlineNanos - System.nanoTime());
    }

    /**
     * @throws ApiError 409 once cancelled, 504 once past the deadline
     */
    public void check() {
        if (cancelled) {
            throw ApiError.cancelled("The calculation was cancelled.");
        }
        if (System.nanoTime() - deadlineNanos > 0) {
            throw ApiError.timeout("The query did not finish within its time limit of " + limit.toMillis() + " ms.");
        }
    }
}
