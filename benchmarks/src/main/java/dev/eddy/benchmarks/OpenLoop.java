package dev.eddy.benchmarks;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A fixed send schedule: slot {@code n} is due at {@code start + n / perSecond}, whatever happened to the slots
 * before it. A sender that falls behind (its thread descheduled, a collection) sends every slot it missed at once,
 * each still timed from its own due time, so a stall counts against every request it delayed instead of
 * disappearing from the latencies (no coordinated omission).
 *
 * @param startNanos when slot 0 is due ({@link System#nanoTime})
 */
record OpenLoop(long startNanos, double perSecond) {

    OpenLoop {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("an open loop needs a positive rate, not " + perSecond);
        }
    }

    /** What the loop does with a slot. */
    @FunctionalInterface
    interface Slot {
        void send(long n, long dueNanos);
    }

    /** When slot {@code n} is due. */
    long due(final long n) {
        return startNanos + Math.round(n * 1e9 / perSecond);
    }

    /** The first slot from {@code next} on that is not due at {@code nowNanos}: slots {@code next} to it are due. */
    long dueUntil(final long next, final long nowNanos) {
        long n = next;
        while (due(n) <= nowNanos) {
            n++;
        }
        return n;
    }

    /**
     * Sends the slots due before {@code endNanos}, each when it is due (or at once when late), until then or until
     * {@code stopped}; returns the number of slots sent.
     */
    long run(final long endNanos, final BooleanSupplier stopped, final Slot slot) {
        final long total = dueUntil(0, endNanos - 1);
        long next = 0;
        while (next < total && !stopped.getAsBoolean()) {
            final long now = System.nanoTime();
            final long until = Math.min(dueUntil(next, now), total);
            if (until == next) {
                LockSupport.parkNanos(Math.min(due(next) - now, 50_000_000L));
                continue;
            }
            for (; next < until && !stopped.getAsBoolean(); next++) {
                slot.send(next, due(next));
            }
        }
        return next;
    }
}
