package dev.eddy.gateway.dashboards;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A dashboard's tiles calculated side by side, as PostHog refreshes a dashboard: up to {@value #AT_ONCE} at a time,
 * answered in the tiles' order. One after the other, a dashboard took the sum of its tiles' times, with the
 * instance's cores idle between one tile's partitions and the next; a bound keeps one large dashboard from holding
 * every worker while other requests wait.
 */
public final class TileCalculations {
    /** Tiles of one dashboard calculated at once. */
    static final int AT_ONCE = 4;

    private TileCalculations() {
    }

    /**
     * {@code calculate} of every tile, in the tiles' order; fails as soon as one fails (the others' results are
     * dropped).
     */
    public static <T, R> Future<List<R>> each(final List<T> tiles, final Function<T, Future<R>> calculate) {
        if (tiles.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        @SuppressWarnings("unchecked")
        final R[] shown = (R[]) new Object[tiles.size()];
        final AtomicInteger next = new AtomicInteger();
        final List<Future<Void>> lanes = new ArrayList<>();
        for (int lane = 0; lane < Math.min(AT_ONCE, tiles.size()); lane++) {
            lanes.add(lane(tiles, calculate, shown, next));
        }
        return Future.all(lanes).map(done -> new ArrayList<>(Arrays.asList(shown)));
    }

    /** Calculates the next tile not yet taken, then the next, until none is left. */
    private static <T, R> Future<Void> lane(final List<T> tiles, final Function<T, Future<R>> calculate, final R[] shown,
                                            final AtomicInteger next) {
        final int i = next.getAndIncrement();
        if (i >= tiles.size()) {
            return Future.succeededFuture();
        }
        return calculate.apply(tiles.get(i)).compose(result -> {
            shown[i] = result;
            return lane(tiles, calculate, shown, next);
        });
    }
}
