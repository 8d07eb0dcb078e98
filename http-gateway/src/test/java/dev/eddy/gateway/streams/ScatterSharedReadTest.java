package dev.eddy.gateway.streams;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.query.PartitionRead;
import dev.eddy.topology.StreamsApp;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A local read shared by worker threads: every partition read exactly once and merged; answered as soon as the last
 * partition is read, whoever read it (not when every thread has come round); the first failure is the answer.
 */
class ScatterSharedReadTest {
    private static final Vertx VERTX = Vertx.vertx();

    /** Partials are sums; only merging is asked of it here. */
    private static final PartitionRead<Long> SUMS = new PartitionRead<>() {
        @Override
        public String store() {
            return "sums";
        }

        @Override
        public Long read(final StreamsApp app, final List<Integer> partitions, final JsonNode request, final Runnable check) {
            throw new UnsupportedOperationException();
        }

        @Override
        public byte[] encode(final Long partial) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Long decode(final JsonNode request, final byte[] bytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Long merge(final Long into, final Long other) {
            return into + other;
        }
    };

    @AfterAll
    static void close() {
        VERTX.close();
    }

    @Test
    void threadsTakingPartitionsInTurnReadEachOnceAndMergeAll() throws Exception {
        for (int round = 0; round < 50; round++) {
            final AtomicIntegerArray reads = new AtomicIntegerArray(12);
            final Scatter.SharedRead<Long> shared = new Scatter.SharedRead<>(SUMS, 12, VERTX.getOrCreateContext());
            final Thread[] threads = new Thread[3];
            for (int t = 0; t < threads.length; t++) {
                threads[t] = new Thread(() -> shared.readWith(i -> {
                    reads.incrementAndGet(i);
                    return 1L << i;
                }));
                threads[t].start();
            }
            assertThat(await(shared.answer())).isEqualTo((1L << 12) - 1);
            for (final Thread thread : threads) {
                thread.join();
            }
            for (int i = 0; i < 12; i++) {
                assertThat(reads.get(i)).as("partition %d read once", i).isEqualTo(1);
            }
        }
    }

    @Test
    void theAnswerDoesNotWaitForAThreadThatFindsNothingLeft() throws Exception {
        final Scatter.SharedRead<Long> shared = new Scatter.SharedRead<>(SUMS, 5, VERTX.getOrCreateContext());
        shared.readWith(i -> (long) i);
        // The second thread has not come round yet, and the answer is there.
        assertThat(await(shared.answer())).isEqualTo(10L);
        shared.readWith(i -> {
            throw new AssertionError("partition " + i + " read twice");
        });
        assertThat(shared.answer().result()).isEqualTo(10L);
    }

    @Test
    void aFailedPartitionIsTheAnswerAndTheOthersStopTakingPartitions() throws Exception {
        final Scatter.SharedRead<Long> shared = new Scatter.SharedRead<>(SUMS, 6, VERTX.getOrCreateContext());
        final AtomicIntegerArray reads = new AtomicIntegerArray(6);
        shared.readWith(i -> {
            reads.incrementAndGet(i);
            if (i == 2) {
                throw new IllegalStateException("partition 2 moved");
            }
            return 1L;
        });
        shared.readWith(i -> {
            reads.incrementAndGet(i);
            return 1L;
        });
        final Future<Long> answer = shared.answer();
        answer.toCompletionStage().toCompletableFuture().handle((v, e) -> null).get(5, TimeUnit.SECONDS);
        assertThat(answer.failed()).isTrue();
        assertThat(answer.cause()).hasMessage("partition 2 moved");
        assertThat(reads.get(3) + reads.get(4) + reads.get(5)).as("nothing read after the failure").isZero();
    }

    @Test
    void aThreadThatNeverRanFailsTheReadOnce() throws Exception {
        final Scatter.SharedRead<Long> shared = new Scatter.SharedRead<>(SUMS, 4, VERTX.getOrCreateContext());
        shared.fail(new IllegalStateException("worker pool closed"));
        shared.fail(new IllegalStateException("a second failure"));
        shared.readWith(i -> {
            throw new AssertionError("partition " + i + " read after the failure");
        });
        final Future<Long> answer = shared.answer();
        answer.toCompletionStage().toCompletableFuture().handle((v, e) -> null).get(5, TimeUnit.SECONDS);
        assertThat(answer.cause()).hasMessage("worker pool closed");
    }

    private static long await(final Future<Long> answer) throws Exception {
        return answer.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
}
