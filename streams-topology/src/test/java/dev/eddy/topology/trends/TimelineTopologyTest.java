package dev.eddy.topology.trends;

import static dev.eddy.topology.TopologyFixture.uuidOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.serde.Json;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.topology.TopologyFixture;
import dev.eddy.topology.TopologyTest;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Person timelines through the whole topology: time order, merges moving events, late events following. */
class TimelineTopologyTest extends TopologyTest {
    @Override
    protected Map<String, String> env() {
        return Map.of("EDDY_STREAMS_DEDUP_RETENTION", "1h");
    }

    @Test
    void aPersonsEventsAreKeptInEventTimeOrderWithTheirProperties() throws java.io.IOException {
        final CapturedEvent first = t.send("alice", "$pageview", "{\"$current_url\":\"https://a.test/\",\"$groups\":{}}");
        final CapturedEvent second = t.send("alice", "signed up", "{\"plan\":\"pro\"}");
        // A historical event from long before, delivered last.
        final CapturedEvent old = new CapturedEvent(1, UUID.randomUUID().toString(), TopologyFixture.PROJECT, TopologyFixture.TOKEN,
                "alice", "old visit", TopologyFixture.json("{}"), Instant.parse("2015-03-01T00:00:00Z"), first.now(), null, null, null, null);
        t.sendHistorical(old);

        final List<TimelineEvent> timeline = t.timeline(uuidOf("alice"));
        assertThat(timeline).extracting(TimelineEvent::event).containsExactly("old visit", "$pageview", "signed up");
        assertThat(timeline.get(1).uuid().toString()).isEqualTo(first.uuid());
        assertThat(timeline.get(1).distinctId()).isEqualTo("alice");
        assertThat(timeline.get(1).timeMicros()).isEqualTo(first.timestamp().toEpochMilli() * 1000);
        assertThat(Json.mapper().readTree(timeline.get(2).properties()).get("plan").asText()).isEqualTo("pro");
        assertThat(timeline.get(2).uuid().toString()).isEqualTo(second.uuid());
    }

    @Test
    void identifyingMovesTheAnonymousTimelineIntoTheUsers() {
        t.send("anon", "$pageview", "{}");
        t.send("anon", "clicked", "{}");
        t.send("user", "login", "{}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        t.send("anon", "purchased", "{}");

        assertThat(t.personOf("anon").uuid()).isEqualTo(uuidOf("user"));
        assertThat(t.timeline(uuidOf("anon"))).as("the merged-away person keeps nothing").isEmpty();
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::event)
                .containsExactly("$pageview", "clicked", "login", "$identify", "purchased");
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::distinctId)
                .containsExactly("anon", "anon", "user", "user", "anon");
    }

    @Test
    void anEventOfAMergedAwayPersonArrivingLateFollowsTheMergeAndDuplicatesCollapse() {
        final CapturedEvent anonEvent = t.send("anon", "$pageview", "{}");
        t.send("user", "login", "{}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        // An event enriched for the anonymous person before the merge, delivered after it (twice).
        final CapturedEvent late = t.event("anon", "late", "{}");
        final EnrichedEvent stale = new EnrichedEvent(EnrichedEvent.VERSION, late, uuidOf("anon"), TopologyFixture.json("{}"),
                late.timestamp(), false, Map.of());
        t.sendEnriched(stale);
        t.sendEnriched(stale);
        t.sendEnriched(t.enrichedOf(anonEvent));

        assertThat(t.timeline(uuidOf("anon"))).isEmpty();
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::event).containsExactly("$pageview", "login", "$identify", "late");
    }

    @Test
    void mergesChainIntoTheLastSurvivor() {
        t.send("a", "first", "{}");
        t.send("b", "second", "{}");
        t.send("c", "third", "{}");
        // b takes a in; then c takes b (and with it a) in.
        t.send("b", "$identify", "{\"$anon_distinct_id\":\"a\"}");
        t.send("c", "$merge_dangerously", "{\"alias\":\"b\"}");

        assertThat(t.personOf("a").uuid()).isEqualTo(uuidOf("c"));
        assertThat(t.timeline(uuidOf("a"))).isEmpty();
        assertThat(t.timeline(uuidOf("b"))).isEmpty();
        assertThat(t.timeline(uuidOf("c"))).extracting(TimelineEvent::event)
                .containsExactly("first", "second", "third", "$identify", "$merge_dangerously");
    }
}
