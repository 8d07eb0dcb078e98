package dev.eddy.trends;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.columns.EventBlock;
import dev.eddy.serde.Json;
import java.time.Instant;

/**
 * A property filter applied to a block's rows. A filter that reads one event property (the common case: a browser,
 * a URL, a plan) is decided once per distinct value of that column, and a row is then one array read of its code; any
 * other filter is evaluated row by row over the columns ({@link BlockRows}). Either way, exactly as
 * {@link PropertyFilter#test} answers for each event.
 */
public final class BlockFilter {
    private final EventBlock.Column column;
    private final boolean[] passes;
    private final BlockRows rows;
    private final PropertyFilter filter;
    private final Instant now;

    private BlockFilter(final EventBlock.Column column, final boolean[] passes, final BlockRows rows, final PropertyFilter filter,
                        final Instant now) {
        this.column = column;
        this.passes = passes;
        this.rows = rows;
        this.filter = filter;
        this.now = now;
    }

    /**
     * @param others answers person and group properties of the row {@link BlockRows} is at (a filter that reads them
     *               is evaluated row by row)
     */
    public static BlockFilter of(final EventBlock block, final PropertyFilter filter, final PropertyFilter.Source others,
                                 final Instant now) {
        return of(new BlockRows(block, others), filter, now);
    }

    /** A filter over {@code rows}' block; {@link #test} moves the cursor to the row it tests. */
    public static BlockFilter of(final BlockRows rows, final PropertyFilter filter, final Instant now) {
        final EventBlock block = rows.block();
        final java.util.Set<String> keys = filter.eventKeys();
        if (keys.size() == 1 && !filter.readsPersonsOrGroups() && !filter.readsEventName()) {
            final EventBlock.Column column = block.property(keys.iterator().next());
            final String key = keys.iterator().next();
            final boolean[] passes = new boolean[column.size()];
            for (int code = 0; code < passes.length; code++) {
                final ObjectNode only = Json.mapper().createObjectNode();
                if (column.entry(code) != null) {
                    only.set(key, column.entry(code));
                }
                passes[code] = filter.test(PropertyFilter.Source.ofEvent(only), now);
            }
            return new BlockFilter(column, passes, null, filter, now);
        }
        return new BlockFilter(null, null, rows, filter, now);
    }

    /** Whether the filter matches everything (no need to ask per row). */
    public boolean everything() {
        return filter.matchesEverything();
    }

    public boolean test(final int row) {
        if (passes != null) {
            return passes[column.code(row)];
        }
        return filter.test(rows.at(row), now);
    }
}
