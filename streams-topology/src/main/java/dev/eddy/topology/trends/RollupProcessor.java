package dev.eddy.topology.trends;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.stores.StoreNames;
import dev.eddy.trends.HourlyEventKey;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Counts each enriched (so de-duplicated) event into its (project, hour, event) cell of
 * {@link StoreNames#TREND_ROLLUPS}. The cell is local to the partition the event arrived on; queries add the
 * partitions' cells together.
 */
public final class RollupProcessor implements Processor<String, EnrichedEvent, Void, Void> {
    private KeyValueStore<HourlyEventKey, Long> rollups;

    @Override
    public void init(final ProcessorContext<Void, Void> context) {
        rollups = context.getStateStore(StoreNames.TREND_ROLLUPS);
    }

    @Override
    public void process(final Record<String, EnrichedEvent> record) {
        if (record.value() == null) {
            return;
        }
        final CapturedEvent event = record.value().event();
        final HourlyEventKey key = HourlyEventKey.of(event.projectId(), event.timestamp(), event.event());
        final Long current = rollups.get(key);
        rollups.put(key, current == null ? 1L : current + 1L);
    }
}
