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
    void theNameIsComparedWithoutDecoding() {
        final byte[] bytes = EVENT.encode();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("päge view")))).isTrue();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("signup", "päge view")))).isTrue();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of("päge", "page view", "päge view!")))).isFalse();
        assertThat(TimelineEvent.nameIn(bytes, TimelineEvent.names(List.of()))).isFalse();
        assertThat(TimelineEvent.nameIn(new byte[] {1, 2, 3}, TimelineEvent.names(List.of("x")))).as("too short to hold a name").isFalse();
    }
}
