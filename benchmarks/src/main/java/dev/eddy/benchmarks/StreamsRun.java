package dev.eddy.benchmarks;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;

/**
 * One timed run of a Kafka Streams app over a known number of records: started, timed from RUNNING until {@code done}
 * counts them all (a count standing still for the patience fails the run), with its progress every 10 s, the CPU it
 * and the local broker used per record, and the rate of its second half (the JIT warm, every task open); then closed.
 */
final class StreamsRun {
    /**
     * @param seconds        from RUNNING until every record was done
     * @param secondHalfRate records per second over the second half
     */
    record Result(double seconds, double secondHalfRate) {
    }

    private StreamsRun() {
    }

    /**
     * @param done  how many records are done so far (called about every 200 ms; it waits itself)
     * @param atEnd what to read from the app once every record is done, before it closes
     */
    static Result until(final String name, final KafkaStreams streams, final long total, final ToLongFunction<KafkaStreams> done,
                        final Duration patience, final Consumer<KafkaStreams> atEnd) {
        final AtomicLong runningAt = new AtomicLong();
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                runningAt.compareAndSet(0, System.nanoTime());
            }
        });
        final ProcessCpu cpu = ProcessCpu.appAndBroker();
        final ProcessCpu.Snapshot cpuBefore = cpu.take();
        streams.start();
        final Stall stall = new Stall(name, total, patience);
        long seen = 0;
        long lastReport = System.nanoTime();
        long halfSeen = 0;
        long halfAt = 0;
        while (seen < total) {
            seen = done.applyAsLong(streams);
            stall.saw(seen);
            if (halfAt == 0 && seen >= total / 2) {
                halfSeen = seen;
                halfAt = System.nanoTime();
            }
            if (System.nanoTime() - lastReport > 10_000_000_000L) {
                System.out.printf(Locale.ROOT, "  %s: %,d of %,d%n", name, seen, total);
                lastReport = System.nanoTime();
            }
        }
        final long end = System.nanoTime();
        System.out.printf(Locale.ROOT, "%s: %s%n", name, ProcessCpu.perEvent(cpuBefore, cpu.take(), total));
        atEnd.accept(streams);
        streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30)));
        final Result result = new Result((end - runningAt.get()) / 1e9, (total - halfSeen) / ((end - halfAt) / 1e9));
        System.out.printf(Locale.ROOT, "%s: %,d records in %.1f s; the second half at %,.0f records/s%n", name, total,
                result.seconds(), result.secondHalfRate());
        return result;
    }
}
