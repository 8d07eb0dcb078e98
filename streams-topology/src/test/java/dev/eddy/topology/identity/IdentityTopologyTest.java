package dev.eddy.topology.identity;

import static dev.eddy.topology.TopologyFixture.uuidOf;
import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.persons.PersonMerge;
import dev.eddy.persons.PersonState;
import dev.eddy.topology.TopologyFixture;
import dev.eddy.topology.TopologyTest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Identity resolution and PostHog's merge rules, through the whole topology. */
class IdentityTopologyTest extends TopologyTest {
    @Override
    protected Map<String, String> env() {
        return Map.of("EDDY_STREAMS_DEDUP_RETENTION", "1h");
    }

    @Test
    void aNewDistinctIdCreatesAnAnonymousPersonWithPostHogsUuid() {
        final CapturedEvent first = t.send("anon-1", "$pageview", "{\"$set\":{\"plan\":\"free\"}}");

        final PersonState person = t.personOf("anon-1");
        assertThat(person.uuid()).isEqualTo(uuidOf("anon-1"));
        assertThat(person.createdAt()).isEqualTo(first.timestamp());
        assertThat(person.isIdentified()).isFalse();
        assertThat(person.distinctIds()).containsExactly("anon-1");
        assertThat(person.properties().get("plan").asText()).isEqualTo("free");
        assertThat(person.properties().get("$creator_event_uuid").asText()).isEqualTo(first.uuid());
        final EnrichedEvent enriched = t.enrichedOf(first);
        assertThat(enriched.personId()).isEqualTo(uuidOf("anon-1"));
        assertThat(enriched.key()).isEqualTo("1:" + uuidOf("anon-1"));
        assertThat(enriched.personless()).isFalse();
    }

    @Test
    void personUuidIsUuidV5OfProjectAndDistinctIdInPostHogsNamespace() {
        // uuidv5("1:anon-1", 932979b4-65c3-4424-8467-0b66ec27bc22): version 5, stable across instances.
        assertThat(java.util.UUID.fromString(uuidOf("anon-1")).version()).isEqualTo(5);
        assertThat(uuidOf("anon-1")).isEqualTo(dev.eddy.persons.PersonIds.personUuid(1, "anon-1"))
                .isNotEqualTo(dev.eddy.persons.PersonIds.personUuid(2, "anon-1"));
    }

    @Test
    void identifyOfANewUserIdJoinsTheAnonymousPersonWhichSurvives() {
        final CapturedEvent landing = t.send("anon", "$pageview", "{\"$set\":{\"seen\":\"landing\"}}");
        final CapturedEvent identify = t.send("user@x.com", "$identify",
                "{\"$anon_distinct_id\":\"anon\",\"$set\":{\"email\":\"user@x.com\"}}");
        final CapturedEvent after = t.send("user@x.com", "purchase", "{}");

        final PersonState person = t.personOf("user@x.com");
        assertThat(person.uuid()).as("the anonymous person survives").isEqualTo(uuidOf("anon"));
        assertThat(t.personOf("anon")).isEqualTo(person);
        assertThat(person.distinctIds()).containsExactlyInAnyOrder("anon", "user@x.com");
        assertThat(person.isIdentified()).isTrue();
        assertThat(person.properties().get("seen").asText()).isEqualTo("landing");
        assertThat(person.properties().get("email").asText()).isEqualTo("user@x.com");
        assertThat(person.properties().get("$creator_event_uuid").asText()).isEqualTo(landing.uuid());
        assertThat(t.livePersons()).hasSize(1);
        assertThat(t.enrichedOf(after).personId()).isEqualTo(uuidOf("anon"));
        assertThat(t.merges()).extracting(PersonMerge::source, PersonMerge::target)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(uuidOf("user@x.com"), uuidOf("anon")));
        assertThat(t.merges().get(0).timestamp()).isEqualTo(identify.timestamp());
    }

    @Test
    void setOnceAcrossAMergeKeepsTheValueSetFirstInEventOrder() {
        // posthog-js sends $set_once of the initial referrer and URL with every event: the anonymous visit's stay.
        t.send("anon", "$pageview", "{\"$set_once\":{\"$initial_current_url\":\"/a\"}}");
        final CapturedEvent identify = t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\","
                + "\"$set_once\":{\"$initial_current_url\":\"/c\",\"signup\":\"web\"},\"$set\":{\"email\":\"u@x\"}}");
        final CapturedEvent next = t.send("user", "$pageview", "{\"$set_once\":{\"$initial_current_url\":\"/b\"},"
                + "\"$set\":{\"last\":\"/b\"}}");

        final PersonState person = t.personOf("user");
        assertThat(person.uuid()).isEqualTo(uuidOf("anon"));
        assertThat(person.properties().get("$initial_current_url").asText()).isEqualTo("/a");
        assertThat(person.properties().get("signup").asText()).as("the identify's own $set_once, on the merged person")
                .isEqualTo("web");
        assertThat(person.properties().get("email").asText()).isEqualTo("u@x");
        assertThat(person.properties().get("last").asText()).isEqualTo("/b");
        assertThat(t.enrichedOf(identify).personId()).isEqualTo(uuidOf("anon"));
        assertThat(t.enrichedOf(next).personId()).isEqualTo(uuidOf("anon"));
        assertThat(t.driver().getKeyValueStore(dev.eddy.stores.StoreNames.IDENTITY_HOLDS).approximateNumEntries())
                .as("nothing left held").isZero();
    }

    @Test
    void whenBothPersonsExistTheEventsPersonWinsTheMergeThenTheIdentifysUpdatesApply() {
        t.send("anon", "$pageview", "{\"$set_once\":{\"first\":\"anon\"},\"$set\":{\"plan\":\"free\",\"seen\":\"anon\"}}");
        t.send("user", "login", "{\"$set_once\":{\"first\":\"user\"},\"$set\":{\"plan\":\"pro\"}}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\",\"$set_once\":{\"first\":\"identify\","
                + "\"seen\":\"identify\"},\"$set\":{\"plan\":\"team\"}}");

        final PersonState person = t.personOf("anon");
        assertThat(person.uuid()).isEqualTo(uuidOf("user"));
        assertThat(person.properties().get("first").asText()).as("{...other, ...mergeInto}").isEqualTo("user");
        assertThat(person.properties().get("seen").asText()).isEqualTo("anon");
        assertThat(person.properties().get("plan").asText()).as("then the identify's $set").isEqualTo("team");
    }

    @Test
    void identifyWithANewAnonymousIdAddsItToTheUsersPerson() {
        t.send("user", "login", "{}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"fresh-anon\"}");
        t.send("fresh-anon", "$pageview", "{}");

        final PersonState person = t.personOf("fresh-anon");
        assertThat(person.uuid()).isEqualTo(uuidOf("user"));
        assertThat(person.distinctIds()).containsExactlyInAnyOrder("user", "fresh-anon");
        assertThat(person.isIdentified()).isTrue();
        assertThat(t.livePersons()).hasSize(1);
        // No person is merged away; only the personless uuid of the new id follows it, for events it sent so.
        assertThat(t.merges()).extracting(m -> m.source() + ">" + m.target())
                .containsExactly(uuidOf("fresh-anon") + ">" + uuidOf("user"));
    }

    @Test
    void identifyWhenNeitherIdExistedCreatesOneIdentifiedPerson() {
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"never-seen\",\"$set\":{\"name\":\"Ada\"}}");

        final PersonState person = t.personOf("never-seen");
        assertThat(person.uuid()).as("the mergeInto id's uuid").isEqualTo(uuidOf("user"));
        assertThat(person.distinctIds()).containsExactlyInAnyOrder("user", "never-seen");
        assertThat(person.isIdentified()).isTrue();
        assertThat(person.properties().get("name").asText()).isEqualTo("Ada");
    }

    @Test
    void identifyOfTwoExistingPersonsMergesTheAnonymousOneIntoTheEventsPerson() {
        final CapturedEvent anonFirst = t.send("anon", "$pageview", "{\"$set\":{\"plan\":\"free\",\"color\":\"red\"}}");
        t.send("user", "login", "{\"$set\":{\"plan\":\"pro\"}}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\",\"$set\":{\"email\":\"u@x\"}}");

        final PersonState person = t.personOf("anon");
        assertThat(person.uuid()).as("mergeInto survives").isEqualTo(uuidOf("user"));
        assertThat(person.properties().get("plan").asText()).as("mergeInto wins a conflict").isEqualTo("pro");
        assertThat(person.properties().get("color").asText()).isEqualTo("red");
        assertThat(person.properties().get("email").asText()).isEqualTo("u@x");
        assertThat(person.createdAt()).as("the earlier creation").isEqualTo(anonFirst.timestamp());
        assertThat(person.isIdentified()).isTrue();
        assertThat(t.livePersons()).hasSize(1);
        assertThat(t.merges()).extracting(PersonMerge::source).containsExactly(uuidOf("anon"));
        assertThat(t.merges().get(0).distinctIds()).containsExactly("anon");
    }

    @Test
    void anAlreadyIdentifiedPersonIsNotMergedByIdentify() {
        t.send("user-a", "$identify", "{\"$anon_distinct_id\":\"anon-a\"}");
        t.send("user-b", "login", "{}");
        t.send("user-b", "$identify", "{\"$anon_distinct_id\":\"user-a\"}");

        assertThat(t.personOf("user-a").uuid()).isEqualTo(uuidOf("user-a"));
        assertThat(t.personOf("user-b").uuid()).isEqualTo(uuidOf("user-b"));
        assertThat(t.personOf("user-b").isIdentified()).as("mergeInto is identified even when refused").isTrue();
        assertThat(t.livePersons()).hasSize(2);
        assertThat(t.warnings("cannot_merge_already_identified")).isEqualTo(1.0);
    }

    @Test
    void mergeDangerouslyMergesEvenAnIdentifiedPerson() {
        t.send("user-a", "$identify", "{\"$anon_distinct_id\":\"anon-a\"}");
        t.send("user-b", "login", "{}");
        t.send("user-b", "$merge_dangerously", "{\"alias\":\"user-a\"}");

        final PersonState person = t.personOf("anon-a");
        assertThat(person.uuid()).isEqualTo(uuidOf("user-b"));
        assertThat(person.distinctIds()).containsExactlyInAnyOrder("user-a", "anon-a", "user-b");
        assertThat(t.livePersons()).hasSize(1);
    }

    @Test
    void createAliasAddsTheAliasToTheEventsPerson() {
        t.send("user", "login", "{}");
        t.send("user", "$create_alias", "{\"alias\":\"crm-42\"}");
        final CapturedEvent viaAlias = t.send("crm-42", "invoice paid", "{\"$set\":{\"mrr\":99}}");

        assertThat(t.enrichedOf(viaAlias).personId()).isEqualTo(uuidOf("user"));
        assertThat(t.personOf("user").properties().get("mrr").asInt()).isEqualTo(99);
        assertThat(t.personOf("user").distinctIds()).containsExactly("user", "crm-42");
    }

    @Test
    void aliasChainsResolveEveryIdToOnePerson() {
        t.send("a", "visit", "{}");
        t.send("a", "$create_alias", "{\"alias\":\"b\"}");
        t.send("b", "$create_alias", "{\"alias\":\"c\"}");
        final CapturedEvent viaC = t.send("c", "visit", "{}");

        assertThat(t.personOf("a")).isEqualTo(t.personOf("b")).isEqualTo(t.personOf("c"));
        assertThat(t.personOf("c").distinctIds()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(t.enrichedOf(viaC).personId()).isEqualTo(uuidOf("a"));
    }

    @Test
    void chainedMergesOfExistingPersonsFollowTheSurvivors() {
        t.send("a", "visit", "{\"$set\":{\"from\":\"a\"}}");
        t.send("b", "visit", "{\"$set\":{\"from\":\"b\"}}");
        t.send("c", "visit", "{\"$set\":{\"from\":\"c\"}}");
        t.send("b", "$merge_dangerously", "{\"alias\":\"a\"}");
        t.send("c", "$merge_dangerously", "{\"alias\":\"b\"}");
        final CapturedEvent viaA = t.send("a", "visit", "{}");

        final PersonState person = t.personOf("a");
        assertThat(person.uuid()).isEqualTo(uuidOf("c"));
        assertThat(person.distinctIds()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(person.properties().get("from").asText()).isEqualTo("c");
        assertThat(t.livePersons()).hasSize(1);
        assertThat(t.enrichedOf(viaA).personId()).isEqualTo(uuidOf("c"));
        assertThat(t.distinctIds().get("1:a")).as("remapped straight to the survivor").isEqualTo(uuidOf("c"));
        assertThat(t.merges()).extracting(PersonMerge::source, PersonMerge::target).containsExactly(
                org.assertj.core.groups.Tuple.tuple(uuidOf("a"), uuidOf("b")),
                org.assertj.core.groups.Tuple.tuple(uuidOf("b"), uuidOf("c")));
    }

    @Test
    void opposingMergesOfTheSameTwoPersonsEndInOnePerson() {
        t.send("a", "visit", "{\"$set\":{\"k\":\"a\"}}");
        t.send("b", "visit", "{\"$set\":{\"k\":\"b\"}}");
        t.send("b", "$merge_dangerously", "{\"alias\":\"a\"}");
        t.send("a", "$merge_dangerously", "{\"alias\":\"b\"}");

        assertThat(t.livePersons()).hasSize(1);
        assertThat(t.personOf("a")).isEqualTo(t.personOf("b"));
        assertThat(t.personOf("a").uuid()).as("the first merge decided").isEqualTo(uuidOf("b"));
        assertThat(t.merges()).hasSize(1);
    }

    @Test
    void mergingTwoIdsOfOnePersonAgainChangesNothing() {
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"anon\"}");
        t.send("anon", "$identify", "{\"$anon_distinct_id\":\"user\"}");

        assertThat(t.livePersons()).hasSize(1);
        // Only the first identify's: the personless uuid of anon, which joined user's person then.
        assertThat(t.merges()).extracting(m -> m.source() + ">" + m.target()).containsExactly(uuidOf("anon") + ">" + uuidOf("user"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"anonymous", "Anonymous", "null", "undefined", "[object Object]", "0", "NaN", "None",
            "'undefined'", "\\\"null\\\"", "guest", "distinct_id", "email", "not_authenticated", "true", "false", "   "})
    void illegalIdsAreNeverMerged(final String illegal) {
        t.send("user", "login", "{}");
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"" + illegal + "\"}");

        assertThat(t.personOf("user").distinctIds()).containsExactly("user");
        assertThat(t.personOf("user").isIdentified()).isFalse();
        assertThat(t.distinctIds().get("1:" + illegal.replace("\\\"", "\""))).isNull();
        assertThat(t.warnings("cannot_merge_with_illegal_distinct_id")).isEqualTo(1.0);
    }

    @Test
    void caseMattersForTheLiteralIllegalIds() {
        t.send("user", "$identify", "{\"$anon_distinct_id\":\"NULL\"}");

        assertThat(t.personOf("NULL")).isEqualTo(t.personOf("user"));
    }

    @Test
    void illegalEventDistinctIdIsNotMergedEither() {
        t.send("anon", "$pageview", "{}");
        t.send("undefined", "$identify", "{\"$anon_distinct_id\":\"anon\"}");

        assertThat(t.personOf("anon").distinctIds()).containsExactly("anon");
        assertThat(t.warnings("cannot_merge_with_illegal_distinct_id")).isEqualTo(1.0);
    }

    @Test
    void identifyWithoutAnonIdOnlyUpdatesPropertiesAndDoesNotIdentify() {
        t.send("user", "$identify", "{\"$set\":{\"email\":\"u@x\"}}");

        assertThat(t.personOf("user").isIdentified()).isFalse();
        assertThat(t.personOf("user").properties().get("email").asText()).isEqualTo("u@x");
    }

    @Test
    void setSetOnceAndUnsetApplyInEventOrder() {
        t.send("u", "e", "{\"$set_once\":{\"a\":1}}");
        t.send("u", "e", "{\"$set\":{\"a\":2,\"b\":1}}");
        t.send("u", "e", "{\"$set_once\":{\"a\":3,\"c\":null}}");
        t.send("u", "e", "{\"$unset\":[\"b\"]}");
        t.send("u", "e", "{\"$set_once\":{\"c\":5},\"$set\":{\"d\":1,\"e\":1}}");
        t.send("u", "e", "{\"$unset\":{\"d\":true}}");

        final PersonState person = t.personOf("u");
        assertThat(person.properties().get("a").asInt()).isEqualTo(2);
        assertThat(person.properties().has("b")).isFalse();
        assertThat(person.properties().get("c").isNull()).as("null counts as set for $set_once").isTrue();
        assertThat(person.properties().has("d")).isFalse();
        assertThat(person.properties().get("e").asInt()).isEqualTo(1);
    }

    @Test
    void setAndSetOnceInOneEventApplySetOnceFirst() {
        t.send("u", "e", "{\"$set_once\":{\"k\":\"once\"},\"$set\":{\"k\":\"set\"}}");

        assertThat(t.personOf("u").properties().get("k").asText()).isEqualTo("set");
    }

    @Test
    void exceptionsAndHeatmapsNeverUpdatePersons() {
        t.send("u", "$exception", "{\"$set\":{\"k\":1}}");
        t.send("u", "$$heatmap", "{\"$set\":{\"k\":2}}");

        assertThat(t.personOf("u").properties().has("k")).isFalse();
    }

    @Test
    void personlessEventsCreateNoPersonAndStillFlowOn() {
        final CapturedEvent event = t.send("visitor", "$pageview",
                "{\"$process_person_profile\":false,\"$set\":{\"k\":1}}");
        t.send("visitor", "$identify", "{\"$process_person_profile\":false,\"$anon_distinct_id\":\"x\"}");

        assertThat(t.distinctIds().get("1:visitor")).isNull();
        assertThat(t.persons().approximateNumEntries()).isZero();
        final EnrichedEvent enriched = t.enrichedOf(event);
        assertThat(enriched.personless()).isTrue();
        assertThat(enriched.personId()).isEqualTo(uuidOf("visitor"));
        assertThat(t.enriched()).hasSize(1);
        assertThat(t.warnings("invalid_event_when_process_person_profile_is_false")).isEqualTo(1.0);
    }

    @Test
    void personlessEventsOfAKnownDistinctIdCarryItsPerson() {
        t.send("user", "login", "{}");
        final CapturedEvent event = t.send("user", "e", "{\"$process_person_profile\":false,\"$set\":{\"k\":1}}");

        assertThat(t.enrichedOf(event).personId()).isEqualTo(uuidOf("user"));
        assertThat(t.personOf("user").properties().has("k")).isFalse();
    }

    @Test
    void onlyABooleanFalseTurnsPersonProcessingOff() {
        t.send("u", "e", "{\"$process_person_profile\":\"false\",\"$set\":{\"k\":1}}");

        assertThat(t.personOf("u").properties().get("k").asInt()).isEqualTo(1);
    }

    @Test
    void aReplayedBatchHasNoSecondEffect() {
        final CapturedEvent once = t.event("u", "counted", "{\"$set\":{\"n\":1}}");
        t.send(once);
        t.send("u", "e", "{\"$set\":{\"n\":2}}");
        t.send(once);
        t.sendOverflow(once);

        assertThat(t.enriched()).filteredOn(e -> e.event().uuid().equals(once.uuid())).hasSize(1);
        assertThat(t.personOf("u").properties().get("n").asInt()).as("the replay did not set n back").isEqualTo(2);
        assertThat(t.warnings("duplicate_event")).isEqualTo(2.0);
    }

    @Test
    void aUuidIsForgottenAfterItsRetention() {
        final CapturedEvent once = t.send("u", "counted", "{}");
        t.advanceClock(Duration.ofHours(3));
        t.send("u", "later", "{}");
        t.send(once);

        assertThat(t.enriched()).filteredOn(e -> e.event().uuid().equals(once.uuid())).hasSize(2);
    }

    @Test
    void historicalEventsOfAnyAgeLandLikeLiveOnes() {
        final CapturedEvent live = t.event("old-user", "signup", "{\"$set\":{\"plan\":\"legacy\"}}");
        final Instant in2015 = Instant.parse("2015-03-01T09:00:00Z");
        final CapturedEvent old = new CapturedEvent(1, live.uuid(), live.projectId(), live.token(), live.distinctId(),
                live.event(), live.properties(), in2015, live.now(), null, null, null, null);
        t.sendHistorical(old);

        final PersonState person = t.personOf("old-user");
        assertThat(person.createdAt()).isEqualTo(in2015);
        assertThat(person.properties().get("plan").asText()).isEqualTo("legacy");
        assertThat(t.enrichedOf(old).event().timestamp()).isEqualTo(in2015);
    }

    @Test
    void overflowEventsAreResolvedByTheirDistinctIdsOwner() {
        t.send("hot", "e", "{\"$set\":{\"k\":1}}");
        final CapturedEvent spilled = t.sendOverflow(t.event("hot", "e", "{\"$set\":{\"k\":2}}"));

        assertThat(t.enrichedOf(spilled).personId()).isEqualTo(uuidOf("hot"));
        assertThat(t.personOf("hot").properties().get("k").asInt()).isEqualTo(2);
        assertThat(t.livePersons()).hasSize(1);
    }
}
