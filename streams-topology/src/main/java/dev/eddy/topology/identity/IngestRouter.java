package dev.eddy.topology.identity;

import dev.eddy.events.CapturedEvent;
import dev.eddy.persons.IdentityCommand;
import dev.eddy.topology.internal.Keys;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Turns captured events into identity commands: keyed events of the ingest and historical topics go straight on
 * to the co-partitioned identity processor; overflow events, which carry no key, get their
 * {@code token:distinct_id} key back and go through {@code identity.commands} to the partition that owns it.
 */
public final class IngestRouter implements Processor<String, CapturedEvent, String, IdentityCommand> {
    private final String historicalTopic;
    private ProcessorContext<String, IdentityCommand> context;

    public IngestRouter(final String historicalTopic) {
        this.historicalTopic = historicalTopic;
    }

    @Override
    public void init(final ProcessorContext<String, IdentityCommand> context) {
        this.context = context;
    }

    @Override
    public void process(final Record<String, CapturedEvent> record) {
        final CapturedEvent event = record.value();
        if (event == null) {
            return;
        }
        final boolean historical = context.recordMetadata().map(m -> historicalTopic.equals(m.topic())).orElse(false);
        context.forward(record.withKey(Keys.distinctIdRoute(event.token(), event.distinctId()))
                .withValue(new IdentityCommand.Ingest(event, historical)));
    }
}
