package dev.eddy.stores;

/**
 * Names of Eddy's state stores. A name is part of the changelog topic's name, so renaming one
 * throws away its state: names are fixed here and nowhere else.
 */
public final class StoreNames {
    /** Events per (project, hour, event name), summed across partitions by the query side. */
    public static final String TREND_ROLLUPS = "trend-rollups";

    private StoreNames() {
    }
}
