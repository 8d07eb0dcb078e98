package dev.eddy.gateway.geoip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.gateway.http.ClientAddress;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Address parsing and record decoding, without a database file (see {@link GeoIpDatabaseTest}). */
class GeoIpTest {

    @TempDir
    Path dir;

    @Test
    void clientIpPassesGarbageOnAndLookupIgnoresIt() {
        // As PostHog: the header's first entry is taken as it is; the lookup then finds nothing for it.
        assertThat(ClientAddress.of("198.51.100.9", "unknown, 203.0.113.7")).isEqualTo("unknown");
        assertThat(ClientAddress.of("198.51.100.9", "not an ip")).isEqualTo("not an ip");
        assertThat(GeoIp.disabled().lookup(ClientAddress.of(null, "unknown"))).isEmpty();
    }

    @Test
    void parsesOnlyIpLiterals() {
        assertThat(GeoIp.parseAddress("8.8.8.8")).map(InetAddress::getHostAddress).contains("8.8.8.8");
        assertThat(GeoIp.parseAddress(" 8.8.8.8 ")).map(InetAddress::getHostAddress).contains("8.8.8.8");
        assertThat(GeoIp.parseAddress("255.255.255.255")).isPresent();
        assertThat(GeoIp.parseAddress("2001:4860:4860::8888")).map(InetAddress::getHostAddress)
                .contains("2001:4860:4860:0:0:0:0:8888");
        assertThat(GeoIp.parseAddress("::ffff:8.8.8.8")).as("IPv4-mapped is IPv4").map(InetAddress::getHostAddress)
                .contains("8.8.8.8");
        for (final String garbage : Arrays.asList(null, "", "  ", "not_an_ip", "999.999.999.999", "256.1.1.1", "1.2.3",
                "1.2.3.4.5", "010.1.1.1", "1.2.3.4:80", "0x7f.0.0.1", "localhost", "example.com", "cafe", "::g",
                "1:2", "[::1]", "fe80::1%eth0", ".:1", "1.2.3.4 5.6.7.8", "١.٢.٣.٤")) {
            assertThat(GeoIp.parseAddress(garbage)).as("'%s'", garbage).isEmpty();
        }
    }

    @Test
    void privateAndSpecialAddressesAreNotLookedUp() {
        for (final String ip : List.of("127.0.0.1", "127.8.9.10", "::1", "0.0.0.0", "::", "10.1.2.3", "172.16.5.4",
                "172.31.255.255", "192.168.1.1", "169.254.1.1", "100.64.1.1", "100.127.255.255", "224.0.0.1", "fd00::1",
                "fc00::1", "fe80::1", "ff02::1", "::ffff:192.168.1.1", "0.1.2.3")) {
            assertThat(GeoIp.isPublic(GeoIp.parseAddress(ip).orElseThrow())).as(ip).isFalse();
        }
        for (final String ip : List.of("8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1",
                "2001:4860:4860::8888", "2600:6c52:7a00:11c:1b6:b7b0:ea19:6365")) {
            assertThat(GeoIp.isPublic(GeoIp.parseAddress(ip).orElseThrow())).as(ip).isTrue();
        }
    }

    @Test
    void decodesMaxMindsGeoLite2CityLayout() {
        final Map<String, Object> record = Map.of(
                "city", Map.of("geoname_id", 5391959L, "names", Map.of("en", "San Francisco", "de", "San Francisco")),
                "continent", Map.of("code", "NA", "names", Map.of("en", "North America")),
                "country", Map.of("iso_code", "US", "names", Map.of("en", "United States", "fr", "États Unis")),
                "location", Map.of("accuracy_radius", 20, "latitude", 37.7758, "longitude", -122.4128,
                        "time_zone", "America/Los_Angeles", "metro_code", 807),
                "postal", Map.of("code", "94103"),
                "registered_country", Map.of("iso_code", "US"),
                "subdivisions", List.of(
                        Map.of("iso_code", "CA", "names", Map.of("en", "California")),
                        Map.of("iso_code", "SF", "names", Map.of("en", "Second level"))));

        final JsonNode p = GeoIp.properties(record);

        assertThat(p.get("$geoip_city_name").asText()).isEqualTo("San Francisco");
        assertThat(p.get("$geoip_country_name").asText()).isEqualTo("United States");
        assertThat(p.get("$geoip_country_code").asText()).isEqualTo("US");
        assertThat(p.get("$geoip_continent_name").asText()).isEqualTo("North America");
        assertThat(p.get("$geoip_continent_code").asText()).isEqualTo("NA");
        assertThat(p.get("$geoip_postal_code").asText()).isEqualTo("94103");
        assertThat(p.get("$geoip_time_zone").asText()).isEqualTo("America/Los_Angeles");
        assertThat(p.get("$geoip_latitude").asDouble()).isEqualTo(37.7758);
        assertThat(p.get("$geoip_longitude").asDouble()).isEqualTo(-122.4128);
        assertThat(p.get("$geoip_accuracy_radius").asInt()).isEqualTo(20);
        assertThat(p.get("$geoip_subdivision_1_code").asText()).isEqualTo("CA");
        assertThat(p.get("$geoip_subdivision_1_name").asText()).isEqualTo("California");
        assertThat(p.get("$geoip_subdivision_2_code").asText()).isEqualTo("SF");
        assertThat(p.get("$geoip_subdivision_2_name").asText()).isEqualTo("Second level");
        assertThat(p.size()).isEqualTo(14);
    }

    @Test
    void geoLite2RecordsKeepOnlyWhatTheyHave() {
        // A country-level GeoLite2 record (IPs with no city): no city, postal code or subdivisions.
        final JsonNode p = GeoIp.properties(Map.of(
                "continent", Map.of("code", "EU", "names", Map.of("de", "Europa")),
                "country", Map.of("iso_code", "DE", "names", Map.of("en", "Germany")),
                "location", Map.of("latitude", 51.2993, "longitude", 9.491, "time_zone", "Europe/Berlin"),
                "subdivisions", List.of()));

        assertThat(fieldNames(p)).containsExactly("$geoip_country_name", "$geoip_country_code", "$geoip_continent_code",
                "$geoip_latitude", "$geoip_longitude", "$geoip_time_zone");
    }

    @Test
    void decodesTheFlatIpLocationDbLayout() {
        // As DB-IP's file has 8.8.8.8: empty strings where it knows nothing, floats for coordinates.
        final Map<String, Object> record = Map.of("country_code", "US", "state1", "California", "state2", "",
                "city", "Mountain View", "postcode", "", "latitude", 37.422f, "longitude", -122.085f, "timezone", "");

        final JsonNode p = GeoIp.properties(record);

        assertThat(fieldNames(p)).containsExactly("$geoip_city_name", "$geoip_country_name", "$geoip_country_code",
                "$geoip_continent_name", "$geoip_continent_code", "$geoip_latitude", "$geoip_longitude",
                "$geoip_subdivision_1_name");
        assertThat(p.get("$geoip_city_name").asText()).isEqualTo("Mountain View");
        assertThat(p.get("$geoip_country_name").asText()).isEqualTo("United States");
        assertThat(p.get("$geoip_continent_name").asText()).isEqualTo("North America");
        assertThat(p.get("$geoip_continent_code").asText()).isEqualTo("NA");
        assertThat(p.get("$geoip_latitude").asDouble()).as("the float's decimal value").isEqualTo(37.422);
        assertThat(p.get("$geoip_longitude").asDouble()).isEqualTo(-122.085);
        assertThat(p.get("$geoip_subdivision_1_name").asText()).isEqualTo("California");
    }

    @Test
    void flatRecordsWithEverythingAndWithNothing() {
        final JsonNode full = GeoIp.properties(Map.of("country_code", "GB", "state1", "England", "state2", "Kent",
                "city", "Canterbury", "postcode", "CT1", "latitude", 51.28, "longitude", 1.08, "timezone", "Europe/London"));
        assertThat(full.get("$geoip_postal_code").asText()).isEqualTo("CT1");
        assertThat(full.get("$geoip_time_zone").asText()).isEqualTo("Europe/London");
        assertThat(full.get("$geoip_subdivision_2_name").asText()).isEqualTo("Kent");
        assertThat(full.get("$geoip_country_name").asText()).isEqualTo("United Kingdom");
        assertThat(full.get("$geoip_continent_code").asText()).isEqualTo("EU");

        assertThat(GeoIp.properties(Map.of("country_code", "", "city", "", "latitude", "n/a"))).isEmpty();
        assertThat(GeoIp.properties(Map.of())).isEmpty();
        assertThat(GeoIp.properties(Map.of("country_code", "ZZ")).get("$geoip_country_code").asText())
                .as("an unknown code is kept, without names").isEqualTo("ZZ");
        assertThat(GeoIp.properties(Map.of("country_code", "ZZ")).size()).isEqualTo(1);
    }

    @Test
    void countryNamesAreGeoLite2s() {
        assertThat(Countries.name("US")).contains("United States");
        assertThat(Countries.name("gb")).contains("United Kingdom");
        assertThat(Countries.name("DE")).contains("Germany");
        assertThat(Countries.name("HK")).as("not the JDK's 'Hong Kong SAR China'").contains("Hong Kong");
        assertThat(Countries.name("BA")).as("'and', not '&'").contains("Bosnia and Herzegovina");
        assertThat(Countries.name("CI")).contains("Ivory Coast");
        assertThat(Countries.name("TR")).contains("Türkiye");
        assertThat(Countries.name("XK")).contains("Kosovo");
        assertThat(Countries.name("ZZ")).isEmpty();
        assertThat(Countries.name("USA")).isEmpty();
        assertThat(Countries.name("")).isEmpty();
    }

    @Test
    void everyCountryHasAContinent() {
        final List<String> missing = new ArrayList<>();
        for (final String code : Locale.getISOCountries()) {
            if (Countries.continentCode(code).isEmpty() || Countries.name(code).isEmpty()) {
                missing.add(code);
            }
        }
        assertThat(missing).isEmpty();
        assertThat(Countries.continentCode("RU")).contains("EU");
        assertThat(Countries.continentCode("TR")).contains("AS");
        assertThat(Countries.continentCode("EG")).contains("AF");
        assertThat(Countries.continentCode("PA")).contains("NA");
        assertThat(Countries.continentCode("AQ")).contains("AN");
        assertThat(Countries.continentName("OC")).contains("Oceania");
        assertThat(Countries.continentName("SA")).contains("South America");
    }

    @Test
    void disabledFindsNothing() {
        final GeoIp geoIp = GeoIp.disabled();
        assertThat(geoIp.enabled()).isFalse();
        assertThat(geoIp.lookup("8.8.8.8")).isEmpty();
        assertThat(geoIp.flagProperties("8.8.8.8")).isEmpty();
        assertThat(geoIp).hasToString("GeoIp[disabled]");
    }

    @Test
    void openingSomethingThatIsNoDatabaseSaysWhat() throws IOException {
        final Path absent = dir.resolve("absent.mmdb");
        assertThatThrownBy(() -> GeoIp.open(absent)).isInstanceOf(IOException.class)
                .hasMessageContaining(absent.toString()).hasMessageContaining("does not exist");

        final Path empty = Files.createDirectory(dir.resolve("empty"));
        Files.writeString(empty.resolve("README.md"), "no database here");
        assertThatThrownBy(() -> GeoIp.open(empty)).isInstanceOf(IOException.class)
                .hasMessageContaining(empty.toString()).hasMessageContaining("no .mmdb file");

        final Path text = Files.writeString(dir.resolve("city.mmdb"), "not a MaxMind DB");
        assertThatThrownBy(() -> GeoIp.open(text)).isInstanceOf(IOException.class)
                .hasMessageContaining(text.toString()).hasMessageContaining("not a readable MaxMind DB");
    }

    private static List<String> fieldNames(final JsonNode node) {
        final List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
