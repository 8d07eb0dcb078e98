package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.http.ApiError;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CaptureRequestTest {

    @Test
    void singleEventWithApiKey() {
        final CaptureRequest r = parse("{\"api_key\":\" phc_abc \",\"event\":\"e\",\"distinct_id\":\"d\"}");

        assertThat(r.token()).contains("phc_abc");
        assertThat(r.events()).hasSize(1);
        assertThat(r.historical()).isFalse();
    }

    @Test
    void batchEnvelopeKeepsOrderAndHistoricalFlag() {
        final CaptureRequest r = parse("{\"token\":\"phc_abc\",\"historical_migration\":true,"
                + "\"batch\":[{\"event\":\"a\"},{\"event\":\"b\"},{\"event\":\"c\"}]}");

        assertThat(r.events()).extracting(e -> e.json().get("event").asText()).containsExactly("a", "b", "c");
        assertThat(r.historical()).isTrue();
    }

    @Test
    void bareArrayTakesTheTokenFromTheEvents() {
        final CaptureRequest r = parse("[{\"event\":\"a\",\"properties\":{\"token\":\"phc_in_props\"}},{\"event\":\"b\"}]");

        assertThat(r.token()).contains("phc_in_props");
        assertThat(r.events()).hasSize(2);
    }

    @Test
    void eachEventKeepsItsPropertiesBytesExactlyAsSent() {
        final String first = "{ \"$lib\" : \"wëb\", \"n\": 1.50, \"o\": {\"properties\": [1]} }";
        final CaptureRequest r = parse("{\"api_key\":\"phc_abc\",\"batch\":[{\"event\":\"a\",\"properties\":" + first
                + "},{\"event\":\"b\"},{\"event\":\"c\",\"properties\":{\"x\":1},\"properties\":null}]}");

        assertThat(new String(r.events().get(0).properties(), StandardCharsets.UTF_8)).isEqualTo(first);
        assertThat(r.events().get(0).json().get("properties").get("n").decimalValue()).isEqualByComparingTo("1.5");
        assertThat(r.events().get(1).properties()).as("no properties").isNull();
        assertThat(r.events().get(2).properties()).as("the last duplicate wins, as in the tree").isNull();
        assertThat(new String(parse("{\"api_key\":\"phc_abc\",\"event\":\"e\",\"properties\":{\"k\":\"v\"},\"distinct_id\":\"d\"}")
                .events().get(0).properties(), StandardCharsets.UTF_8)).isEqualTo("{\"k\":\"v\"}");
    }

    @Test
    void noTokenAnywhereIsEmpty() {
        assertThat(parse("{\"event\":\"e\"}").token()).isEmpty();
    }

    @Test
    void malformedBodiesAreBadRequests() {
        for (final String body : new String[] {"", "{", "42", "\"text\"", "{\"batch\":{}}", "[1,2]", "{\"batch\":[\"x\"]}"}) {
            assertThatThrownBy(() -> parse(body)).as(body).isInstanceOfSatisfying(ApiError.class,
                    e -> assertThat(e.status()).isEqualTo(400));
        }
    }

    @Test
    void tooDeeplyNestedBodyIsABadRequest() {
        final String deep = "{\"api_key\":\"phc_a\",\"event\":\"e\",\"properties\":" + "{\"a\":".repeat(200) + "1"
                + "}".repeat(200) + "}";

        assertThatThrownBy(() -> parse(deep)).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.status()).isEqualTo(400));
    }

    @Test
    void tokensPostHogRefusesAre401() {
        for (final String token : new String[] {"", "   ", "phx_personal", "phc_" + "a".repeat(61), "phc_ü", "phc_\\u0000x"}) {
            assertThatThrownBy(() -> parse("{\"api_key\":\"" + token + "\",\"event\":\"e\"}")).as(token)
                    .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(401));
        }
    }

    private static CaptureRequest parse(final String body) {
        return CaptureRequest.parse(body.getBytes(StandardCharsets.UTF_8));
    }
}
