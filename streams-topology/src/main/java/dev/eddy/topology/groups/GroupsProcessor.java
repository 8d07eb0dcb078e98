package dev.eddy.topology.groups;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.groups.GroupSet;
import dev.eddy.groups.GroupState;
import dev.eddy.stores.StoreNames;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The owner of a set of groups (keyed {@code project:type_index:key}): applies each {@code $groupidentify}'s
 * {@code $group_set} (every key set, the latest value wins) and publishes the group's new state to the compacted
 * {@code groups.state} topic, which every instance reads into its global groups store.
 */
public final class GroupsProcessor implements Processor<String, GroupSet, String, GroupState> {
    private ProcessorContext<String, GroupState> context;
    private KeyValueStore<String, GroupState> groups;

    @Override
    public void init(final ProcessorContext<String, GroupState> context) {
        this.context = context;
        this.groups = context.getStateStore(StoreNames.GROUPS);
    }

    @Override
    public void process(final Record<String, GroupSet> record) {
        final GroupSet set = record.value();
        if (set == null) {
            return;
        }
        final String key = GroupState.key(set.projectId(), set.groupTypeIndex(), set.groupKey());
        final GroupState current = groups.get(key);
        final GroupState next;
        if (current == null) {
            next = new GroupState(set.projectId(), set.groupTypeIndex(), set.groupType(), set.groupKey(), set.set(),
                    set.timestamp(), 0);
        } else {
            final ObjectNode properties = current.properties().deepCopy();
            properties.setAll(set.set());
            next = new GroupState(current.projectId(), current.groupTypeIndex(), current.groupType(), current.groupKey(),
                    properties, set.timestamp().isBefore(current.createdAt()) ? set.timestamp() : current.createdAt(),
                    current.version() + 1);
        }
        groups.put(key, next);
        context.forward(record.withKey(key).withValue(next));
    }
}
