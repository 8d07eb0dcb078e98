package dev.eddy.gateway.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TileCalculationsTest {
    @Test
    void tilesAreCalculatedAFewAtATimeAndAnsweredInTheirOrder() {
        final List<Integer> tiles = IntStream.range(0, 10).boxed().toList();
        final List<Promise<String>> running = new ArrayList<>();
        final Future<List<String>> shown = TileCalculations.each(tiles, tile -> {
            final Promise<String> calculation = Promise.promise();
            running.add(calculation);
            return calculation.future();
        });
        assertThat(running).as("started at once").hasSize(TileCalculations.AT_ONCE);
        // Finished out of order: each finished one starts the next tile.
        running.get(2).complete("tile 2");
        running.get(0).complete("tile 0");
        assertThat(running).hasSize(TileCalculations.AT_ONCE + 2);
        for (int i = 0; i < 10; i++) {
            if (!running.get(i).future().isComplete()) {
                running.get(i).complete("tile " + i);
            }
        }
        assertThat(shown.succeeded()).isTrue();
        assertThat(shown.result()).containsExactly("tile 0", "tile 1", "tile 2", "tile 3", "tile 4", "tile 5", "tile 6", "tile 7",
                "tile 8", "tile 9");
    }

    @Test
    void aFailedTileFailsTheWholeAndNoTilesAnswerNothing() {
        final Future<List<String>> failed = TileCalculations.each(List.of(1, 2, 3),
                tile -> tile == 2 ? Future.failedFuture(new IllegalStateException("tile 2 failed")) : Future.succeededFuture("ok"));
        assertThat(failed.failed()).isTrue();
        assertThat(failed.cause()).hasMessage("tile 2 failed");
        assertThat(TileCalculations.<Integer, String>each(List.of(), tile -> Future.succeededFuture("never")).result()).isEmpty();
    }
}
