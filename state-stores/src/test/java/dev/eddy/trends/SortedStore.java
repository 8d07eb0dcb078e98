package dev.eddy.trends;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** A store whose ranges follow the keys' serialized order, as RocksDB's do. */
public final class SortedStore<K, V> implements ReadOnlyKeyValueStore<K, V> {
    private final Serde<K> serde;
    private final NavigableMap<Bytes, Map.Entry<K, V>> entries = new TreeMap<>();
    private long read;

    public SortedStore(final Serde<K> serde) {
        this.serde = serde;
    }

    public void put(final K key, final V value) {
        entries.put(bytes(key), Map.entry(key, value));
    }

    public void delete(final K key) {
        entries.remove(bytes(key));
    }

    /** How many entries the iterators have returned so far. */
    public long entriesRead() {
        return read;
    }

    private Bytes bytes(final K key) {
        return Bytes.wrap(serde.serializer().serialize("t", key));
    }

    @Override
    public V get(final K key) {
        final Map.Entry<K, V> entry = entries.get(bytes(key));
        return entry == null ? null : entry.getValue();
    }

    @Override
    public KeyValueIterator<K, V> range(final K from, final K to) {
        return iterator(entries.subMap(bytes(from), true, bytes(to), true).values().iterator());
    }

    @Override
    public KeyValueIterator<K, V> all() {
        return iterator(entries.values().iterator());
    }

    @Override
    public long approximateNumEntries() {
        return entries.size();
    }

    private KeyValueIterator<K, V> iterator(final Iterator<Map.Entry<K, V>> it) {
        return new KeyValueIterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public KeyValue<K, V> next() {
                final Map.Entry<K, V> e = it.next();
                read++;
                return KeyValue.pair(e.getKey(), e.getValue());
            }

            @Override
            public void close() {
            }

            @Override
            public K peekNextKey() {
                throw new UnsupportedOperationException();
            }
        };
    }
}
