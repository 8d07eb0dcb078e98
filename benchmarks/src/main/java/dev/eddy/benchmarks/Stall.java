package dev.eddy.benchmarks;

import java.time.Duration;
import java.util.Locale;

/**
 * Fails a benchmark loudly when what it waits for stops moving: a count that has not grown for {@code patience} ends
 * the run with where it stood, instead of the run waiting forever.
 */
final class Stall {
    private final String what;
    private final long total;
    private final long patienceNanos;
    private long last = -1;
    private long since = System.nanoTime();

    /**
     * @param what     what is counted, for the message
     * @param total    the count the run waits for
     * @param patience how long the count may stand still
     */
    Stall(final String what, final long total, final Duration patience) {
        this.what = what;
        this.total = total;
        this.patienceNanos = patience.toNanos();
    }

    /** Records the count now; throws if it has not grown for longer than the patience. */
    void saw(final long count) {
        final long now = System.nanoTime();
        if (count != last) {
            last = count;
            since = now;
        } else if (now - since > patienceNanos) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s stalled: %,d of %,d, unchanged for %d s", what, count,
                    total, Duration.ofNanos(now - since).toSeconds()));
        }
    }
}
