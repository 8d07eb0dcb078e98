package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.geoip.GeoIp;
import dev.eddy.persons.PropertyUpdates;
import dev.eddy.serde.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * PostHog's GeoIP transformation on single events, over a lookup that knows one address: the record PostHog's own
 * GeoIP tests expect of 89.160.20.129 (GeoLite2's test database: Linköping, no postal code, one subdivision).
 */
class GeoIpTransformationTest {
    private static final String LINKOPING = "89.160.20.129";
    private static final ObjectNode LOCATION = json("""
            {"$geoip_city_name":"Linköping","$geoip_country_name":"Sweden","$geoip_country_code":"SE",
             "$geoip_continent_name":"Europe","$geoip_continent_code":"EU","$geoip_latitude":58.4167,
             "$geoip_longitude":15.6167,"$geoip_accuracy_radius":76,"$geoip_time_zone":"Europe/Stockholm",
             "$geoip_subdivision_1_code":"E","$geoip_subdivision_1_name":"Östergötland County"}""");
    /** PostHog's snapshot of {@code $set} for that record: every key, null where the record has no value. */
    private static final String PERSON_SET = """
            {"$geoip_city_name":"Linköping","$geoip_city_confidence":null,"$geoip_subdivision_2_name":null,
             "$geoip_subdivision_2_code":null,"$geoip_subdivision_1_name":"Östergötland County",
             "$geoip_subdivision_1_code":"E","$geoip_country_name":"Sweden","$geoip_country_code":"SE",
             "$geoip_continent_name":"Europe","$geoip_continent_code":"EU","$geoip_postal_code":null,
             "$geoip_latitude":58.4167,"$geoip_longitude":15.6167,"$geoip_accuracy_radius":76,
             "$geoip_time_zone":"Europe/Stockholm"}""";

    private final List<String> looked = new ArrayList<>();
    private final GeoIpTransformation transformation = new GeoIpTransformation(ip -> {
        looked.add(ip);
        return LINKOPING.equals(ip) ? LOCATION.deepCopy() : Json.mapper().createObjectNode();
    });

    @Test
    void theEventGetsTheLocationAndItsPersonSetAndSetOnce() {
        final ObjectNode properties = json("{\"$current_url\":\"https://x\"}");

        assertThat(transformation.forRequest(LINKOPING).apply(properties).changed()).isTrue();

        final ObjectNode expected = json("{\"$current_url\":\"https://x\"}");
        expected.setAll(LOCATION);
        expected.set("$set", json(PERSON_SET));
        expected.set("$set_once", json(PERSON_SET.replace("\"$geoip_", "\"$initial_geoip_")));
        assertThat(properties).isEqualTo(expected);
    }

    @Test
    void theEventsOwnIpIsLookedUpBeforeTheClientAddress() {
        final ObjectNode sentFromElsewhere = json("{\"$ip\":\"" + LINKOPING + "\"}");
        assertThat(transformation.forRequest("203.0.113.9").apply(sentFromElsewhere).changed()).isTrue();
        assertThat(sentFromElsewhere.get("$geoip_country_code").asText()).isEqualTo("SE");

        final ObjectNode emptyIp = json("{\"$ip\":\"\"}");
        assertThat(transformation.forRequest(LINKOPING).apply(emptyIp).changed()).as("an empty $ip: the client address").isTrue();
        assertThat(emptyIp.get("$geoip_city_name").asText()).isEqualTo("Linköping");

        final ObjectNode unknownIp = json("{\"$ip\":\"203.0.113.9\"}");
        assertThat(transformation.forRequest(LINKOPING).apply(unknownIp).changed()).as("the event's $ip, even when unknown").isFalse();
        assertThat(unknownIp).isEqualTo(json("{\"$ip\":\"203.0.113.9\"}"));
    }

    @Test
    void aTruthyGeoipDisableLeavesTheEventAsSent() {
        for (final String disable : List.of("true", "1", "\"yes\"", "\"false\"", "{}", "[]")) {
            final ObjectNode properties = json("{\"$geoip_disable\":" + disable + "}");
            assertThat(transformation.forRequest(LINKOPING).apply(properties).changed()).as(disable).isFalse();
            assertThat(properties).as(disable).isEqualTo(json("{\"$geoip_disable\":" + disable + "}"));
        }
        for (final String enable : List.of("false", "0", "\"\"", "null")) {
            final ObjectNode properties = json("{\"$geoip_disable\":" + enable + "}");
            assertThat(transformation.forRequest(LINKOPING).apply(properties).changed()).as(enable).isTrue();
            assertThat(properties.get("$geoip_country_code").asText()).as(enable).isEqualTo("SE");
        }
    }

    @Test
    void theLookupReplacesTheEventsOwnValuesOfWhatItFound() {
        final ObjectNode properties = json("""
                {"$geoip_country_code":"FR","$geoip_postal_code":"75001",
                 "$set":{"$geoip_country_code":"FR","$geoip_postal_code":"75001","plan":"pro"},
                 "$set_once":{"$initial_geoip_postal_code":"75001","$initial_referrer":"$direct"}}""");

        assertThat(transformation.forRequest(LINKOPING).apply(properties).changed()).isTrue();

        assertThat(properties.get("$geoip_country_code").asText()).as("found: replaced").isEqualTo("SE");
        assertThat(properties.get("$geoip_postal_code").asText()).as("not found: the event's own").isEqualTo("75001");
        final ObjectNode set = json(PERSON_SET);
        set.put("plan", "pro");
        assertThat(properties.get("$set")).as("every key set, null where not found").isEqualTo(set);
        final ObjectNode setOnce = json(PERSON_SET.replace("\"$geoip_", "\"$initial_geoip_"));
        setOnce.put("$initial_referrer", "$direct");
        assertThat(properties.get("$set_once")).isEqualTo(setOnce);
    }

    @Test
    void anAddressWithoutLocationOrNoAddressChangesNothing() {
        for (final String client : new String[] {"203.0.113.9", "192.168.1.1", null}) {
            final ObjectNode properties = json("{\"a\":1}");
            assertThat(transformation.forRequest(client).apply(properties).changed()).as("%s", client).isFalse();
            assertThat(properties).isEqualTo(json("{\"a\":1}"));
        }
    }

    @Test
    void aSetThatIsNoObjectLeavesTheEventAsSent() {
        for (final String sent : List.of("{\"$set\":\"plan\"}", "{\"$set_once\":[1]}")) {
            final ObjectNode properties = json(sent);
            assertThat(transformation.forRequest(LINKOPING).apply(properties).changed()).as(sent).isFalse();
            assertThat(properties).isEqualTo(json(sent));
        }
        final ObjectNode nullSet = json("{\"$set\":null}");
        assertThat(transformation.forRequest(LINKOPING).apply(nullSet).changed()).as("null: a new object, as PostHog's ??").isTrue();
        assertThat(nullSet.get("$set")).isEqualTo(json(PERSON_SET));
    }

    @Test
    void aRequestLooksItsAddressUpOnce() {
        final GeoIpTransformation.Lookups request = transformation.forRequest(LINKOPING);
        for (int i = 0; i < 3; i++) {
            assertThat(request.apply(json("{}")).changed()).isTrue();
        }
        request.apply(json("{\"$ip\":\"203.0.113.9\"}"));

        assertThat(looked).containsExactly(LINKOPING, "203.0.113.9");
    }

    @Test
    void thePersonFollowsItsLatestLocationAndKeepsItsFirst() {
        final GeoIpTransformation twoPlaces = new GeoIpTransformation(ip -> LINKOPING.equals(ip) ? LOCATION.deepCopy()
                : json("{\"$geoip_country_code\":\"GB\",\"$geoip_city_name\":\"London\"}"));
        final ObjectNode person = json("{\"email\":\"a@example.com\"}");
        final ObjectNode first = json("{}");
        twoPlaces.forRequest(LINKOPING).apply(first);
        PropertyUpdates.apply(person, first);
        final ObjectNode second = json("{}");
        twoPlaces.forRequest("81.2.69.142").apply(second);
        PropertyUpdates.apply(person, second);

        assertThat(person.get("$geoip_country_code").asText()).isEqualTo("GB");
        assertThat(person.get("$geoip_city_name").asText()).isEqualTo("London");
        assertThat(person.get("$geoip_time_zone").isNull()).as("London's record has none: set to null").isTrue();
        assertThat(person.get("$initial_geoip_country_code").asText()).isEqualTo("SE");
        assertThat(person.get("$initial_geoip_time_zone").asText()).isEqualTo("Europe/Stockholm");
        assertThat(person.get("email").asText()).isEqualTo("a@example.com");
    }

    @Test
    void withoutADatabaseNothingIsLookedUp() {
        assertThat(GeoIpTransformation.of(GeoIp.disabled()).forRequest(LINKOPING)).isSameAs(GeoIpTransformation.Lookups.NONE);
        final ObjectNode properties = json("{\"a\":1}");
        assertThat(GeoIpTransformation.Lookups.NONE.apply(properties).changed()).isFalse();
        assertThat(properties).isEqualTo(json("{\"a\":1}"));
    }

    @Test
    void theBytesWrittenAreTheSentOnesWithTheLocationAppendedUnlessItMerged() throws Exception {
        final EventBuilder.RequestContext from = new EventBuilder.RequestContext(7, "phc_t", Instant.now(), Optional.empty(),
                LINKOPING, "http://eddy", Optional.empty(), transformation.forRequest(LINKOPING), false);
        for (final String sent : List.of("{\"a\":1}", "{}", "{ \n}", "{\"a\":{\"b\":[1,{}]} }")) {
            final EventBuilder.Accepted enriched = (EventBuilder.Accepted) EventBuilder.build(raw(sent), from);
            assertThat(enriched.event().properties().get("$geoip_country_code").asText()).isEqualTo("SE");
            assertThat(enriched.rawProperties()).as(sent).isNotNull();
            assertThat(new String(enriched.rawProperties(), StandardCharsets.UTF_8)).as(sent)
                    .startsWith(sent.substring(0, sent.length() - 1));
            assertThat(Json.mapper().readTree(enriched.rawProperties())).as(sent).isEqualTo(enriched.event().properties());
        }

        final EventBuilder.Accepted merged = (EventBuilder.Accepted) EventBuilder.build(raw("{\"$set\":{\"a\":1}}"), from);
        assertThat(merged.rawProperties()).as("merged into the event's $set: written from the tree").isNull();
        assertThat(merged.event().properties().get("$set").get("a").asInt()).isEqualTo(1);

        final EventBuilder.Accepted disabled = (EventBuilder.Accepted) EventBuilder.build(raw("{\"$geoip_disable\":true}"), from);
        assertThat(disabled.rawProperties()).as("no location; the address as PostHog's $ip")
                .asString(StandardCharsets.UTF_8).isEqualTo("{\"$geoip_disable\":true,\"$ip\":\"" + LINKOPING + "\"}");
    }

    private static CaptureRequest.RawEvent raw(final String properties) {
        final ObjectNode event = json("{\"event\":\"e\",\"distinct_id\":\"u\"}");
        event.set("properties", json(properties));
        return new CaptureRequest.RawEvent(event, properties.getBytes(StandardCharsets.UTF_8));
    }

    private static ObjectNode json(final String json) {
        try {
            final JsonNode node = Json.mapper().readTree(json);
            return (ObjectNode) node;
        } catch (final java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
