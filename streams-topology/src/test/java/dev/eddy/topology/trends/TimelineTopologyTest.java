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
        return Map.of("EDDY_STREAMS_DEDUP_RETENTION", "1h", "EDDY_STREAMS_TIMELINE_RETENTION", "2d");
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

    /**
     * posthog-js's default ({@code person_profiles: identified_only}): a visitor's events go without person processing
     * until {@code identify}, then follow the distinct id to the identified person, as PostHog's override of a
     * personless distinct id attributes them.
     */
    @Test
    void personlessEventsBeforeIdentifyJoinTheIdentifiedPersonsTimeline() {
        final String personless = "{\"$process_person_profile\":false}";
        final CapturedEvent view = t.send("visitor", "$pageview", personless);
        t.send("visitor", "clicked", personless);
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"visitor\",\"$set\":{\"email\":\"u@example.com\"}}");
        t.send("visitor", "after", personless);
        // One enriched for the visitor's personless uuid before the identify, delivered after it.
        t.sendEnriched(new EnrichedEvent(EnrichedEvent.VERSION, t.event("visitor", "late", personless), uuidOf("visitor"),
                true, Map.of()));

        assertThat(t.personOf("visitor").uuid()).isEqualTo(uuidOf("user"));
        assertThat(t.timeline(uuidOf("visitor"))).as("nothing stays under the personless uuid").isEmpty();
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::event)
                .containsExactly("$pageview", "clicked", "$identify", "after", "late");
        assertThat(count("$pageview", view.timestamp())).isEqualTo(1);
        assertThat(markedPersons("$pageview", view.timestamp())).containsExactly(uuidOf("user"));
    }

    @Test
    void personlessEventsOfADistinctIdThatNeverJoinsAPersonStayUnderItsPersonlessUuid() {
        t.send("drifter", "$pageview", "{\"$process_person_profile\":false}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"someone-else\"}");

        assertThat(t.timeline(uuidOf("drifter"))).extracting(TimelineEvent::event).containsExactly("$pageview");
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::event).containsExactly("$identify");
    }

    @Test
    void anEventOfAMergedAwayPersonArrivingLateFollowsTheMergeAndDuplicatesCollapse() {
        final CapturedEvent anonEvent = t.send("anon", "$pageview", "{}");
        t.send("user", "login", "{}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        // An event enriched for the anonymous person before the merge, delivered after it (twice).
        final CapturedEvent late = t.event("anon", "late", "{}");
        final EnrichedEvent stale = new EnrichedEvent(EnrichedEvent.VERSION, late, uuidOf("anon"), false, Map.of());
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

    /** The hourly counts count what the timelines hold: a re-delivered event once, a merge moving nothing twice. */
    @Test
    void hourlyCountsFollowTheTimelines() {
        final CapturedEvent view = t.send("anon", "$pageview", "{}");
        t.send("anon", "$pageview", "{}");
        t.send("user", "$pageview", "{}");
        t.sendEnriched(t.enrichedOf(view));
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");

        assertThat(t.timeline(uuidOf("user"))).hasSize(4);
        assertThat(count("$pageview", view.timestamp())).isEqualTo(3);
        assertThat(count("$identify", view.timestamp())).isEqualTo(1);
        // One person is active: the survivor, in the hour of the events, for the event and for all events.
        assertThat(markedPersons("$pageview", view.timestamp())).containsExactly(uuidOf("user"));
        assertThat(markedPersons(dev.eddy.trends.UniqueMarkers.ALL_EVENTS, view.timestamp())).containsExactly(uuidOf("user"));
    }

    /**
     * Retention counts from when Eddy stored an event: a 2015 event imported today stays, and every event goes,
     * with its count, once it has been stored longer than the retention (here 2 days).
     */
    @Test
    void eventsExpireFromTimelinesAndCountsAfterTheRetention() {
        final CapturedEvent now = t.send("alice", "$pageview", "{}");
        final CapturedEvent old = new CapturedEvent(1, UUID.randomUUID().toString(), TopologyFixture.PROJECT, TopologyFixture.TOKEN,
                "alice", "old visit", TopologyFixture.json("{}"), Instant.parse("2015-03-01T00:00:00Z"), now.now(), null, null, null, null);
        t.sendHistorical(old);

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(1));
        assertThat(t.timeline(uuidOf("alice"))).extracting(TimelineEvent::event).containsExactly("old visit", "$pageview");
        assertThat(count("old visit", old.timestamp())).isEqualTo(1);
        assertThat(markedPersons("old visit", old.timestamp())).containsExactly(uuidOf("alice"));

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(2));
        assertThat(t.timeline(uuidOf("alice"))).isEmpty();
        assertThat(count("old visit", old.timestamp())).isZero();
        assertThat(count("$pageview", now.timestamp())).isZero();
        assertThat(markedPersons("$pageview", now.timestamp())).isEmpty();
        assertThat(markedPersons("old visit", old.timestamp())).isEmpty();
    }

    /**
     * Each event's retention counts from the day it was stored, even among one person's events of one day: an event
     * of yesterday that arrives today stays a day longer than yesterday's events, and the person's markers of that
     * day keep its hour alone. An event a merge moves keeps the day it was first stored.
     */
    @Test
    void eachEventExpiresByTheDayItWasStored() {
        final CapturedEvent first = t.send("alice", "first", "{}");
        final CapturedEvent anon = t.send("anon", "$pageview", "{}");
        t.send("user", "login", "{}");
        t.driver().advanceWallClockTime(java.time.Duration.ofDays(1));
        final Instant sameDayLater = first.timestamp().plus(java.time.Duration.ofHours(3));
        t.send(withTime(first, "late", sameDayLater));
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        assertThat(t.timeline(uuidOf("user"))).extracting(TimelineEvent::event).containsExactly("$pageview", "login", "$identify");

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(1));
        assertThat(t.timeline(uuidOf("alice"))).as("within the retention").hasSize(2);

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(1));
        assertThat(t.timeline(uuidOf("alice"))).extracting(TimelineEvent::event).containsExactly("late");
        assertThat(count("first", first.timestamp())).isZero();
        assertThat(count("late", sameDayLater)).isEqualTo(1);
        assertThat(markedPersons("first", first.timestamp())).isEmpty();
        assertThat(markedPersons(dev.eddy.trends.UniqueMarkers.ALL_EVENTS, first.timestamp())).doesNotContain(uuidOf("alice"));
        assertThat(markedPersons(dev.eddy.trends.UniqueMarkers.ALL_EVENTS, sameDayLater)).containsExactly(uuidOf("alice"));
        assertThat(t.timeline(uuidOf("user"))).as("the moved pageview was stored on the first day, as the login")
                .extracting(TimelineEvent::event).containsExactly("$identify");
        assertThat(count("$pageview", anon.timestamp())).isZero();

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(1));
        assertThat(t.timeline(uuidOf("alice"))).isEmpty();
        assertThat(t.timeline(uuidOf("user"))).isEmpty();
        assertThat(markedPersons(dev.eddy.trends.UniqueMarkers.ALL_EVENTS, sameDayLater)).isEmpty();
        final org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> expiry =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.TIMELINE_EXPIRY);
        try (var left = expiry.all()) {
            assertThat(left.hasNext()).as("no index entry outlives its events").isFalse();
        }
    }

    /**
     * An event stored before its stored day was kept (the first encoding, indexed by an entry of its own) still
     * expires, on the day of that entry.
     */
    @Test
    void eventsStoredByTheFirstLayoutStillExpire() {
        final CapturedEvent view = t.send("bob", "$pageview", "{}");
        final org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> timelines =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.EVENT_TIMELINES);
        final org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> expiry =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.TIMELINE_EXPIRY);
        final TimelineEvent old = new TimelineEvent(TimelineEvent.micros(view.timestamp()), UUID.randomUUID(), "legacy", "bob",
                Map.of(), "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        final byte[] current = old.encode(0);
        final byte[] firstVersion = java.util.Arrays.copyOf(current, current.length - 4);
        firstVersion[0] = 1;
        final org.apache.kafka.common.utils.Bytes key = dev.eddy.timelines.TimelineKeys.of(TopologyFixture.PROJECT,
                UUID.fromString(uuidOf("bob")), old.timeMicros(), old.uuid());
        timelines.put(key, firstVersion);
        final long today = Math.floorDiv(view.now().toEpochMilli(), 86_400_000L);
        expiry.put(org.apache.kafka.common.utils.Bytes.wrap(java.nio.ByteBuffer.allocate(8 + key.get().length)
                .putLong(today ^ Long.MIN_VALUE).put(key.get()).array()), new byte[0]);
        assertThat(t.timeline(uuidOf("bob"))).extracting(TimelineEvent::event).containsExactlyInAnyOrder("$pageview", "legacy");

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(3));
        assertThat(t.timeline(uuidOf("bob"))).isEmpty();
    }

    /**
     * The project's change counter moves with every event that enters or leaves a timeline: a new event, an event a
     * merge moves (out of the merged-away person's timeline, into the survivor's), an expired one; a re-delivered
     * event changes nothing. Another project's counter is its own.
     */
    @Test
    void theChangeCounterMovesWhenTheProjectsTimelinesChange() {
        final CapturedEvent view = t.send("anon", "$pageview", "{}");
        assertThat(changes(TopologyFixture.PROJECT)).isEqualTo(1);

        t.sendEnriched(t.enrichedOf(view));
        assertThat(changes(TopologyFixture.PROJECT)).as("a duplicate overwrites itself").isEqualTo(1);

        t.send("user", "login", "{}");
        assertThat(changes(TopologyFixture.PROJECT)).isEqualTo(2);

        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        // The $identify event (1), and the anonymous pageview leaving its timeline (1) and joining the user's (1).
        assertThat(changes(TopologyFixture.PROJECT)).isEqualTo(5);
        assertThat(t.timeline(uuidOf("user"))).hasSize(3);
        assertThat(changes(TopologyFixture.PROJECT + 1)).as("no other project changed").isZero();

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(3));
        assertThat(t.timeline(uuidOf("user"))).isEmpty();
        assertThat(changes(TopologyFixture.PROJECT)).as("three events expired").isEqualTo(8);
    }

    /**
     * The settled-hours counter moves only when a count of an hour before the last two changes: a late or imported
     * event, a merge moving old events (out of one timeline, into another), their expiry. Live events, and events of the
     * hour before (a little late), leave it, so what queries keep of settled hours stays valid while events stream in.
     */
    @Test
    void theSettledHoursCounterMovesOnlyWhenASettledHourChanges() {
        t.send("anon", "$pageview", "{}");
        t.send("user", "$pageview", "{}");
        final CapturedEvent now = t.send("user", "login", "{}");
        final Instant hourBefore = now.timestamp().truncatedTo(java.time.temporal.ChronoUnit.HOURS).minusSeconds(1);
        t.send(withTime(now, "a little late", hourBefore));
        assertThat(settled(TopologyFixture.PROJECT)).as("live events and the hour before").isZero();
        assertThat(count("a little late", hourBefore)).isEqualTo(1);

        final Instant yesterday = now.timestamp().minus(java.time.Duration.ofDays(1));
        t.send(withTime(now, "late", yesterday));
        assertThat(settled(TopologyFixture.PROJECT)).as("an event of yesterday").isEqualTo(1);
        t.sendHistorical(withTime(now, "imported", Instant.parse("2015-03-01T00:00:00Z")));
        assertThat(settled(TopologyFixture.PROJECT)).as("an imported event").isEqualTo(2);

        t.send(withTime(t.send("anon", "$pageview", "{}"), "old visit", yesterday.minusSeconds(60)));
        assertThat(settled(TopologyFixture.PROJECT)).isEqualTo(3);
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        // The anonymous person's old visit leaves its timeline's count and joins the user's: two changes of a settled
        // hour; its two live pageviews move within the current hour.
        assertThat(settled(TopologyFixture.PROJECT)).as("a merge moving a settled event").isEqualTo(5);
        assertThat(settled(TopologyFixture.PROJECT + 1)).as("no other project changed").isZero();

        t.driver().advanceWallClockTime(java.time.Duration.ofDays(3));
        assertThat(t.timeline(uuidOf("user"))).isEmpty();
        // The nine events stored (the user's six, the anonymous person's three), each in a settled hour by then.
        assertThat(settled(TopologyFixture.PROJECT)).as("every event expired").isEqualTo(5 + 9);
    }

    private static CapturedEvent withTime(final CapturedEvent like, final String event, final Instant at) {
        return new CapturedEvent(1, UUID.randomUUID().toString(), TopologyFixture.PROJECT, TopologyFixture.TOKEN, like.distinctId(), event,
                TopologyFixture.json("{}"), at, like.now(), null, null, null, null);
    }

    private long changes(final long project) {
        return counter(dev.eddy.trends.HourlyEventKey.changes(project));
    }

    private long settled(final long project) {
        return counter(dev.eddy.trends.HourlyEventKey.settled(project));
    }

    private long counter(final dev.eddy.trends.HourlyEventKey key) {
        final org.apache.kafka.streams.state.KeyValueStore<dev.eddy.trends.HourlyEventKey, Long> rollups =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.HOURLY_COUNTS);
        final Long value = rollups.get(key);
        return value == null ? 0 : value;
    }

    /** The persons marked active in the hour of {@code at} for {@code event}. */
    private List<String> markedPersons(final String event, final Instant at) {
        final org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> markers =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.UNIQUE_MARKERS);
        final long day = dev.eddy.trends.UniqueMarkers.dayOf(at);
        final List<String> persons = new java.util.ArrayList<>();
        try (var it = markers.range(dev.eddy.trends.UniqueMarkers.dayStart(TopologyFixture.PROJECT, event, day),
                dev.eddy.trends.UniqueMarkers.dayEnd(TopologyFixture.PROJECT, event, day))) {
            it.forEachRemaining(entry -> {
                if ((dev.eddy.trends.UniqueMarkers.hours(entry.value) & dev.eddy.trends.UniqueMarkers.hourBit(at)) != 0) {
                    persons.add(dev.eddy.trends.UniqueMarkers.marker(entry.key).person().toString());
                }
            });
        }
        return persons;
    }

    private long count(final String event, final Instant at) {
        final org.apache.kafka.streams.state.KeyValueStore<dev.eddy.trends.HourlyEventKey, Long> rollups =
                t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.HOURLY_COUNTS);
        final Long count = rollups.get(dev.eddy.trends.HourlyEventKey.of(TopologyFixture.PROJECT, at, event));
        return count == null ? 0 : count;
    }
}
