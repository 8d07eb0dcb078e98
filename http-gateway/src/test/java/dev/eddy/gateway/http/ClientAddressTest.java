package dev.eddy.gateway.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The client address PostHog attributes a request to, for {@code $ip} and the {@code $geoip_*} properties. */
class ClientAddressTest {

    @Test
    void clientIpIsTheFirstForwardedAddress() {
        assertThat(ClientAddress.of("10.0.0.2", "203.0.113.7")).isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of("10.0.0.2", "203.0.113.7, 198.51.100.1, 10.0.0.1")).isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of("10.0.0.2", "203.0.113.7,198.51.100.1")).isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of("10.0.0.2", "  203.0.113.7  ,198.51.100.1")).isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of(null, "203.0.113.7")).isEqualTo("203.0.113.7");
    }

    @Test
    void clientIpStripsPortsButKeepsIpv6() {
        assertThat(ClientAddress.of(null, "203.0.113.7:54321")).as("Azure's gateway adds the port").isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of(null, "203.0.113.7:54321, 10.0.0.1")).isEqualTo("203.0.113.7");
        assertThat(ClientAddress.of(null, "2001:db8::1")).isEqualTo("2001:db8::1");
        assertThat(ClientAddress.of(null, "2001:db8::1, 10.0.0.1")).isEqualTo("2001:db8::1");
        assertThat(ClientAddress.of(null, "::ffff:203.0.113.7")).isEqualTo("::ffff:203.0.113.7");
        assertThat(ClientAddress.of(null, "[2001:db8::1]:443")).isEqualTo("2001:db8::1");
        assertThat(ClientAddress.of(null, "[2001:db8::1]")).isEqualTo("2001:db8::1");
        assertThat(ClientAddress.of("198.51.100.9:8000", null)).isEqualTo("198.51.100.9");
        assertThat(ClientAddress.of("0:0:0:0:0:0:0:1", null)).as("Vert.x's form of ::1").isEqualTo("0:0:0:0:0:0:0:1");
    }

    @Test
    void clientIpFallsBackToTheSocketWhenTheHeaderIsBlank() {
        assertThat(ClientAddress.of("198.51.100.9", null)).isEqualTo("198.51.100.9");
        assertThat(ClientAddress.of("198.51.100.9", "")).isEqualTo("198.51.100.9");
        assertThat(ClientAddress.of("198.51.100.9", "   ")).isEqualTo("198.51.100.9");
        assertThat(ClientAddress.of("198.51.100.9", " , 203.0.113.7")).as("empty first entry").isEqualTo("198.51.100.9");
        assertThat(ClientAddress.of(null, null)).isNull();
        assertThat(ClientAddress.of(" ", "")).isNull();
    }
}
