package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.eddy.gateway.testing.TestEddy;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Failed authentications are throttled per source address (an Eddy of its own: the block would leak into other tests). */
class AuthThrottlingTest extends RouteTest {

    @Test
    void repeatedFailedAuthenticationsFromOneAddressAreThrottled() {
        int unauthorized = 0;
        HttpResponse<String> last = null;
        for (int i = 0; i < 40; i++) {
            last = eddy.get("/api/projects/", Map.of("Authorization", "Bearer phx_guess" + i));
            if (last.statusCode() == 401) {
                unauthorized++;
            }
        }

        assertThat(unauthorized).isBetween(30, 32);
        assertThat(last.statusCode()).isEqualTo(429);
        assertThat(last.headers().firstValue("Retry-After")).isPresent();
        assertThat(TestEddy.json(last).get("type").asText()).isEqualTo("throttled_error");
        assertThat(eddy.getAuthorized("/api/projects/").statusCode()).as("the address is blocked for every key for a while")
                .isEqualTo(429);
    }

}
