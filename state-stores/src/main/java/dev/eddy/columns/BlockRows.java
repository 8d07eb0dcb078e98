package dev.eddy.columns;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.trends.PropertyFilter;
import java.util.HashMap;
import java.util.Map;

/**
 * A cursor over a block's rows that answers property filters ({@link PropertyFilter.Source}) from the columns: each
 * lookup is two array reads, with no JSON parsed. Person and group properties are not in a block; they come from
 * {@code others} (the persons store, a group cache).
 */
public final class BlockRows implements PropertyFilter.Source {
    private final EventBlock block;
    private final PropertyFilter.Source others;
    private final Map<String, EventBlock.Column> columns = new HashMap<>();
    private int row;

    /** @param others answers person and group properties for the current row; its event properties are not asked */
    public BlockRows(final EventBlock block, final PropertyFilter.Source others) {
        this.block = block;
        this.others = others;
    }

    /** Moves to {@code row}. */
    public BlockRows at(final int row) {
        this.row = row;
        return this;
    }

    public int row() {
        return row;
    }

    @Override
    public JsonNode event(final String key) {
        return columns.computeIfAbsent(key, block::property).value(row);
    }

    @Override
    public JsonNode person(final String key) {
        return others.person(key);
    }

    @Override
    public JsonNode group(final int typeIndex, final String key) {
        return others.group(typeIndex, key);
    }
}
