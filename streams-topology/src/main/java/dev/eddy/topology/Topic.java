package dev.eddy.topology;

import org.apache.kafka.common.serialization.Serde;

/**
 * A Kafka topic with the serdes of its records: the one place a topic's name and format are tied together.
 *
 * @param name       full topic name, prefix included
 * @param keySerde   key format
 * @param valueSerde value format
 * @param compacted  whether the topic keeps only the latest value per key
 */
public record Topic<K, V>(String name, Serde<K> keySerde, Serde<V> valueSerde, boolean compacted) {
}
