package dev.eddy.topology.trends;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.timelines.TimelineEvent;
import dev.eddy.timelines.TimelineKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

/** The retention index alone: which events are due, found through one entry per person and stored day. */
class RetentionIndexTest {
    private static final long PROJECT = 5;
    private static final Duration RETENTION = Duration.ofDays(30);
    private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");
    private static final int TODAY = (int) (NOW.getEpochSecond() / 86_400);

    private final KeyValueStore<Bytes, byte[]> expiry = RollupsTest.memory("expiry", Serdes.Bytes(), Serdes.ByteArray());
    private final KeyValueStore<Bytes, byte[]> timelines = RollupsTest.memory("timelines", Serdes.Bytes(), Serdes.ByteArray());
    private final RetentionIndex index = new RetentionIndex(expiry, timelines, RETENTION);
    private final List<Bytes> removed = new ArrayList<>();

    @Test
    void eventsStoredBeforeTheRetentionAreHandedOverOncePersonByPerson() {
        final UUID old = new UUID(1, 1);
        final UUID recent = new UUID(1, 2);
        // Stored 40 days ago: two events of different days (an import of old history), one entry whose span covers both.
        final Bytes a = store(old, Instant.parse("2026-09-01T10:00:00Z"), TODAY - 40);
        final Bytes b = store(old, Instant.parse("2026-09-03T10:00:00Z"), TODAY - 40);
        // The same person's event stored yesterday, on a day inside that span: kept.
        final Bytes c = store(old, Instant.parse("2026-09-02T10:00:00Z"), TODAY - 1);
        final Bytes d = store(recent, Instant.parse("2026-11-27T10:00:00Z"), TODAY - 1);
        assertThat(entries()).as("one entry per person and stored day").isEqualTo(3);

        index.expire(NOW.toEpochMilli(), this::remove);

        assertThat(removed).containsExactlyInAnyOrder(a, b);
        assertThat(entries()).isEqualTo(2);
        removed.clear();
        index.expire(NOW.toEpochMilli(), this::remove);
        assertThat(removed).as("nothing is due twice").isEmpty();
        index.expire(NOW.plus(Duration.ofDays(30)).toEpochMilli(), this::remove);
        assertThat(removed).containsExactlyInAnyOrder(c, d);
        assertThat(entries()).isZero();
    }

    private int remove(final long projectId, final UUID person, final List<Bytes> keys) {
        assertThat(projectId).isEqualTo(PROJECT);
        keys.forEach(key -> {
            assertThat(TimelineKeys.person(key)).isEqualTo(person);
            timelines.delete(key);
        });
        removed.addAll(keys);
        return keys.size();
    }

    private Bytes store(final UUID person, final Instant at, final int storedDay) {
        final TimelineEvent event = new TimelineEvent(TimelineEvent.micros(at), UUID.randomUUID(), "e", "d", Map.of(),
                "{}".getBytes(StandardCharsets.UTF_8));
        final Bytes key = TimelineKeys.of(PROJECT, person, event.timeMicros(), event.uuid());
        timelines.put(key, event.encode(storedDay));
        index.retain(PROJECT, person, storedDay, event.timeMicros());
        return key;
    }

    private int entries() {
        int n = 0;
        try (KeyValueIterator<Bytes, byte[]> it = expiry.all()) {
            while (it.hasNext()) {
                it.next();
                n++;
            }
        }
        return n;
    }
}
