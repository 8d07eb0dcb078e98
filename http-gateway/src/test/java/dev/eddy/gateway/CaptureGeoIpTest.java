package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.events.EventSerdes;
import dev.eddy.gateway.testing.GeoIpTestDatabase;
import dev.eddy.serde.Json;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostHog's GeoIP transformation at capture, on the route tier with the GeoIP database pinned in scripts/geoip (DB-IP's
 * City Lite, installed with npm as GeoIpDatabaseTest's): what the gateway writes to {@code events.ingest} for an event
 * from a known address, with {@code $geoip_disable}, from an address without location, with its own {@code $ip} or its
 * own {@code $geoip_*} values, in a batch and in a historical migration, and without a database. The values are DB-IP's
 * for these addresses in the pinned release (it has no time zones, postal codes, subdivision codes or accuracy radii).
 */
class CaptureGeoIpTest {
    private static final String STOCKHOLM = "89.160.20.129";
    /** What DB-IP says of {@link #STOCKHOLM}: the event's properties. */
    private static final String STOCKHOLM_EVENT = """
            "$geoip_city_name":"Stockholm","$geoip_country_name":"Sweden","$geoip_country_code":"SE",
            "$geoip_continent_name":"Europe","$geoip_continent_code":"EU","$geoip_latitude":59.3327,
            "$geoip_longitude":18.0656,"$geoip_subdivision_1_name":"Stockholm\"""";
    /** The person's: every key of PostHog's transformation, null where the database has no value. */
    private static final String STOCKHOLM_PERSON = """
            {"$geoip_city_name":"Stockholm","$geoip_city_confidence":null,"$geoip_subdivision_2_name":null,
             "$geoip_subdivision_2_code":null,"$geoip_subdivision_1_name":"Stockholm","$geoip_subdivision_1_code":null,
             "$geoip_country_name":"Sweden","$geoip_country_code":"SE","$geoip_continent_name":"Europe",
             "$geoip_continent_code":"EU","$geoip_postal_code":null,"$geoip_latitude":59.3327,"$geoip_longitude":18.0656,
             "$geoip_accuracy_radius":null,"$geoip_time_zone":null}""";

    private static RouteTier eddy;
    private static RouteTier withoutDatabase;

    @BeforeAll
    static void start() throws Exception {
        final Optional<Path> database = GeoIpTestDatabase.directory();
        assertThat(database).as("the GeoIP database, installed with npm (node and npm are needed to build Eddy too)").isPresent();
        eddy = RouteTier.start(Map.of("EDDY_GEOIP_DATABASE", database.get().toString()));
        withoutDatabase = RouteTier.start(Map.of());
    }

    @AfterAll
    static void stop() {
        for (final RouteTier tier : new RouteTier[] {eddy, withoutDatabase}) {
            if (tier != null) {
                tier.close();
            }
        }
    }

    @Test
    void anEventFromAKnownAddressGetsItsLocationAndSetsItOnItsPerson() {
        final JsonNode written = capture(eddy, STOCKHOLM + ", 10.0.0.1", "{\"$current_url\":\"https://example.com/\"}");

        assertThat(written).isEqualTo(json("{\"$current_url\":\"https://example.com/\"," + STOCKHOLM_EVENT + ",\"$set\":"
                + STOCKHOLM_PERSON + ",\"$set_once\":" + initial(STOCKHOLM_PERSON) + ",\"$ip\":\"" + STOCKHOLM + "\"}"));
    }

    @Test
    void geoipDisableLeavesTheEventAsSent() {
        assertThat(capture(eddy, STOCKHOLM, "{\"$geoip_disable\":true,\"$lib\":\"posthog-node\"}"))
                .isEqualTo(json("{\"$geoip_disable\":true,\"$lib\":\"posthog-node\",\"$ip\":\"" + STOCKHOLM + "\"}"));
    }

    @Test
    void anAddressWithoutLocationAddsNothing() {
        for (final String address : List.of("192.168.1.20", "10.1.2.3", "2001:db8::1", "not-an-address")) {
            assertThat(capture(eddy, address, "{\"a\":1}")).as(address).isEqualTo(json("{\"a\":1,\"$ip\":\"" + address + "\"}"));
        }
        assertThat(capture(eddy, null, "{\"a\":1}")).as("from the socket").isEqualTo(json("{\"a\":1,\"$ip\":\"127.0.0.1\"}"));
    }

    @Test
    void theEventsOwnIpIsLookedUpInsteadOfTheClientAddress() {
        final JsonNode written = capture(eddy, STOCKHOLM, "{\"$ip\":\"8.8.8.8\"}");

        assertThat(written.get("$ip").asText()).isEqualTo("8.8.8.8");
        assertThat(written.get("$geoip_country_code").asText()).isEqualTo("US");
        assertThat(written.get("$geoip_city_name").asText()).as("DB-IP's city of 8.8.8.8").isEqualTo("Mountain View");
        assertThat(written.path("$set").get("$geoip_subdivision_1_name").asText()).isEqualTo("California");
        assertThat(written.path("$set_once").get("$initial_geoip_country_code").asText()).isEqualTo("US");
    }

    @Test
    void theLookupWinsOverTheEventsOwnGeoipValues() {
        final JsonNode written = capture(eddy, STOCKHOLM, """
                {"$geoip_country_code":"FR","$geoip_time_zone":"Europe/Paris",
                 "$set":{"$geoip_country_code":"FR","email":"a@example.com"},"$set_once":{"$initial_geoip_country_code":"FR"}}""");

        final ObjectNode set = json(STOCKHOLM_PERSON);
        set.put("email", "a@example.com");
        assertThat(written).isEqualTo(json("{\"$geoip_country_code\":\"SE\",\"$geoip_time_zone\":\"Europe/Paris\","
                + STOCKHOLM_EVENT + ",\"$set\":" + set + ",\"$set_once\":" + initial(STOCKHOLM_PERSON) + ",\"$ip\":\"" + STOCKHOLM + "\"}"));
    }

    @Test
    void everyEventOfABatchIsLocatedButNotAHistoricalMigrations() {
        final int before = eddy.written("events.ingest").size();
        final String batch = "{\"api_key\":\"" + eddy.projectToken() + "\",\"batch\":[{\"event\":\"a\",\"distinct_id\":\"b1\"},"
                + "{\"event\":\"b\",\"distinct_id\":\"b2\",\"$set\":{\"plan\":\"pro\"}}]}";
        assertThat(send(eddy, "/batch/", STOCKHOLM, batch).statusCode()).isEqualTo(200);
        final List<JsonNode> written = eddy.written("events.ingest").stream().skip(before).map(CaptureGeoIpTest::properties).toList();
        assertThat(written).hasSize(2);
        assertThat(written.get(0)).isEqualTo(json("{" + STOCKHOLM_EVENT + ",\"$set\":" + STOCKHOLM_PERSON + ",\"$set_once\":"
                + initial(STOCKHOLM_PERSON) + ",\"$ip\":\"" + STOCKHOLM + "\"}"));
        final ObjectNode set = json(STOCKHOLM_PERSON);
        set.put("plan", "pro");
        assertThat(written.get(1).get("$set")).as("the top-level $set, folded in first").isEqualTo(set);

        final int historicalBefore = eddy.written("events.historical").size();
        assertThat(send(eddy, "/batch/", STOCKHOLM, batch.replace("\"batch\":", "\"historical_migration\":true,\"batch\":"))
                .statusCode()).isEqualTo(200);
        assertThat(eddy.written("events.historical").stream().skip(historicalBefore).map(CaptureGeoIpTest::properties).toList())
                .as("replayed as first captured").containsExactly(json("{}"), json("{\"$set\":{\"plan\":\"pro\"}}"));
    }

    @Test
    void withoutADatabaseEventsAreWrittenAsSent() {
        assertThat(capture(withoutDatabase, STOCKHOLM, "{\"a\":1}")).as("but PostHog's $ip")
                .isEqualTo(json("{\"a\":1,\"$ip\":\"" + STOCKHOLM + "\"}"));
    }

    /** Captures one event with {@code properties} from {@code forwardedFor} (none: the socket's), and what was written. */
    private static JsonNode capture(final RouteTier tier, final String forwardedFor, final String properties) {
        final int before = tier.written("events.ingest").size();
        final HttpResponse<String> answer = send(tier, "/capture/", forwardedFor, "{\"api_key\":\"" + tier.projectToken()
                + "\",\"event\":\"$pageview\",\"distinct_id\":\"geo\",\"properties\":" + properties + "}");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(tier.written("events.ingest")).hasSize(before + 1);
        return properties(tier.written("events.ingest").get(before));
    }

    private static HttpResponse<String> send(final RouteTier tier, final String path, final String forwardedFor, final String body) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(tier.uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (forwardedFor != null) {
            request.header("X-Forwarded-For", forwardedFor);
        }
        return tier.send(request.build());
    }

    private static JsonNode properties(final org.apache.kafka.clients.producer.ProducerRecord<String, byte[]> record) {
        return EventSerdes.capturedEvent().deserializer().deserialize("t", record.value()).properties();
    }

    private static String initial(final String person) {
        return person.replace("\"$geoip_", "\"$initial_geoip_");
    }

    private static ObjectNode json(final String json) {
        try {
            return (ObjectNode) Json.mapper().readTree(json);
        } catch (final IOException e) {
            throw new AssertionError(e);
        }
    }
}
