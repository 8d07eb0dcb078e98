package dev.eddy.trends;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.columns.EventBlock;
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

    /**
     * Rows whose person and group properties are those of the row's person and group keys (the block's columns), as
     * {@code lookup} has them.
     */
    public BlockRows(final EventBlock block, final PropertyLookup lookup) {
        this.block = block;
        this.others = new PropertyFilter.Source() {
            @Override
            public JsonNode event(final String key) {
                return null;
            }

            @Override
            public JsonNode person(final String key) {
                return lookup.person(block.persons().textAt(row)).get(key);
            }

            @Override
            public java.util.List<String> personDistinctIds() {
                return lookup.personDistinctIds(block.persons().textAt(row));
            }

            @Override
            public JsonNode group(final int typeIndex, final String key) {
                if (typeIndex < 0 || typeIndex >= EventBlock.GROUP_TYPES) {
                    return null;
                }
                final JsonNode group = block.group(typeIndex).value(row);
                return group == null ? null : lookup.group(typeIndex, group.asText()).get(key);
            }
        };
    }

    public EventBlock block() {
        return block;
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
    public java.util.List<String> personDistinctIds() {
        return others.personDistinctIds();
    }

    @Override
    public String eventName() {
        final JsonNode name = block.events().value(row);
        return name == null ? null : name.asText();
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
