package dev.eddy.gateway.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.gateway.http.ApiError;
import dev.eddy.gateway.testing.FuzzInputs;
import dev.eddy.serde.Json;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The capture pipeline's pure part (decode, parse, build each event, serialize its envelope) on generated hostile
 * input: every request ends in the events it carries or in a documented refusal (400, 401, 413), never another
 * exception; each event is built or dropped exactly as PostHog's rules say. The seed is printed; replay one run
 * with {@code -Deddy.fuzz.seed=N}.
 */
class CaptureFuzzTest {
    private static final int MAX_DECODED = 20 * 1024 * 1024;
    private static final int CASES = 2000;
    private static final List<String> COMPRESSIONS = List.of("", "gzip", "gzip-js", "GZIP", "lz64", "identity", "br", "deflate",
            "gzip, gzip", "x".repeat(300), "\u0000");
    /** Every address somewhere: each event goes through the GeoIP transformation, whatever its properties. */
    private static final EventBuilder.RequestContext CONTEXT = new EventBuilder.RequestContext(1, "phc_fuzz",
            Instant.parse("2026-11-22T12:00:00Z"), Optional.empty(), "127.0.0.1", "http://127.0.0.1", Optional.empty(),
            new GeoIpTransformation(ip -> Json.mapper().createObjectNode().put("$geoip_country_code", "SE")
                    .put("$geoip_latitude", 59.3327)).forRequest("127.0.0.1"), false);
    private final PayloadDecoder decoder = new PayloadDecoder(MAX_DECODED);

    /** What one request came to: the number of events ingested and dropped, or the refusal's status. */
    private record Outcome(int accepted, int dropped, int status, String refusal) {
        Outcome(final int accepted, final int dropped, final int status) {
            this(accepted, dropped, status, "");
        }
    }

    @Test
    void arbitraryBytesUnderAnyCompressionAreEventsOrARefusal() {
        final long seed = FuzzInputs.seed("CaptureFuzzTest.arbitraryBytes");
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES; i++) {
            final byte[] bytes = switch (random.nextInt(4)) {
                case 0 -> FuzzInputs.bytes(random, 300);
                case 1 -> FuzzInputs.gzip(FuzzInputs.bytes(random, 300));
                case 2 -> Base64.getEncoder().encode(FuzzInputs.bytes(random, 300));
                default -> FuzzInputs.withInvalidUtf8(random, request(random, List.of(FuzzInputs.event(random))));
            };
            final String compression = FuzzInputs.pick(random, COMPRESSIONS);
            final PayloadDecoder.Raw raw = new PayloadDecoder.Raw(bytes,
                    compression.isEmpty() ? Optional.empty() : Optional.of(compression), random.nextBoolean());
            assertThat(ingest(raw, "seed " + seed + " case " + i).status()).isIn(200, 400, 401, 413);
        }
    }

    @Test
    void generatedEventsWithWrongTypesAreBuiltOrDroppedAsPostHogSays() {
        final long seed = FuzzInputs.seed("CaptureFuzzTest.wrongTypes");
        final SplittableRandom random = new SplittableRandom(seed);
        int accepted = 0;
        int dropped = 0;
        for (int i = 0; i < CASES; i++) {
            final List<ObjectNode> events = new ArrayList<>();
            for (int n = random.nextInt(1, 6); n > 0; n--) {
                events.add(FuzzInputs.event(random));
            }
            final int expected = (int) events.stream().filter(CaptureFuzzTest::ingestible).count();
            final byte[] json = request(random, events);
            final PayloadDecoder.Raw raw = switch (random.nextInt(3)) {
                case 0 -> new PayloadDecoder.Raw(json, Optional.empty(), false);
                case 1 -> new PayloadDecoder.Raw(FuzzInputs.gzip(json), Optional.of("gzip-js"), false);
                default -> new PayloadDecoder.Raw(Base64.getEncoder().encode(json), Optional.empty(), true);
            };
            final String what = "seed " + seed + " case " + i + ": " + abbreviated(new String(json, StandardCharsets.UTF_8));
            final Outcome outcome = ingest(raw, what);
            if (events.stream().anyMatch(CaptureFuzzTest::hasLoneSurrogateName)) {
                // Jackson, like PostHog's serde_json, refuses an escaped lone surrogate in a field name.
                assertThat(outcome.status()).as(what).isEqualTo(400);
                assertThat(outcome.refusal()).as(what).contains("surrogate");
                continue;
            }
            assertThat(outcome).as(what).isEqualTo(new Outcome(expected, events.size() - expected, 200));
            accepted += outcome.accepted();
            dropped += outcome.dropped();
        }
        // The generator reaches both sides of the rules.
        assertThat(accepted).isGreaterThan(CASES / 10);
        assertThat(dropped).isGreaterThan(CASES / 10);
    }

    @Test
    void nestingPastTheLimitIsABadRequestAndWithinItIsKept() {
        // Depth counts the root object and properties: 62 nested arrays inside properties reach Json.MAX_NESTING_DEPTH.
        final int deepest = Json.MAX_NESTING_DEPTH - 2;
        assertThat(ingest(nested(deepest), "within").accepted()).isEqualTo(1);
        for (final int depth : new int[] {deepest + 1, 1000, 100_000}) {
            assertThat(ingest(nested(depth), "depth " + depth).status()).as("depth " + depth).isEqualTo(400);
        }
    }

    @Test
    void aGzipBombIsRefusedWithoutInflatingIt() {
        final byte[] bomb = FuzzInputs.gzipBomb(64 * 1024 * 1024);
        assertThat(bomb.length).isLessThan(100_000);
        final long allocated = allocatedBy(() -> assertThat(ingest(new PayloadDecoder.Raw(bomb, Optional.empty(), false), "gzip bomb")
                .status()).isEqualTo(413));
        assertThat(allocated).as("bytes allocated refusing 64 MB").isLessThan(4L * MAX_DECODED);
    }

    @Test
    void anLz64BombIsRefusedWithoutExpandingIt() {
        assertThat(LzString.decompressFromBase64(FuzzInputs.lz64Bomb(100), Integer.MAX_VALUE))
                .as("the generator's format: 'a', then 100 repeats of one character more").contains("a".repeat(1 + 100 + 100 * 101 / 2));
        final String bomb = FuzzInputs.lz64Bomb(10_000);
        assertThat(bomb.length()).isLessThan(30_000);
        final long allocated = allocatedBy(() -> assertThat(ingest(new PayloadDecoder.Raw(bomb.getBytes(StandardCharsets.US_ASCII),
                Optional.of("lz64"), true), "lz64 bomb").status()).isEqualTo(413));
        assertThat(allocated).as("bytes allocated refusing 50 million characters").isLessThan(8L * MAX_DECODED);
    }

    @Test
    void aBodyOfPaddingIsRefusedInLinearTime() {
        // Base64's padding was cut by the regex "=+$", which retries from every '=' of a run that is not at the end.
        final byte[] padding = ("=".repeat(1_000_000) + "x").getBytes(StandardCharsets.US_ASCII);
        final long start = System.nanoTime();
        assertThat(ingest(new PayloadDecoder.Raw(padding, Optional.empty(), true), "padding").status()).isEqualTo(400);
        assertThat(ingest(new PayloadDecoder.Raw(padding, Optional.empty(), false), "padding").status()).isEqualTo(400);
        assertThat((System.nanoTime() - start) / 1_000_000).as("milliseconds").isLessThan(2000);
    }

    @Test
    void aBodyInUtf16IsABadRequestAndAUtf8ByteOrderMarkIsRead() {
        final String json = "{\"api_key\":\"phc_fuzz\",\"event\":\"e\",\"distinct_id\":\"d\",\"properties\":{\"a\":1}}";
        final byte[] bom = ("\ufeff" + json).getBytes(StandardCharsets.UTF_8);
        assertThat(new String(CaptureRequest.parse(bom).events().get(0).properties(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
        for (final java.nio.charset.Charset charset : List.of(StandardCharsets.UTF_16LE, StandardCharsets.UTF_16BE,
                java.nio.charset.Charset.forName("UTF-32LE"))) {
            assertThatThrownBy(() -> CaptureRequest.parse(json.getBytes(charset))).as(charset.name())
                    .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(400));
        }
    }

    /** Whether PostHog ingests the event: a non-blank string name and a distinct id that is a non-blank scalar. */
    private static boolean ingestible(final ObjectNode event) {
        final JsonNode name = event.get("event");
        if (name == null || !name.isTextual() || name.asText().isBlank()) {
            return false;
        }
        JsonNode id = event.get("distinct_id");
        if ((id == null || id.isNull()) && event.path("properties").isObject()) {
            id = event.get("properties").get("distinct_id");
        }
        if (id == null || id.isNull() || id.isContainerNode()) {
            return false;
        }
        return !(id.isTextual() ? id.asText() : id.toString()).isBlank();
    }

    private static boolean hasLoneSurrogateName(final JsonNode node) {
        if (node.isObject()) {
            for (final java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                final java.util.Map.Entry<String, JsonNode> field = it.next();
                if (loneSurrogate(field.getKey()) || hasLoneSurrogateName(field.getValue())) {
                    return true;
                }
            }
        } else if (node.isArray()) {
            for (final JsonNode item : node) {
                if (hasLoneSurrogateName(item)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean loneSurrogate(final String text) {
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /** The events as one event, a batch envelope, or (with the key in the first event) a bare array. */
    private static byte[] request(final SplittableRandom random, final List<ObjectNode> events) {
        final JsonNodeFactory nodes = JsonNodeFactory.instance;
        final JsonNode body;
        if (events.size() == 1 && random.nextBoolean()) {
            body = events.get(0).deepCopy().put("api_key", "phc_fuzz");
        } else if (random.nextBoolean()) {
            final ObjectNode envelope = nodes.objectNode().put("api_key", "phc_fuzz");
            envelope.putArray("batch").addAll(events);
            body = envelope;
        } else {
            final ArrayNode array = nodes.arrayNode();
            events.forEach(e -> array.add(e.deepCopy()));
            ((ObjectNode) array.get(0)).put("api_key", "phc_fuzz");
            body = array;
        }
        try {
            // Non-ASCII as \\u escapes, as JSON.stringify writes lone surrogates.
            return Json.mapper().writer().with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII).writeValueAsBytes(body);
        } catch (final com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PayloadDecoder.Raw nested(final int depth) {
        final String json = "{\"api_key\":\"phc_fuzz\",\"event\":\"e\",\"distinct_id\":\"d\",\"properties\":{\"deep\":"
                + "[".repeat(depth) + "]".repeat(depth) + "}}";
        return new PayloadDecoder.Raw(json.getBytes(StandardCharsets.UTF_8), Optional.empty(), false);
    }

    /** Decode, parse, build and serialize, as {@link CaptureRoutes} does; a refusal's status, else 200. */
    private Outcome ingest(final PayloadDecoder.Raw raw, final String what) {
        try {
            final CaptureRequest request = CaptureRequest.parse(decoder.decode(raw));
            int accepted = 0;
            for (final CaptureRequest.RawEvent event : request.events()) {
                if (EventBuilder.build(event, CONTEXT) instanceof EventBuilder.Accepted built) {
                    assertThat(built.event().distinctId()).as(what).isNotBlank().hasSizeLessThanOrEqualTo(EventBuilder.MAX_DISTINCT_ID_LENGTH);
                    assertThat(built.event().timestamp()).as(what).isBefore(CONTEXT.now().plus(EventTimestamps.MAX_FUTURE).plusSeconds(1));
                    assertThat(EventProducer.record("t", built.event().partitionKey(), built.event(), built.rawProperties()))
                            .as(what).isNotNull();
                    if (built.rawProperties() != null) {
                        assertThat(Json.mapper().readTree(built.rawProperties())).as(what + ": the bytes written are the properties")
                                .isEqualTo(built.event().properties());
                    }
                    accepted++;
                }
            }
            return new Outcome(accepted, request.events().size() - accepted, 200);
        } catch (final ApiError e) {
            assertThat(e.status()).as(what + " -> " + e.getMessage()).isIn(400, 401, 413);
            assertThat(e.code()).as(what).isNotBlank();
            return new Outcome(0, 0, e.status(), e.getMessage());
        } catch (final RuntimeException | StackOverflowError | java.io.IOException e) {
            throw new AssertionError(what + " threw " + e, e);
        }
    }

    private static String abbreviated(final String text) {
        return text.length() > 600 ? text.substring(0, 600) + "..." : text;
    }

    private static long allocatedBy(final Runnable work) {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final long before = threads.getCurrentThreadAllocatedBytes();
        work.run();
        return threads.getCurrentThreadAllocatedBytes() - before;
    }
}
