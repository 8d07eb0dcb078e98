package dev.eddy.topology;

import dev.eddy.events.CapturedEvent;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.trends.RollupProcessor;
import dev.eddy.trends.HourlyEventKey;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.state.Stores;

/**
 * Eddy's Kafka Streams topology, a pure function of the topic registry: {@code main} and the tests build
 * the same one. Every source, processor and store is named, so a change never renames state.
 */
public final class EddyTopology {
    static final String EVENTS_SOURCE = "events-source";
    static final String ROLLUP_PROCESSOR = "trend-rollup";

    private EddyTopology() {
    }

    public static Topology build(final EddyTopics topics) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(StoreNames.TREND_ROLLUPS), HourlyEventKey.serde(), Serdes.Long()));

        // Live, historical and overflow events are processed alike: replayed history lands in the same stores.
        final KStream<String, CapturedEvent> events = builder.stream(
                topics.eventSources().stream().map(Topic::name).toList(),
                Consumed.with(topics.ingest().keySerde(), topics.ingest().valueSerde()).withName(EVENTS_SOURCE));
        events.process(RollupProcessor::new, Named.as(ROLLUP_PROCESSOR), StoreNames.TREND_ROLLUPS);
        return builder.build();
    }
}
