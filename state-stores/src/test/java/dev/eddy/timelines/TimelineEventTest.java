package dev.eddy.timelines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The timeline event encoding: round trips, and the name read without decoding. */
class TimelineEventTest {
    private static final TimelineEvent EVENT = new TimelineEvent(1_700_000_000_123_456L, UUID.randomUUID(), "päge view",
            "user-1", Map.of(0, "acme", 2, "eu"), "{\"$browser\":\"Chrome\"}".getBytes(StandardCharsets.UTF_8));

    @Test
    void roundTripsThroughItsBytes() {
        final byte[] bytes = EVENT.encode();
        assertThat(TimelineEvent.decode(bytes)).isEqualTo(EVENT);
        assertThat(TimelineEvent.timeOf(bytes)).isEqualTo(1_700_000_000_123_456L);
        assertThatThrownBy(() -> TimelineEvent.decode(java.util.Arrays.copyOf(bytes, 30))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void carriesTheDayItWasStored() {
        final byte[] stored = EVENT.encode(20_419);
        assertThat(TimelineEvent.storedDay(stored)).isEqualTo(20_419);
        assertThat(TimelineEvent.decode(stored)).isEqualTo(EVENT);
        assertThat(TimelineEvent.timeOf(stored)).isEqualTo(1_700_000_000_123_456L);
        assertThat(TimelineEvent.storedDay(EVENT.encode())).isEqualTo(TimelineEvent.NO_STORED_DAY);
        final byte[] moved = TimelineEvent.withStoredDay(stored, 20_500);
        assertThat(TimelineEvent.storedDay(moved)).isEqualTo(20_500);
        assertThat(TimelineEvent.storedDay(stored)).as("the original is left alone").isEqualTo(20_419);
        assertThat(TimelineEvent.decode(moved)).isEqualTo(EVENT);
    }

    /** Version 1, written before the stored day was kept: still read, with no stored day. */
    @Test
    void readsTheFirstVersion() {
        final byte[] current = EVENT.encode(7);
        final byte[] first = java.util.Arrays.copyOf(current, current.length - 4);
        first[0] = 1;
        assertThat(TimelineEvent.decode(first)).isEqualTo(EVENT);
        assertThat(TimelineEvent.storedDay(first)).isEqualTo(TimelineEvent.NO_STORED_DAY);
        assertThat(TimelineEvent.nameIn(first, TimelineEvent.names(List.of("päge view")))).isTrue();
        final byte[] upgraded = TimelineEvent.withStoredDay(first, 9);
        assertThat(upgraded[0]).isEqualTo((byte) 2);
        assertThat(TimelineEvent.storedDay(upgraded)).isEqualTo(9);
        assertThat(TimelineEvent.decode(upgraded)).isEqualTo(EVENT);
        first[0] = 3;
        assertThatThrownBy(() -> TimelineEvent.decode(first)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theNameIsComparedWithoutDecoding() {
        final byte[] bytes = EVENT.encode();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("päge view")))).isTrue();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("signup", "päge view")))).isTrue();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("päge", "page view", "päge view!")))).isFalse();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of()))).isFalse();
        assertThat(TimelineEvent.nameIn(new byte[] {1, 2, 3}, TimelineEvent.names(List.of("x")))).as("too short to hold a name").isFalse();
    }
}
