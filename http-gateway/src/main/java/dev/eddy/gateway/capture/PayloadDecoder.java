package dev.eddy.gateway.capture;

import dev.eddy.gateway.http.ApiError;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.zip.GZIPInputStream;

/**
 * Turns what an SDK sent into JSON bytes, the ways PostHog's capture and flags services accept it (their Rust
 * {@code capture} and {@code feature-flags} decoders): a raw body (JSON, or base64 of JSON, as {@code text/plain} from
 * {@code sendBeacon} too), a form or query field {@code data=} (base64 or JSON), compressed with gzip (announced by
 * {@code compression=gzip}/{@code gzip-js} or {@code Content-Encoding: gzip}, or only by gzip's magic bytes, as the
 * newest posthog-js sends it) or with lz-string ({@code compression=lz64}/{@code lz-string}); {@code compression=base64}
 * (or {@code b64}) announces base64. A compression name PostHog does not know is no hint, as in PostHog's capture: the
 * bytes say what they are. Every expansion is bounded by {@code maxDecodedBytes}.
 */
public final class PayloadDecoder {
    private static final int GZIP_MAGIC_0 = 0x1f;
    private static final int GZIP_MAGIC_1 = 0x8b;

    private final int maxDecodedBytes;

    public PayloadDecoder(final int maxDecodedBytes) {
        this.maxDecodedBytes = maxDecodedBytes;
    }

    /** What a {@code compression} hint announces. */
    public enum Compression {
        GZIP, LZ_STRING, BASE64, NONE;

        /** PostHog's names, in any case; anything else announces nothing. */
        public static Compression of(final String name) {
            return switch (name == null ? "" : name.trim().toLowerCase(Locale.ROOT)) {
                case "gzip", "gzip-js" -> GZIP;
                case "lz64", "lz-string" -> LZ_STRING;
                case "base64", "b64" -> BASE64;
                default -> NONE;
            };
        }

        /**
         * The first candidate that names a compression, as PostHog weighs them: the query's {@code compression}, then
         * the form's, then {@code Content-Encoding}.
         */
        @SafeVarargs
        public static Optional<String> firstKnown(final Optional<String>... candidates) {
            for (final Optional<String> candidate : candidates) {
                if (candidate.isPresent() && of(candidate.get()) != NONE) {
                    return candidate;
                }
            }
            return Optional.empty();
        }
    }

    /**
     * What arrived.
     *
     * @param body            raw body, or the {@code data} field's value when the request was a form or a GET
     * @param compression     the compression hint (see {@link Compression#firstKnown})
     * @param fromField       whether {@code body} came from a {@code data=} field (text, maybe base64)
     */
    public record Raw(byte[] body, Optional<String> compression, boolean fromField) {
    }

    /** The JSON bytes of the payload; a 400 when it cannot be decoded, a 413 when it expands too far. */
    public byte[] decode(final Raw raw) {
        byte[] data = raw.body();
        if (data.length == 0) {
            throw ApiError.badRequest("no_data", "No data found. Make sure to use a POST request with a body.", null);
        }
        final Compression hint = raw.compression().map(Compression::of).orElse(Compression.NONE);
        if (hint == Compression.LZ_STRING && !looksLikeJson(data)) {
            return lz64(data);
        }
        if (!looksLikeJson(data) && !isGzip(data)) {
            // Base64: announced, in a form field (posthog-js's sendBeacon and flags fallback), or recognised by its
            // alphabet in a raw body (older SDKs send it as text/plain without a word).
            final Optional<byte[]> decoded = base64(data);
            if (decoded.isPresent()) {
                data = decoded.get();
            } else if (hint == Compression.BASE64 || raw.fromField()) {
                throw invalid("data is neither JSON nor base64");
            }
        }
        if (isGzip(data)) {
            data = gunzip(data);
        } else if (hint == Compression.GZIP) {
            // PostHog refuses what is announced as gzip and is not, JSON included.
            throw invalid("data is not gzip");
        }
        if (!looksLikeJson(data)) {
            // Some SDKs base64 a payload twice (PostHog's capture unwraps the second layer on its legacy paths).
            data = base64(data).filter(PayloadDecoder::looksLikeJson).orElse(data);
        }
        return data;
    }

    private byte[] lz64(final byte[] data) {
        final String text = new String(data, StandardCharsets.ISO_8859_1).replace(' ', '+').trim();
        try {
            final String json = LzString.decompressFromBase64(text, maxDecodedBytes)
                    .filter(s -> !s.isEmpty())
                    .orElseThrow(() -> invalid("data is not lz-string base64"));
            return json.getBytes(StandardCharsets.UTF_8);
        } catch (final LzString.TooLarge e) {
            throw ApiError.payloadTooLarge();
        }
    }

    private byte[] gunzip(final byte[] data) {
        if (!isGzip(data)) {
            throw invalid("data is not gzip");
        }
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
            final ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(maxDecodedBytes, data.length * 4));
            final byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) > 0) {
                if (out.size() + n > maxDecodedBytes) {
                    throw ApiError.payloadTooLarge();
                }
                out.write(buffer, 0, n);
            }
            return out.toByteArray();
        } catch (final IOException e) {
            throw invalid("Failed to decompress data: " + e.getMessage());
        }
    }

    private static Optional<byte[]> base64(final byte[] data) {
        final String text = new String(data, StandardCharsets.ISO_8859_1).trim().replace(' ', '+');
        for (final Base64.Decoder decoder : new Base64.Decoder[] {Base64.getDecoder(), Base64.getUrlDecoder()}) {
            try {
                return Optional.of(decoder.decode(pad(text)));
            } catch (final IllegalArgumentException e) {
                // try the next alphabet
            }
        }
        return Optional.empty();
    }

    /**
     * The text with exactly the padding base64 wants. Trailing {@code =} are cut in one pass: the regex
     * {@code "=+$"} this replaces retried from every {@code =} of a long run not at the end, quadratic time that
     * held an event loop for minutes on a 1 MB body.
     */
    private static String pad(final String text) {
        int end = text.length();
        while (end > 0 && text.charAt(end - 1) == '=') {
            end--;
        }
        return text.substring(0, end) + "===".substring(0, (4 - end % 4) % 4);
    }

    private static boolean isGzip(final byte[] data) {
        return data.length >= 2 && (data[0] & 0xff) == GZIP_MAGIC_0 && (data[1] & 0xff) == GZIP_MAGIC_1;
    }

    private static boolean looksLikeJson(final byte[] data) {
        for (final byte b : data) {
            if (b == ' ' || b == '\n' || b == '\r' || b == '\t') {
                continue;
            }
            return b == '{' || b == '[';
        }
        return false;
    }

    private static ApiError invalid(final String detail) {
        return ApiError.badRequest("invalid_payload", "Malformed request data: " + detail + ".", null);
    }
}
