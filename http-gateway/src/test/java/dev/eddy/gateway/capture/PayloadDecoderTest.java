package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.http.ApiError;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class PayloadDecoderTest {
    private static final String JSON = "{\"api_key\":\"phc_x\",\"event\":\"e\",\"distinct_id\":\"ü\"}";
    private final PayloadDecoder decoder = new PayloadDecoder(1024 * 1024);

    @Test
    void plainJsonBodyPassesThrough() {
        assertThat(decode(JSON.getBytes(StandardCharsets.UTF_8), null, false)).isEqualTo(JSON);
    }

    @Test
    void gzipIsRecognisedByParameterHeaderOrMagicBytes() throws IOException {
        final byte[] gz = gzip(JSON.getBytes(StandardCharsets.UTF_8));
        assertThat(decode(gz, "gzip", false)).isEqualTo(JSON);
        assertThat(decode(gz, "gzip-js", false)).isEqualTo(JSON);
        assertThat(decode(gz, "GZIP", false)).isEqualTo(JSON);
        assertThat(decode(gz, null, false)).as("text/plain without a parameter, as the newest posthog-js sends").isEqualTo(JSON);
    }

    @Test
    void formFieldIsBase64OrPlainJson() {
        final String b64 = Base64.getEncoder().encodeToString(JSON.getBytes(StandardCharsets.UTF_8));
        assertThat(decode(b64.getBytes(StandardCharsets.UTF_8), null, true)).isEqualTo(JSON);
        assertThat(decode(b64.replace('+', ' ').getBytes(StandardCharsets.UTF_8), null, true))
                .as("'+' turned into ' ' by form decoding").isEqualTo(JSON);
        assertThat(decode(b64.replace("=", "").getBytes(StandardCharsets.UTF_8), null, true)).as("unpadded").isEqualTo(JSON);
        assertThat(decode(JSON.getBytes(StandardCharsets.UTF_8), null, true)).isEqualTo(JSON);
    }

    @Test
    void lz64MatchesTheReferenceImplementation() {
        // Produced by lz-string 1.5.0's compressToBase64 (npm), the format posthog-js uses.
        assertThat(decode(("N4IgpgbmB2AuIC4QBIAOBDA5pAlmA7iADQgAmOAzrDtAMawD6OpiIArgIzEioBOA9qjC9qYColDJabXrxiMZAG1YALWLFQUEAem1gAHugC2qR"
                + "WAB0tfke0AfkAF8HQA=").getBytes(StandardCharsets.UTF_8), "lz64", true))
                .isEqualTo("{\"event\":\"$pageview\",\"distinct_id\":\"u1\",\"properties\":{\"$current_url\":\"https://example.com/ü\"}}");
        assertThat(decode("NobwRApgbhB2AuYBcYCGYC+Aac06JXW1xgWTUx0lIIowF0g=".getBytes(StandardCharsets.UTF_8), "lz64", false))
                .isEqualTo("[{\"event\":\"a\"},{\"event\":\"a\"},{\"event\":\"a\"},{\"event\":\"a\"}]");
        assertThat(LzString.decompressFromBase64("JcgEiJ7R1bVQeDcSP3QENktW9HNeyoA=", 1000))
                .contains("ééé 漢字 🎉 " + "a".repeat(58));
    }

    @Test
    void undecodableDataIsABadRequest() {
        assertBadRequest(new byte[0], null, false);
        assertBadRequest("!!!not base64!!!".getBytes(StandardCharsets.UTF_8), null, true);
        assertBadRequest("not-gzip".getBytes(StandardCharsets.UTF_8), "gzip", false);
        assertBadRequest(new byte[] {0x1f, (byte) 0x8b, 8, 0, 1, 2, 3}, null, false);
        assertBadRequest("@@@@".getBytes(StandardCharsets.UTF_8), "lz64", true);
        assertBadRequest("@@@@".getBytes(StandardCharsets.UTF_8), "base64", false);
    }

    @Test
    void base64IsReadWhetherAnnouncedOrNot() throws IOException {
        final byte[] b64 = Base64.getEncoder().encode(JSON.getBytes(StandardCharsets.UTF_8));
        // posthog-js without gzip: POST /flags/?v=2&compression=base64 and /e/?compression=base64 with data=<base64>.
        assertThat(decode(b64, "base64", true)).isEqualTo(JSON);
        assertThat(decode(b64, "b64", false)).isEqualTo(JSON);
        assertThat(decode(b64, "BASE64", false)).isEqualTo(JSON);
        // Older SDKs: base64 as a text/plain body, with nothing said.
        assertThat(decode(b64, null, false)).isEqualTo(JSON);
        // gzip inside a base64 field.
        assertThat(decode(Base64.getEncoder().encode(gzip(JSON.getBytes(StandardCharsets.UTF_8))), null, true)).isEqualTo(JSON);
        // Twice base64, which PostHog's capture unwraps too.
        assertThat(decode(Base64.getEncoder().encode(b64), null, false)).isEqualTo(JSON);
    }

    @Test
    void aCompressionPostHogDoesNotKnowIsNoHintAndTheBytesSayWhatTheyAre() throws IOException {
        assertThat(decode(JSON.getBytes(StandardCharsets.UTF_8), "brotli", false)).isEqualTo(JSON);
        assertThat(decode(gzip(JSON.getBytes(StandardCharsets.UTF_8)), "", false)).isEqualTo(JSON);
        assertThat(PayloadDecoder.Compression.firstKnown(Optional.of("brotli"), Optional.empty(), Optional.of("gzip")))
                .contains("gzip");
        assertThat(PayloadDecoder.Compression.of("lz-string")).isEqualTo(PayloadDecoder.Compression.LZ_STRING);
        assertThat(PayloadDecoder.Compression.of("gzip-js")).isEqualTo(PayloadDecoder.Compression.GZIP);
        assertThat(PayloadDecoder.Compression.of(null)).isEqualTo(PayloadDecoder.Compression.NONE);
    }

    @Test
    void whatIsAnnouncedAsGzipAndIsNotIsABadRequestJsonIncluded() {
        assertBadRequest(JSON.getBytes(StandardCharsets.UTF_8), "gzip", false);
        assertBadRequest("not-gzip".getBytes(StandardCharsets.UTF_8), "gzip-js", false);
    }

    @Test
    void compressionBombsAre413() throws IOException {
        final byte[] bomb = gzip(new byte[2 * 1024 * 1024]);
        assertThat(bomb.length).isLessThan(10_000);

        assertThatThrownBy(() -> decode(bomb, null, false)).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.status()).isEqualTo(413));
        assertThatThrownBy(() -> LzString.decompressFromBase64("NobwRApgbhB2AuYBcYCGYC+Aac06JXW1xgWTUx0lIIowF0g=", 10))
                .isInstanceOf(LzString.TooLarge.class);
    }

    private String decode(final byte[] body, final String compression, final boolean field) {
        return new String(decoder.decode(new PayloadDecoder.Raw(body, Optional.ofNullable(compression), field)),
                StandardCharsets.UTF_8);
    }

    private void assertBadRequest(final byte[] body, final String compression, final boolean field) {
        assertThatThrownBy(() -> decode(body, compression, field)).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.status()).isEqualTo(400));
    }

    static byte[] gzip(final byte[] data) throws IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        }
        return out.toByteArray();
    }
}
