package dev.eddy.gateway.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class InstancesDirectoryTest {
    private static final long EXPIRY = Instances.EXPIRY.toMillis();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final Instances.Directory directory = Instances.Directory.manual(now::get);

    private void beat(final String address, final boolean ready) {
        directory.heard(address, "{\"address\":\"" + address + "\",\"ready\":" + ready + "}", now.get());
    }

    @Test
    void readyInstancesAreAskedInTurn() {
        beat("10.0.0.2:8000", true);
        beat("10.0.0.1:8000", true);
        beat("10.0.0.3:8000", false);
        final List<String> picked = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            picked.add(directory.pick().orElseThrow());
        }
        assertThat(picked).containsExactly("10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.1:8000", "10.0.0.2:8000");
        assertThat(directory.live()).containsExactly("10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000");
    }

    @Test
    void anInstanceNotReadyIsAskedOnlyWhenNoneIs() {
        beat("10.0.0.3:8000", false);
        assertThat(directory.pick()).contains("10.0.0.3:8000");
        beat("10.0.0.4:8000", true);
        assertThat(directory.pick()).contains("10.0.0.4:8000");
        assertThat(directory.pick()).contains("10.0.0.4:8000");
    }

    @Test
    void anInstanceSilentPastTheExpiryIsDropped() {
        beat("10.0.0.1:8000", true);
        now.addAndGet(EXPIRY);
        assertThat(directory.pick()).contains("10.0.0.1:8000");
        now.addAndGet(1);
        assertThat(directory.pick()).isEmpty();
        assertThat(directory.live()).isEmpty();
        beat("10.0.0.1:8000", true);
        assertThat(directory.live()).containsExactly("10.0.0.1:8000");
    }

    @Test
    void aTombstoneRemovesAtOnce() {
        beat("10.0.0.1:8000", true);
        beat("10.0.0.2:8000", true);
        directory.heard("10.0.0.1:8000", null, now.get());
        assertThat(directory.live()).containsExactly("10.0.0.2:8000");
    }

    @Test
    void historyOlderThanTheExpiryIsIgnored() {
        // A heartbeat of an instance that died long ago, read from the compacted topic at start-up.
        directory.heard("10.0.0.9:8000", "{\"ready\":true}", now.get() - EXPIRY - 1);
        directory.heard("10.0.0.1:8000", "{\"ready\":true}", now.get() - EXPIRY + 100);
        assertThat(directory.live()).containsExactly("10.0.0.1:8000");
    }

    @Test
    void anUnreachableInstanceIsSkippedUntilItsNextHeartbeat() {
        beat("10.0.0.1:8000", true);
        beat("10.0.0.2:8000", true);
        directory.unreachable("10.0.0.1:8000");
        assertThat(List.of(directory.pick(), directory.pick())).containsOnly(Optional.of("10.0.0.2:8000"));
        beat("10.0.0.1:8000", true);
        assertThat(directory.live()).containsExactly("10.0.0.1:8000", "10.0.0.2:8000");
    }

    @Test
    void anUnreadableHeartbeatIsIgnored() {
        directory.heard("10.0.0.1:8000", "{not json", now.get());
        assertThat(directory.live()).isEmpty();
    }
}
