package dev.eddy.gateway.importer;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The import's progress line: a bar of the file's records acknowledged, then records sent and acknowledged, events
 * visible in Eddy's counts (with a personal API key), the rate of the last seconds and the time left at it. On a
 * terminal the line is redrawn in place every second; otherwise (a log) a line is printed every ten seconds.
 */
final class Progress {
    private static final int BAR = 24;
    private static final long LOG_EVERY_NANOS = Duration.ofSeconds(10).toNanos();

    private final PrintStream out;
    private final boolean terminal = System.console() != null;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong imported = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    /** Records in the file: 0 while counting, -1 when it could not be counted. */
    private final AtomicLong total = new AtomicLong();
    private volatile long resumedAfter;
    private volatile Optional<Long> baseline = Optional.empty();
    private volatile long visible;
    private volatile String retrying;
    private long started;
    private long lastPrinted;
    /** Acknowledged records, processed events and when, a second apart, eight back: the rates are over that window. */
    private final long[] windowCounts = new long[8];
    private final long[] windowVisible = new long[8];
    private final long[] windowTimes = new long[8];
    private int window;

    Progress(final PrintStream out) {
        this.out = out;
    }

    void begin(final long resumed, final Optional<Long> visibleAtStart) {
        this.resumedAfter = resumed;
        this.baseline = visibleAtStart;
        this.started = System.nanoTime();
        acknowledged.set(resumed);
        sent.set(resumed);
        if (resumed > 0) {
            out.printf(Locale.ROOT, "resuming after the %,d records acknowledged before%n", resumed);
        }
    }

    void total(final long records) {
        total.set(records);
    }

    /** Records sent (or set aside as not events) and waiting for Eddy's acknowledgement. */
    void sent(final long records) {
        sent.addAndGet(records);
    }

    void acknowledged(final long records, final long events, final long refused) {
        acknowledged.addAndGet(records);
        imported.addAndGet(events);
        rejected.addAndGet(refused);
        retrying = null;
    }

    void retrying(final String failure) {
        retrying = failure;
    }

    void visible(final long count) {
        visible = count;
    }

    long importedThisRun() {
        return imported.get();
    }

    long rejectedThisRun() {
        return rejected.get();
    }

    /** Draws the line (always when {@code last}, then ends it). */
    synchronized void render(final boolean last) {
        final long now = System.nanoTime();
        if (!last && !terminal && now - lastPrinted < LOG_EVERY_NANOS) {
            return;
        }
        lastPrinted = now;
        final long done = acknowledged.get();
        final long all = total.get();
        final long processed = baseline.map(b -> Math.max(0, visible - b)).orElse(0L);
        if (window == 0 || now - windowTimes[(window - 1) % windowTimes.length] >= 1_000_000_000L) {
            windowCounts[window % windowCounts.length] = done;
            windowVisible[window % windowVisible.length] = processed;
            windowTimes[window % windowTimes.length] = now;
            window++;
        }
        final int oldest = window < windowCounts.length ? 0 : window % windowCounts.length;
        final double seconds = (now - windowTimes[oldest]) / 1e9;
        final double elapsed = Math.max((now - started) / 1e9, 1e-3);
        final double rate = seconds > 0.5 ? (done - windowCounts[oldest]) / seconds : (done - resumedAfter) / elapsed;
        final double processedRate = seconds > 0.5 ? (processed - windowVisible[oldest]) / seconds : processed / elapsed;
        final StringBuilder line = new StringBuilder();
        if (all > 0) {
            final double fraction = Math.min(1.0, (double) done / all);
            final int filled = (int) Math.round(fraction * BAR);
            line.append('[').append("#".repeat(filled)).append(".".repeat(BAR - filled)).append("] ")
                    .append(String.format(Locale.ROOT, "%5.1f%%  ", fraction * 100));
        }
        line.append(String.format(Locale.ROOT, "sent %,d  acknowledged %,d", sent.get(), done));
        if (all > 0) {
            line.append(String.format(Locale.ROOT, " of %,d", all));
        }
        if (done < all || all <= 0) {
            line.append(String.format(Locale.ROOT, " (%,.0f/s)", rate));
        }
        if (baseline.isPresent()) {
            line.append(String.format(Locale.ROOT, "  processed %,d (%,.0f/s)", processed, processedRate));
        }
        // Time left: to acknowledge the rest, or, watching, until the topology has processed it all.
        final long left = baseline.isPresent() && all > 0 ? all - resumedAfter - processed : all - done;
        final double leftRate = baseline.isPresent() && all > 0 ? Math.min(processedRate, rate > 0 ? rate : processedRate) : rate;
        if (all > 0 && left > 0 && leftRate > 0) {
            line.append("  ETA ").append(duration(Duration.ofSeconds((long) (left / leftRate))));
        }
        if (retrying != null) {
            line.append("  (retrying: ").append(retrying.length() > 60 ? retrying.substring(0, 60) + "…" : retrying).append(')');
        }
        if (terminal) {
            out.print("\r" + line + "\u001b[K");
            if (last) {
                out.println();
            }
        } else {
            out.println(line);
        }
        out.flush();
    }

    static String duration(final Duration d) {
        final long s = d.toSeconds();
        if (s >= 3600) {
            return String.format(Locale.ROOT, "%dh %02dm", s / 3600, s % 3600 / 60);
        }
        return s >= 60 ? String.format(Locale.ROOT, "%dm %02ds", s / 60, s % 60) : s + "s";
    }
}
