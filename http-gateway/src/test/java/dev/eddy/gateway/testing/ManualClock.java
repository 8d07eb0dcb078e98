package dev.eddy.gateway.testing;

import io.github.bucket4j.TimeMeter;
import java.time.Duration;

/** A bucket clock that only moves when a test says so. */
public final class ManualClock implements TimeMeter {
    private long nanos;

    public void advance(final Duration by) {
        nanos += by.toNanos();
    }

    @Override
    public long currentTimeNanos() {
        return nanos;
    }

    @Override
    public boolean isWallClockBased() {
        return false;
    }
}
